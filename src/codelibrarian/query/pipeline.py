"""The executor (P17 §D) and the ways in: ``QuerySession`` and ``run_query``.

``QueryPipeline.run`` drives the stages in order with observers, a stage cache
and a cancellation token. Where the seed returns early on the first error, this
executor keeps going: a failed stage is recorded (``stage_error`` event, a
``LocalizedError``, the trace ``unverified_by_trace(stage_failed:<stage>)``) and
its ``passthrough`` output is handed on, so the caller still gets a response —
marked partial, with lower confidence. Cancellation is checked before every
stage and at the stages' own checkpoints; a cancelled run returns what finished
and no response.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import LibrarianError, UnverifiedByTrace, UsageError
from .base import PipelineStage, Stopwatch
from .capabilities import (
    DEFAULT_FEATURES,
    FEATURES,
    Adaptation,
    CapabilityEvent,
    StorageCapabilities,
    adapt,
    detect_capabilities,
)
from .defeaters import DefeaterCheckStage
from .embed import Embedder, VectorIndex, load_embedder, vectors_path
from .expansion import GraphExpansionStage, Neighbourhood
from .report import (
    ErrorLocalizer,
    LocalizedError,
    MultiObserver,
    PipelineDiagnosticReport,
    ProgressReporter,
)
from .rerank import Completer, RerankingStage
from .retrieval import RetrievalStage
from .scoring import ScoringStage
from .synthesis import SynthesisStage
from .types import (
    DEPTHS,
    CancellationToken,
    CandidateSet,
    CheckedSet,
    LibrarianQuery,
    LibrarianResponse,
    PipelineContext,
    QueryCancelled,
    QueryDepth,
    QueryStore,
    StageEvidence,
    StageObserver,
    StageResult,
    query_id_for,
)

__all__ = [
    "MemoryStageCache",
    "PipelineResult",
    "QueryPipeline",
    "QuerySession",
    "StageRun",
    "build_pipeline",
    "completer_for",
    "git_recency",
    "resolve_llm",
    "run_query",
    "summarize",
]

RunStatus = Literal["completed", "failed", "skipped", "cancelled", "cached"]


class MemoryStageCache:
    """A bounded in-memory LRU of stage results (per process)."""

    def __init__(self, max_size: int = 128) -> None:
        self._max = max_size
        self._data: OrderedDict[str, StageResult[Any]] = OrderedDict()

    @property
    def max_size(self) -> int:
        return self._max

    def get(self, key: str) -> StageResult[Any] | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: str, value: StageResult[Any]) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)


def summarize(value: Any) -> str:
    """A one-line summary of a stage input or output (never the data itself)."""
    if isinstance(value, LibrarianQuery):
        return f"intent of {len(value.intent)} chars, depth {value.depth}, limit {value.limit}"
    if isinstance(value, CheckedSet):
        return f"{len(value.candidates)} kept, {len(value.defeated)} defeated"
    if isinstance(value, CandidateSet):
        files = len({c.path for c in value.candidates})
        return f"{len(value.candidates)} candidates in {files} files"
    if isinstance(value, LibrarianResponse):
        return f"{len(value.packs)} packs, confidence {value.confidence}/1000"
    return type(value).__name__


def _digest(value: Any) -> str:
    to_dict = getattr(value, "to_dict", None)
    data = to_dict() if callable(to_dict) else repr(value)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class StageRun:
    stage: str
    status: RunStatus
    result: StageResult[Any] | None = None
    error: LocalizedError | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stage": self.stage, "status": self.status}
        if self.result is not None:
            out["duration_ms"] = self.result.duration_ms
            out["evidence"] = [e.to_dict() for e in self.result.evidence]
            out["warnings"] = list(self.result.warnings)
            out["traces"] = [t.to_dict() for t in self.result.traces]
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """What a run produced: the response (None when cancelled or unrecoverable),
    every stage's run, the degradations, and the diagnostic report."""

    query_id: str
    query: LibrarianQuery
    status: Literal["completed", "partial", "cancelled"]
    response: LibrarianResponse | None
    runs: tuple[StageRun, ...]
    traces: tuple[UnverifiedByTrace, ...]
    report: PipelineDiagnosticReport
    total_duration_ms: int
    adaptations: tuple[Adaptation, ...] = ()
    capabilities: StorageCapabilities | None = None
    capability_events: tuple[CapabilityEvent, ...] = field(default=())

    @property
    def success(self) -> bool:
        return self.status == "completed"

    @property
    def failed_stages(self) -> tuple[str, ...]:
        return tuple(r.stage for r in self.runs if r.status == "failed")

    def run_of(self, stage: str) -> StageRun:
        for r in self.runs:
            if r.stage == stage:
                return r
        raise KeyError(stage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "status": self.status,
            "response": None if self.response is None else self.response.to_dict(),
            "runs": [r.to_dict() for r in self.runs],
            "traces": [t.to_dict() for t in self.traces],
            "adaptations": [a.to_dict() for a in self.adaptations],
            "capabilities": None if self.capabilities is None else self.capabilities.to_dict(),
            "capability_events": [e.to_dict() for e in self.capability_events],
            "report": self.report.to_dict(),
            "total_duration_ms": self.total_duration_ms,
        }


