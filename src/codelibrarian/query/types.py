"""Values that flow through the query pipeline, and the seams it is built on.

Everything here is a frozen, slotted dataclass or a Protocol. Scores and signals
are integers (per-mille unless said otherwise); durations are whole
milliseconds. No float ever decides an order.

The stages hand each other these values::

    LibrarianQuery ─retrieval─> CandidateSet ─graph_expansion─> CandidateSet
      ─scoring─> CandidateSet ─reranking─> CandidateSet ─defeater_check─> CheckedSet
      ─synthesis─> LibrarianResponse
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from ..errors import UnverifiedByTrace
from ..index.records import Chunk, ChunkHit, FileRecord, Symbol

__all__ = [
    "DEPTHS",
    "STAGE_NAMES",
    "CancellationToken",
    "Candidate",
    "CandidateSet",
    "CheckedSet",
    "Citation",
    "Defeat",
    "EvidenceType",
    "LibrarianQuery",
    "LibrarianResponse",
    "PipelineContext",
    "QueryCancelled",
    "QueryDepth",
    "QueryStore",
    "ResultPack",
    "StageCache",
    "StageEstimate",
    "StageEvidence",
    "StageObserver",
    "StageResult",
    "depth_hops",
    "query_id_for",
    "sorted_candidates",
]

QueryDepth = Literal["L0", "L1", "L2", "L3"]
DEPTHS: tuple[QueryDepth, ...] = ("L0", "L1", "L2", "L3")

#: the six stages, in execution order
STAGE_NAMES: tuple[str, ...] = (
    "retrieval",
    "graph_expansion",
    "scoring",
    "reranking",
    "defeater_check",
    "synthesis",
)

EvidenceType = Literal["retrieval", "computation", "llm", "cache", "capability", "defeater"]

T = TypeVar("T")


def depth_hops(depth: QueryDepth) -> int:
    """Graph hops for a query depth: L0 none (retrieval only), L1 one, L2 two, L3 three."""
    return DEPTHS.index(depth)


@runtime_checkable
class QueryStore(Protocol):
    """What the pipeline reads from the index (a subset of ``index.storage.Storage``)."""

    def files(self) -> list[FileRecord]: ...
    def file(self, path: str) -> FileRecord | None: ...
    def symbols(self, path: str | None = None, name: str | None = None) -> list[Symbol]: ...
    def search(self, query: str, limit: int = 20) -> list[ChunkHit]: ...
    def chunk(self, chunk_id: int) -> Chunk: ...
    def chunks_for(self, path: str) -> list[Chunk]: ...
    def edges(self, kind: Literal["ref", "import", "cochange"]) -> list[tuple[str, str, int]]: ...


@dataclass(frozen=True, slots=True)
class LibrarianQuery:
    """A request: the intent text, how deep to look, how many results, and the time.

    ``as_of`` (epoch seconds) is the moment recency is measured against; it is an
    input, never read from the clock inside the pipeline. ``budget`` (tokens),
    when set, caps the summed tokens of the cited chunks in the response.
    """

    intent: str
    depth: QueryDepth = "L1"
    limit: int = 10
    as_of: int = 0
    budget: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "depth": self.depth,
            "limit": self.limit,
            "as_of": self.as_of,
            "budget": self.budget,
        }


def query_id_for(query: LibrarianQuery) -> str:
    """A stable id for a query: the same intent, options and ``as_of`` give the same id."""
    text = "\x1f".join(
        (
            query.intent,
            query.depth,
            str(query.limit),
            str(query.as_of),
            "" if query.budget is None else str(query.budget),
        )
    )
    return "q_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One chunk under consideration.

    ``origin`` says how it entered: ``bm25``, ``dense``, ``bm25+dense`` or
    ``graph:<kind>`` (reached from ``via`` over an edge). ``signals`` are the
    integer inputs of scoring (name -> 0..1000), kept sorted by name; ``score``
    is the current ordering key (its meaning grows stage by stage: fused rank
    score after retrieval, weighted score after scoring, reranked score after
    reranking).
    """

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    tokens: int
    origin: str
    score: int = 0
    bm25: int = 0
    dense: int = 0
    fused: int = 0
    graph_rank: int = 0
    hops: int = 0
    via: str | None = None
    signals: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of_chunk(cls, chunk: Chunk | ChunkHit, origin: str) -> Candidate:
        """``chunk`` as a candidate that entered by ``origin``, with no scores yet."""
        return cls(
            chunk.chunk_id,
            chunk.path,
            chunk.start_line,
            chunk.end_line,
            chunk.symbol,
            chunk.kind,
            chunk.tokens,
            origin,
        )

    def signal(self, name: str) -> int:
        for key, value in self.signals:
            if key == name:
                return value
        return 0

    def sort_key(self) -> tuple[int, str, int, int, int]:
        """Total order: higher score first, then path, lines and chunk id."""
        return (-self.score, self.path, self.start_line, self.end_line, self.chunk_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "kind": self.kind,
            "tokens": self.tokens,
            "origin": self.origin,
            "score": self.score,
            "bm25": self.bm25,
            "dense": self.dense,
            "fused": self.fused,
            "graph_rank": self.graph_rank,
            "hops": self.hops,
            "via": self.via,
            "signals": dict(self.signals),
        }


