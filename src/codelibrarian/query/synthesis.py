"""Stage 6, synthesis: the ``LibrarianResponse``.

Surviving chunks are grouped by file in the order the reranker left them (a
file's rank is that of its first chunk). Each file becomes a ``ResultPack``
with citations (path, lines, symbol) sorted by line, the reasons it ranks
(its signals, in words) and its tokens. With a ``budget``, packs are added while
the summed chunk tokens fit; a pack that does not fit is retried with its best
chunk alone, then left out (the response says how many were).

``confidence`` (0..1000) = 700 x the best pack's score / 1000 + 300 x the share
of the top five packs backed by at least two independent signals (lexical,
semantic, graph, path/name), minus 150 for every failed stage. It is a ranking
heuristic, not a probability.

An LLM summary is written only when a provider is configured and a summary
was asked for; otherwise ``summary`` is None and, if one was asked for, the
response carries ``unverified_by_trace(provider_unavailable)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import LibrarianError, UnverifiedByTrace
from .base import StageSchemas, Stopwatch
from .schemas import CheckedSetModel, ResponseModel
from .types import (
    Candidate,
    CheckedSet,
    Citation,
    LibrarianResponse,
    PipelineContext,
    ResultPack,
    StageEstimate,
    StageEvidence,
    StageResult,
    query_id_for,
)

__all__ = ["SynthesisStage", "build_packs", "confidence_of", "reasons_for"]

_SIGNAL_WORDS = {
    "lexical": "keyword match",
    "semantic": "semantic similarity",
    "graph": "graph rank",
    "path": "path matches the intent",
    "name": "symbol name matches the intent",
    "recency": "recently changed",
}


def reasons_for(c: Candidate) -> list[str]:
    out: list[str] = []
    if "bm25" in c.origin:
        out.append("keyword hit (BM25)")
    if "dense" in c.origin:
        out.append(f"dense hit (cosine {c.dense}/1000)")
    if c.origin.startswith("graph:"):
        out.append(f"{c.origin[6:]} neighbour of {c.via} ({c.hops} hop)")
    for key, value in c.signals:
        if key in _SIGNAL_WORDS and value >= 500:
            out.append(f"{_SIGNAL_WORDS[key]} {value}/1000")
    return out


def build_packs(
    candidates: tuple[Candidate, ...], *, limit: int, budget: int | None
) -> tuple[tuple[ResultPack, ...], int]:
    """Group chunks into ranked file packs under ``budget``; also return how many
    files the budget left out."""
    order: list[str] = []
    by_file: dict[str, list[Candidate]] = {}
    for c in candidates:
        if c.path not in by_file:
            order.append(c.path)
            by_file[c.path] = []
        by_file[c.path].append(c)
    packs: list[ResultPack] = []
    used = 0
    left_out = 0
    for path in order:
        if len(packs) >= limit:
            break
        chunks = by_file[path]
        tokens = sum(c.tokens for c in chunks)
        if budget is not None and used + tokens > budget:
            chunks = chunks[:1]
            tokens = chunks[0].tokens
            if used + tokens > budget:
                left_out += 1
                continue
        used += tokens
        # the file's best chunk speaks for it
        reasons = reasons_for(chunks[0])
        if len(chunks) > 1:
            reasons.append(f"{len(chunks)} matching chunks")
        cites = sorted(
            (Citation(c.path, c.start_line, c.end_line, c.symbol, c.chunk_id) for c in chunks),
            key=lambda x: (x.start_line, x.end_line, x.chunk_id),
        )
        packs.append(
            ResultPack(
                len(packs) + 1,
                path,
                max(c.score for c in chunks),
                tokens,
                tuple(cites),
                tuple(reasons),
            )
        )
    return tuple(packs), left_out


def confidence_of(
    packs: tuple[ResultPack, ...], candidates: tuple[Candidate, ...], failed: int
) -> int:
    if not packs:
        return 0
    top = max(0, min(1000, packs[0].score))
    best: dict[str, Candidate] = {}
    for c in candidates:
        best.setdefault(c.path, c)
    backed = 0
    head = packs[:5]
    for p in head:
        lead = best.get(p.path)
        if lead is None:
            continue
        independent = sum(
            1
            for present in (
                lead.bm25 > 0,
                lead.dense > 0,
                lead.graph_rank > 0,
                lead.signal("path") > 0 or lead.signal("name") > 0,
            )
            if present
        )
        backed += 1 if independent >= 2 else 0
    support = backed * 1000 // len(head)
    return max(0, min(1000, (700 * top + 300 * support) // 1000 - 150 * failed))


@dataclass(slots=True)
class SynthesisStage(StageSchemas):
    """Ranked packs with citations, per-stage evidence and a confidence."""

    summarize: bool = False
    llm: Callable[[str], str] | None = None

    name: str = "synthesis"
    description: str = "Synthesize the response: ranked packs, citations, confidence"
    cacheable: bool = False

    input_model = CheckedSetModel
    output_model = ResponseModel

    def estimate(self, input: CheckedSet) -> StageEstimate:
        if self.summarize and self.llm is not None:
            return StageEstimate(5000, 1500, False)
        return StageEstimate(1, 0, False)

    def _respond(
        self,
        input: CheckedSet,
        context: PipelineContext,
        summary: str | None,
        extra: tuple[UnverifiedByTrace, ...] = (),
    ) -> tuple[LibrarianResponse, int]:
        query = input.query
        packs, left_out = build_packs(input.candidates, limit=query.limit, budget=query.budget)
        traces = (*context.traces, *extra)
        failed = sum(1 for t in traces if t.reason.startswith("stage_failed:"))
        stages: list[str] = []
        for stage, _ev in context.evidence:
            if stage not in stages:
                stages.append(stage)
        response = LibrarianResponse(
            query_id=context.query_id or query_id_for(query),
            query=query,
            packs=packs,
            confidence=confidence_of(packs, input.candidates, failed),
            stages=tuple(stages),
            evidence=tuple(context.evidence),
            traces=traces,
            defeated=input.defeated,
            summary=summary,
        )
        return response, left_out

    def passthrough(self, input: CheckedSet, context: PipelineContext) -> LibrarianResponse:
        """The plain response the executor hands back when synthesis itself fails."""
        return self._respond(input, context, None)[0]

    def execute(
        self, input: CheckedSet, context: PipelineContext
    ) -> StageResult[LibrarianResponse]:
        watch = Stopwatch()
        summary: str | None = None
        extra: list[UnverifiedByTrace] = []
        resources: list[tuple[str, int]] = []
        if self.summarize:
            if self.llm is None:
                extra.append(
                    UnverifiedByTrace("provider_unavailable", "no LLM provider: no summary")
                )
            else:
                context.cancel.raise_if_cancelled(self.name)
                listing = "\n".join(
                    f"- {c.path}:{c.start_line}-{c.end_line} {c.symbol or ''}"
                    for c in input.candidates[:20]
                )
                resources.append(("api_calls", 1))
                try:
                    summary = self.llm(
                        f"In three sentences, say where in the code this is handled: "
                        f"{input.query.intent}\nCandidates:\n{listing}"
                    ).strip()
                except LibrarianError as exc:  # no summary beats no response
                    extra.append(UnverifiedByTrace("provider_error", exc.message))
        response, left_out = self._respond(input, context, summary, tuple(extra))
        evidence = [
            StageEvidence.of(
                "computation",
                f"{len(response.packs)} packs, confidence {response.confidence}/1000",
                packs=len(response.packs),
                left_out_by_budget=left_out,
                tokens=sum(p.tokens for p in response.packs),
            )
        ]
        if summary is not None:
            evidence.append(StageEvidence.of("llm", "LLM summary written"))
        response = replace(
            response,
            evidence=(*response.evidence, *((self.name, e) for e in evidence)),
            stages=(*response.stages, self.name),
        )
        warnings = (f"{left_out} files left out by the budget",) if left_out else ()
        return StageResult(
            response, watch.ms(), tuple(evidence), warnings, tuple(extra), tuple(resources)
        )