class QueryPipeline:
    """Runs stages in order with observers, a cache, cancellation and partial results."""

    def __init__(
        self,
        stages: Sequence[PipelineStage],
        *,
        skip: Mapping[str, str] | None = None,
        adaptations: Sequence[Adaptation] = (),
        capabilities: StorageCapabilities | None = None,
        capability_events: Sequence[CapabilityEvent] = (),
        cache_namespace: str = "",
        clock_ns: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        names = [s.name for s in stages]
        if len(set(names)) != len(names):
            raise UsageError(f"duplicate stage names in {names}.")
        unknown = sorted(set(skip or {}) - set(names))
        if unknown:
            raise UsageError(
                f"cannot skip unknown stage(s) {', '.join(unknown)}.",
                hint=f"Stages are: {', '.join(names)}.",
            )
        self.stages = tuple(stages)
        self.skip = dict(skip or {})
        self.adaptations = tuple(adaptations)
        self.capabilities = capabilities
        self.capability_events = tuple(capability_events)
        self.cache_namespace = cache_namespace
        self._clock = clock_ns
        self._localizer = ErrorLocalizer()

    def stage(self, name: str) -> PipelineStage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)

    def run(
        self,
        query: LibrarianQuery,
        *,
        observer: StageObserver | None = None,
        cache: Any = None,
        cancel: CancellationToken | None = None,
        reporter: ProgressReporter | None = None,
    ) -> PipelineResult:
        if query.depth not in DEPTHS:
            raise UsageError(f"unknown depth {query.depth!r}.", hint="Use L0, L1, L2 or L3.")
        if query.limit < 1:
            raise UsageError("limit must be at least 1.")
        watch = Stopwatch(self._clock)
        qid = query_id_for(query)
        reporter = reporter or ProgressReporter(
            qid, query.intent, [s.name for s in self.stages], clock_ns=self._clock
        )
        obs = MultiObserver(reporter, observer)
        ctx = PipelineContext(
            qid,
            observer=obs,
            cache=cache,
            cancel=cancel or CancellationToken(),
            cache_namespace=self.cache_namespace,
        )
        for ev in self.capability_events:
            ctx.evidence.append(
                (
                    "capabilities",
                    StageEvidence.of(
                        "capability", f"{ev.event}: {ev.capability}", detail=ev.detail
                    ),
                )
            )
        for a in self.adaptations:
            if a.original != "cache_lookup":
                ctx.traces.append(a.trace)

        runs: list[StageRun] = []
        current: Any = query
        cancelled = False
        for stage in self.stages:
            if ctx.cancel.cancelled:
                cancelled = True
                runs.append(StageRun(stage.name, "cancelled", reason=ctx.cancel.reason))
                obs.on_stage_error(stage.name, QueryCancelled(stage.name))
                break
            if stage.name in self.skip:
                current = stage.passthrough(current, ctx)
                runs.append(StageRun(stage.name, "skipped", reason=self.skip[stage.name]))
                obs.on_stage_skipped(stage.name, self.skip[stage.name])
                continue
            summary = summarize(current)
            obs.on_stage_start(stage.name, summary, stage.estimate(current))
            key = None
            if stage.cacheable and cache is not None and self.cache_namespace:
                key = f"{self.cache_namespace}:{stage.name}:{_digest(current)}"
            result: StageResult[Any] | None = cache.get(key) if key is not None else None
            status: RunStatus = "cached" if result is not None else "completed"
            if result is not None:
                obs.on_cache_hit(stage.name)
            else:
                try:
                    result = stage.execute(current, ctx)
                except QueryCancelled as exc:
                    cancelled = True
                    localized = self._localizer.localize(exc, stage.name, summary)
                    obs.on_stage_error(stage.name, exc, localized)
                    runs.append(
                        StageRun(stage.name, "cancelled", error=localized, reason=ctx.cancel.reason)
                    )
                    break
                except Exception as exc:  # a failing stage yields a partial result
                    localized = self._localizer.localize(exc, stage.name, summary)
                    ctx.traces.append(
                        UnverifiedByTrace(
                            f"stage_failed:{stage.name}", f"{type(exc).__name__}: {exc}"
                        )
                    )
                    obs.on_stage_error(stage.name, exc, localized)
                    runs.append(StageRun(stage.name, "failed", error=localized))
                    current = stage.passthrough(current, ctx)
                    continue
                if key is not None:
                    cache.put(key, result)
            ctx.evidence.extend((stage.name, e) for e in result.evidence)
            ctx.traces.extend(t for t in result.traces if t not in ctx.traces)
            obs.on_stage_complete(stage.name, result, summarize(result.output))
            runs.append(StageRun(stage.name, status, result))
            current = result.output

        response = current if isinstance(current, LibrarianResponse) and not cancelled else None
        if cancelled:
            ctx.traces.append(UnverifiedByTrace("cancelled", ctx.cancel.reason or "cancelled"))
            overall: Literal["completed", "partial", "cancelled"] = "cancelled"
        elif any(r.status == "failed" for r in runs):
            overall = "partial"
        else:
            overall = "completed"
        reporter.finish("failed" if overall == "partial" and response is None else overall)
        return PipelineResult(
            qid,
            query,
            overall,
            response,
            tuple(runs),
            tuple(ctx.traces),
            reporter.get_status(),
            watch.ms(),
            self.adaptations,
            self.capabilities,
            self.capability_events,
        )