@dataclass(frozen=True, slots=True)
class CandidateSet:
    """The hand-off between stages: the query and its candidates in ranked order."""

    query: LibrarianQuery
    candidates: tuple[Candidate, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query.to_dict(),
            "candidates": [c.to_dict() for c in self.candidates],
        }


@dataclass(frozen=True, slots=True)
class Defeat:
    """Counter-evidence that removed a candidate (``reason`` is a short code)."""

    chunk_id: int
    path: str
    reason: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "path": self.path,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class CheckedSet:
    """Survivors of the defeater check plus what was dropped and why."""

    query: LibrarianQuery
    candidates: tuple[Candidate, ...]
    defeated: tuple[Defeat, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query.to_dict(),
            "candidates": [c.to_dict() for c in self.candidates],
            "defeated": [d.to_dict() for d in self.defeated],
        }


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a claim comes from: a path, an inclusive line range and maybe a symbol."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    chunk_id: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "chunk_id": self.chunk_id,
        }

    def __str__(self) -> str:
        where = f"{self.path}:{self.start_line}-{self.end_line}"
        return f"{where} ({self.symbol})" if self.symbol else where


@dataclass(frozen=True, slots=True)
class ResultPack:
    """One ranked file with the chunks that earned it a place."""

    rank: int
    path: str
    score: int
    tokens: int
    citations: tuple[Citation, ...]
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "path": self.path,
            "score": self.score,
            "tokens": self.tokens,
            "citations": [c.to_dict() for c in self.citations],
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True, slots=True)
class StageEvidence:
    """What a stage did or found, in a form the evidence ledger can record."""

    type: EvidenceType
    description: str
    metadata: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(type_: EvidenceType, description: str, **metadata: Any) -> StageEvidence:
        return StageEvidence(type_, description, tuple(sorted(metadata.items())))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "description": self.description, "metadata": dict(self.metadata)}


@dataclass(frozen=True, slots=True)
class LibrarianResponse:
    """The answer: ranked packs with citations, the evidence behind them, a confidence.

    ``confidence`` is an integer 0..1000. ``traces`` lists every
    ``unverified_by_trace`` degradation (a failed stage, no provider, no vectors).
    ``stages`` names the stages that contributed evidence, in order.
    """

    query_id: str
    query: LibrarianQuery
    packs: tuple[ResultPack, ...]
    confidence: int
    stages: tuple[str, ...]
    evidence: tuple[tuple[str, StageEvidence], ...]
    traces: tuple[UnverifiedByTrace, ...]
    defeated: tuple[Defeat, ...] = ()
    summary: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p.path for p in self.packs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "query": self.query.to_dict(),
            "packs": [p.to_dict() for p in self.packs],
            "confidence": self.confidence,
            "stages": list(self.stages),
            "evidence": [{"stage": s, **e.to_dict()} for s, e in self.evidence],
            "traces": [t.to_dict() for t in self.traces],
            "defeated": [d.to_dict() for d in self.defeated],
            "summary": self.summary,
        }


