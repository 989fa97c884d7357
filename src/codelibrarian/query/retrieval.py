"""Stage 1, retrieval: BM25 over the index's FTS5 chunks, plus dense vectors if present.

The two ranked lists are fused with reciprocal rank fusion in integer
arithmetic: a chunk at 1-based rank ``r`` in a list earns
``RRF_SCALE // (RRF_K + r)`` (``RRF_K`` = 60, the usual constant), summed over
the lists it appears in. Ties break by the better single-list rank, then path,
lines and chunk id, so the order is total and needs no float.

The seed's stage is vector-only (``semantic_retrieval``); keyword search is the
backbone here because it needs nothing optional, and vectors join when the
embedding model is installed and capability detection found them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..errors import NotFound
from .base import StageSchemas, Stopwatch
from .embed import DenseIndex
from .schemas import CandidateSetModel, QueryModel
from .scoring import intent_terms
from .types import (
    Candidate,
    CandidateSet,
    LibrarianQuery,
    PipelineContext,
    QueryStore,
    StageEstimate,
    StageEvidence,
    StageResult,
)

__all__ = ["DENSE_WEIGHT_PERMILLE", "RRF_K", "RRF_SCALE", "RetrievalStage", "rrf_fuse"]

RRF_K = 60
RRF_SCALE = 1_000_000
#: how much a dense rank counts against a BM25 rank in the fusion (per mille); half
#: weight did as well or better than full weight on click and httpx (RESULTS.md)
DENSE_WEIGHT_PERMILLE = 500


def rrf_fuse(
    lists: dict[str, list[int]], weights: Mapping[str, int] | None = None
) -> list[tuple[int, int, int]]:
    """Fuse ranked chunk-id lists: ``(chunk_id, fused score, best rank)``, best first.

    ``lists`` maps a list name to chunk ids in rank order; ``weights`` (per mille,
    default 1000) scale a list's contribution: ``weight x (RRF_SCALE // (RRF_K + r))
    // 1000``. Lists are visited in name order; ties break by best single rank,
    then chunk id.
    """
    fused: dict[int, int] = {}
    best: dict[int, int] = {}
    for name in sorted(lists):
        weight = 1000 if weights is None else weights.get(name, 1000)
        for rank, cid in enumerate(lists[name], start=1):
            fused[cid] = fused.get(cid, 0) + weight * (RRF_SCALE // (RRF_K + rank)) // 1000
            best[cid] = min(best.get(cid, rank), rank)
    out = [(cid, score, best[cid]) for cid, score in fused.items()]
    out.sort(key=lambda t: (-t[1], t[2], t[0]))
    return out


@dataclass(slots=True)
class RetrievalStage(StageSchemas):
    """BM25 (+ dense) candidates for the intent, fused by integer RRF."""

    store: QueryStore
    dense: DenseIndex | None = None
    use_bm25: bool = True
    #: the dense list's RRF weight per mille (None: ``DENSE_WEIGHT_PERMILLE``)
    dense_weight: int | None = None
    #: how many hits to ask each retriever for, per requested result
    pool_factor: int = 5
    min_pool: int = 40

    name: str = "retrieval"
    description: str = "Retrieve candidate chunks by BM25 (and dense vectors), fused by RRF"
    cacheable: bool = True

    input_model = QueryModel
    output_model = CandidateSetModel

    def pool(self, query: LibrarianQuery) -> int:
        return max(self.min_pool, query.limit * self.pool_factor)

    def estimate(self, input: LibrarianQuery) -> StageEstimate:
        dense_ms = 5 if self.dense is not None else 0
        return StageEstimate(5 + dense_ms + self.pool(input) // 20, 0, True)

    def passthrough(self, input: LibrarianQuery, context: PipelineContext) -> CandidateSet:
        return CandidateSet(input, ())

    def execute(self, input: LibrarianQuery, context: PipelineContext) -> StageResult[CandidateSet]:
        watch = Stopwatch()
        query = input
        pool = self.pool(query)
        evidence: list[StageEvidence] = []
        warnings: list[str] = []
        lists: dict[str, list[int]] = {}
        meta: dict[int, Candidate] = {}
        bm25_scores: dict[int, int] = {}
        dense_scores: dict[int, int] = {}

        if self.use_bm25:
            # stop words match nearly every chunk: they cost time and add no ranking signal
            terms = intent_terms(query.intent)
            hits = self.store.search(" ".join(terms) if terms else query.intent, pool)
            lists["bm25"] = [h.chunk_id for h in hits]
            for h in hits:
                bm25_scores[h.chunk_id] = h.score
                meta.setdefault(h.chunk_id, Candidate.of_chunk(h, "bm25"))
            evidence.append(
                StageEvidence.of(
                    "retrieval", f"BM25 returned {len(hits)} chunks", hits=len(hits), pool=pool
                )
            )
            if not hits:
                warnings.append("BM25 found nothing for the intent's terms")
        context.progress(self.name, 1, 2, "keyword search done")

        if self.dense is not None:
            pairs = self.dense.search(query.intent, pool)
            ids: list[int] = []
            missing = 0
            for cid, sim in pairs:
                if cid not in meta:
                    try:
                        ch = self.store.chunk(cid)
                    except NotFound:
                        missing += 1  # the vector outlived its chunk (index changed)
                        continue
                    meta[cid] = Candidate.of_chunk(ch, "dense")
                ids.append(cid)
                dense_scores[cid] = sim
            lists["dense"] = ids
            evidence.append(
                StageEvidence.of(
                    "retrieval",
                    f"dense search ({self.dense.name}) returned {len(ids)} chunks",
                    hits=len(ids),
                    model=self.dense.name,
                    stale_vectors=missing,
                )
            )
            if missing:
                warnings.append(f"{missing} vectors point at chunks no longer in the index")
        context.progress(self.name, 2, 2, "fusion")

        candidates: list[Candidate] = []
        weight = DENSE_WEIGHT_PERMILLE if self.dense_weight is None else self.dense_weight
        for cid, fused, _best in rrf_fuse(lists, {"bm25": 1000, "dense": weight}):
            in_bm25 = cid in bm25_scores
            in_dense = cid in dense_scores
            origin = "bm25+dense" if in_bm25 and in_dense else ("bm25" if in_bm25 else "dense")
            candidates.append(
                replace(
                    meta[cid],
                    origin=origin,
                    score=fused,
                    bm25=bm25_scores.get(cid, 0),
                    dense=dense_scores.get(cid, 0),
                    fused=fused,
                )
            )
        evidence.append(
            StageEvidence.of(
                "computation",
                f"RRF (k={RRF_K}) fused {len(lists)} lists into {len(candidates)} candidates",
                lists=sorted(lists),
                candidates=len(candidates),
            )
        )
        return StageResult(
            CandidateSet(query, tuple(candidates)),
            watch.ms(),
            tuple(evidence),
            tuple(warnings),
            resources=(("items", len(candidates)),),
        )