# -- assembling a pipeline over a real repository ----------------------------------------


def git_recency(root: Path, *, commits: int = 500) -> Callable[[Sequence[str]], Mapping[str, int]]:
    """Last-change times (epoch seconds) of paths, from the last ``commits`` commits.

    Read once, lazily, on first use. Paths not touched in that window are absent
    (scoring treats them as the oldest bucket).
    """
    memo: dict[str, int] | None = None

    def lookup(paths: Sequence[str]) -> Mapping[str, int]:
        nonlocal memo
        if memo is None:
            from ..workspace.git import is_git_repo, recent_commits

            memo = {}
            if is_git_repo(root):
                for commit in recent_commits(root, limit=commits):
                    for p in commit.files:
                        if commit.timestamp > memo.get(p, -1):
                            memo[p] = commit.timestamp
        return {p: memo[p] for p in paths if p in memo}

    return lookup


def build_pipeline(
    store: QueryStore,
    *,
    root: Path | None = None,
    dense: VectorIndex | None = None,
    features: Collection[str] = FEATURES,
    llm: Completer | None = None,
    summarize_with_llm: bool = False,
    recency: Callable[[Sequence[str]], Mapping[str, int]] | None = None,
    cache: Any = None,
    cache_namespace: str = "",
) -> QueryPipeline:
    """Probe the store, adapt ``features`` to it, and wire the six stages."""
    report = detect_capabilities(store, dense=dense, cache=cache)
    plan = adapt(report.capabilities, features)
    enabled = set(plan.features)
    expansion = GraphExpansionStage(store)
    if report.graphs and cache_namespace:
        expansion._memo[cache_namespace] = Neighbourhood.build(report.graphs)
    stages: list[PipelineStage] = [
        RetrievalStage(
            store, dense=dense if "dense" in enabled else None, use_bm25="bm25" in enabled
        ),
        expansion,
        ScoringStage(recency=recency),
        RerankingStage(llm=llm),
        DefeaterCheckStage(store, root=root),
        SynthesisStage(summarize=summarize_with_llm, llm=llm),
    ]
    skip: dict[str, str] = {}
    if "graph" not in enabled:
        skip["graph_expansion"] = "feature off or no graph"
    if "scoring" not in enabled:
        skip["scoring"] = "feature off: retrieval order kept"
    if "rerank" not in enabled:
        skip["reranking"] = "feature off"
    if "defeaters" not in enabled:
        skip["defeater_check"] = "feature off"
    return QueryPipeline(
        stages,
        skip=skip,
        adaptations=plan.adaptations,
        capabilities=report.capabilities,
        capability_events=report.events + plan.events,
        cache_namespace=cache_namespace,
    )


def completer_for(client: Any) -> Completer:
    """Adapt an ``LlmClient`` (``codelibrarian.providers``) to a ``prompt -> text`` call."""
    from ..providers import ChatMessage

    def complete(prompt: str) -> str:
        return str(client.chat([ChatMessage("user", prompt)], temperature=0.0).text)

    return complete