@dataclass(frozen=True, slots=True)
class StageEstimate:
    expected_duration_ms: int
    expected_tokens: int
    cacheable: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "expected_duration_ms": self.expected_duration_ms,
            "expected_tokens": self.expected_tokens,
            "cacheable": self.cacheable,
        }


@dataclass(frozen=True, slots=True)
class StageResult(Generic[T]):
    """A stage's output with its duration (ms), evidence and warnings."""

    output: T
    duration_ms: int
    evidence: tuple[StageEvidence, ...] = ()
    warnings: tuple[str, ...] = ()
    traces: tuple[UnverifiedByTrace, ...] = ()
    #: resource counters (tokens_used, api_calls, cache_hits, cache_misses, items)
    resources: tuple[tuple[str, int], ...] = ()


class QueryCancelled(Exception):
    """Raised inside a stage when the context's cancellation token is set."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"query cancelled during {stage}")
        self.stage = stage


class CancellationToken:
    """A cooperative cancel flag (``threading.Event``) shared by a running query."""

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self, stage: str) -> None:
        if self._event.is_set():
            raise QueryCancelled(stage)


class StageObserver(Protocol):
    """Receives the ledger events: ``stage_start``, progress, ``stage_complete``,
    ``stage_error`` (with the localized error when there is one) and skips."""

    def on_stage_start(self, stage: str, input_summary: str, estimate: StageEstimate) -> None: ...

    def on_stage_progress(self, stage: str, permille: int, message: str) -> None: ...

    def on_stage_complete(
        self, stage: str, result: StageResult[Any], output_summary: str
    ) -> None: ...

    def on_stage_error(self, stage: str, error: BaseException, localized: Any = None) -> None: ...

    def on_stage_skipped(self, stage: str, reason: str) -> None: ...


class StageCache(Protocol):
    """Stage-level cache: opaque string keys to stage results."""

    def get(self, key: str) -> StageResult[Any] | None: ...
    def put(self, key: str, value: StageResult[Any]) -> None: ...
    @property
    def max_size(self) -> int: ...


@dataclass(slots=True)
class PipelineContext:
    """Per-query state the stages share: id, observer, cache, cancellation, records.

    ``cache_namespace`` must change whenever the index changes (the pipeline uses
    the store's generation), so a cached stage result is never served for a
    different index.
    """

    query_id: str
    observer: StageObserver | None = None
    cache: StageCache | None = None
    cancel: CancellationToken = field(default_factory=CancellationToken)
    cache_namespace: str = ""
    #: ``(stage, evidence)`` recorded so far, in order (the executor appends)
    evidence: list[tuple[str, StageEvidence]] = field(default_factory=list)
    #: degradations recorded so far (failed stages, missing providers, adaptations)
    traces: list[UnverifiedByTrace] = field(default_factory=list)

    def progress(self, stage: str, done: int, total: int, message: str = "") -> None:
        """Report in-stage progress and honour cancellation at the same point."""
        self.cancel.raise_if_cancelled(stage)
        if self.observer is not None and total > 0:
            self.observer.on_stage_progress(stage, min(1000, done * 1000 // total), message)


def sorted_candidates(candidates: Sequence[Candidate]) -> tuple[Candidate, ...]:
    """Candidates in the total order of ``Candidate.sort_key``."""
    return tuple(sorted(candidates, key=Candidate.sort_key))