def resolve_llm(
    root: Path, *, env: Mapping[str, str] | None = None, discover: bool = False
) -> tuple[Completer | None, UnverifiedByTrace | None]:
    """A completer from the configured LLM provider, or the trace saying why not.

    A provider counts as configured when ``LIBRARIAN_LLM_PROVIDER`` is set; with
    ``discover`` the providers' discovery runs too (slower: it probes CLIs and
    local servers). Nothing is called here; the first call happens in a stage.
    """
    import os

    from ..errors import ProviderUnavailable
    from ..providers import ENV_PROVIDER, ClientOptions, client_for, default_registry
    from ..providers import resolve_model as resolve_provider_model
    from ..workspace.state import State

    environ = dict(os.environ if env is None else env)
    if not discover and not environ.get(ENV_PROVIDER, "").strip():
        return None, UnverifiedByTrace(
            "provider_unavailable", f"no LLM provider configured ({ENV_PROVIDER} is not set)"
        )
    registry = default_registry(state_dir=State(root).dir, env=environ)
    try:
        chosen = resolve_provider_model(registry)
        client = client_for(
            registry.require(chosen.provider), chosen.model, ClientOptions(env=environ)
        )
    except ProviderUnavailable as exc:
        return None, exc.trace
    except LibrarianError as exc:
        return None, UnverifiedByTrace("provider_unavailable", exc.message)
    return completer_for(client), None


class QuerySession:
    """An open index (and vectors) with a wired pipeline, reused across queries."""

    def __init__(
        self,
        root: Path,
        *,
        features: Collection[str] = DEFAULT_FEATURES,
        embedder: Embedder | Literal["auto"] | None = "auto",
        llm: Completer | None = None,
        summarize_with_llm: bool = False,
        cache: Any = None,
        store: QueryStore | None = None,
    ) -> None:
        from ..index.store import open_store

        self.root = root
        self._own_store = store is None
        self.store: QueryStore = store if store is not None else open_store(root, readonly=True)
        self.dense: VectorIndex | None = None
        self.sync_stats: Any = None
        if "dense" in features:
            emb = load_embedder() if embedder == "auto" else embedder
            if emb is not None:
                self.dense = VectorIndex(vectors_path(root), emb)
                self.sync_stats = self.dense.sync(self.store)
        generation = getattr(self.store, "generation", None)
        namespace = f"g{generation()}" if callable(generation) else ""
        self.pipeline = build_pipeline(
            self.store,
            root=root,
            dense=self.dense,
            features=features,
            llm=llm,
            summarize_with_llm=summarize_with_llm,
            recency=git_recency(root),
            cache=cache,
            cache_namespace=namespace,
        )
        self.cache = cache

    def run(
        self,
        intent: str,
        *,
        depth: QueryDepth = "L1",
        limit: int = 10,
        budget: int | None = None,
        as_of: int | None = None,
        observer: StageObserver | None = None,
        cancel: CancellationToken | None = None,
        reporter: ProgressReporter | None = None,
    ) -> PipelineResult:
        if not intent.strip():
            raise UsageError("the intent is empty.", hint='Say what you are looking for: "..."')
        query = LibrarianQuery(
            intent, depth, limit, int(time.time()) if as_of is None else as_of, budget
        )
        return self.pipeline.run(
            query, observer=observer, cache=self.cache, cancel=cancel, reporter=reporter
        )

    def close(self) -> None:
        if self.dense is not None:
            self.dense.close()
        close = getattr(self.store, "close", None)
        if self._own_store and callable(close):
            close()

    def __enter__(self) -> QuerySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_query(
    root: Path,
    intent: str,
    *,
    stages: Collection[str] = DEFAULT_FEATURES,
    budget: int | None = None,
    depth: QueryDepth = "L1",
    limit: int = 20,
    as_of: int | None = None,
    embedder: Embedder | Literal["auto"] | None = "auto",
) -> list[str]:
    """Ranked repository-relative file paths for ``intent`` (for benchmarks/adapters).

    ``stages`` picks features from ``FEATURES`` (``bm25``, ``dense``, ``graph``,
    ``scoring``, ``rerank``, ``defeaters``; default ``DEFAULT_FEATURES``, everything
    but ``dense``): ``{"bm25"}`` is BM25 alone, ``{"bm25", "graph", "scoring"}``
    adds expansion, and so on. ``budget`` caps the summed tokens of the cited
    chunks.
    """
    with QuerySession(root, features=stages, embedder=embedder) as session:
        result = session.run(intent, depth=depth, limit=limit, budget=budget, as_of=as_of)
    return [] if result.response is None else list(result.response.paths)
