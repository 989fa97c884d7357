"""Workspace-side orchestration of planning: select, plan, advise, evolve.

``planning/`` is pure; this module gathers what it reads — the technique library,
the matchers (the bundled embedding model when installed), the facts, each step's
context pack composed for real, the providers, the git snapshot, the run history —
and hands back values; every document made of them leaves through
``planning.outgoing.outgoing`` (the secret scanner).

Run history: :func:`run_traces` reads the workspace's runs through a
:data:`TraceLoader` — by default the execution engine's ``load_traces`` beside its
run store (``codelibrarian.execution.store``), looked up when first needed. A
build without that store, or a workspace with no runs yet, has nothing to read and
says so with an ``unverified_by_trace(no_run_history)`` degradation (selection gets no historical
boost, estimates use documented defaults, evolution has nothing to learn from
unless traces are given explicitly); runs whose ledger does not verify are left
out and counted (``unverified_by_trace(runs_skipped)``).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UnverifiedByTrace, UsageError
from ..planning.decide import compile_candidate
from ..planning.plan import (
    EnrichedPlan,
    ModelChoice,
    ProviderView,
    Snapshot,
    StepContext,
    assemble_plan,
)
from ..planning.selector import Candidate, Selection, select
from ..planning.semantic import (
    EmbeddingMatcher,
    HybridMatcher,
    KeywordMatcher,
    Matcher,
    composition_texts,
    pattern_texts,
)
from ..requests import ComposeRequest
from .workspace import WorkspaceSession, now_or

if TYPE_CHECKING:
    from ..execution.traces import RunTrace
    from ..providers.registry import ProviderRegistry
    from ..techniques.facts import Facts
    from ..techniques.lcl import CompiledComposition
    from ..techniques.registry import Library
    from .compose import ComposeService

__all__ = [
    "MAX_ALTERNATIVES",
    "NO_RUN_HISTORY",
    "TraceLoader",
    "default_trace_loader",
    "matchers",
    "plan_intent",
    "run_traces",
    "select_intent",
]

MAX_ALTERNATIVES = 4
NO_RUN_HISTORY = UnverifiedByTrace(
    "no_run_history",
    "no run store to read in this build: no historical boost, default step durations",
)
#: a run store with nothing to learn from yet: the same reason, so callers need one check
NO_RUNS_YET = UnverifiedByTrace(
    "no_run_history",
    "no workflow runs recorded in this workspace yet: no historical boost, default step durations",
)
_LOCK = threading.Lock()
_MATCHERS: dict[bool, tuple[Matcher, Matcher]] = {}


def matchers(library: Library, *, embeddings: bool = True) -> tuple[Matcher, Matcher]:
    """(pattern, composition) matchers, built once per process: the bundled embedding
    model beside keywords when it is installed and wanted, else keywords alone."""
    with _LOCK:
        got = _MATCHERS.get(embeddings)
        if got is not None:
            return got
        from ..query.embed import load_embedder

        emb = load_embedder() if embeddings else None
        pk, ck = KeywordMatcher(pattern_texts(library)), KeywordMatcher(composition_texts(library))
        if emb is None:
            got = (pk, ck)
        else:
            got = (
                HybridMatcher(EmbeddingMatcher(emb, pattern_texts(library)), pk),
                HybridMatcher(EmbeddingMatcher(emb, composition_texts(library)), ck),
            )
        _MATCHERS[embeddings] = got
        if not embeddings or emb is None:
            _MATCHERS[False] = (pk, ck)
        return got


#: reads a workspace's runs: ``(traces, ids of runs skipped as unreadable)``, or
#: ``None`` when this build has no run store
TraceLoader = Callable[[WorkspaceSession], "tuple[Sequence[RunTrace], Sequence[str]] | None"]


def default_trace_loader(ws: WorkspaceSession) -> tuple[Sequence[RunTrace], Sequence[str]] | None:
    """The execution engine's ``load_traces(state)`` when the build has it, else ``None``."""
    try:
        store = importlib.import_module("codelibrarian.execution.store")
    except ImportError:
        return None
    load = getattr(store, "load_traces", None)
    if load is None:
        return None
    got = load(ws.state)
    return tuple(got.traces), tuple(getattr(got, "skipped_runs", ()))


def run_traces(
    ws: WorkspaceSession, loader: TraceLoader | None = None
) -> tuple[tuple[RunTrace, ...], tuple[UnverifiedByTrace, ...]]:
    """Finished and unfinished runs of this workspace, and what could not be read.

    ``loader`` replaces :func:`default_trace_loader` (tests, other run stores)."""
    got = (loader or default_trace_loader)(ws)
    if got is None:
        return (), (NO_RUN_HISTORY,)
    traces, skipped = got
    ordered = tuple(sorted(traces, key=lambda t: (t.started_at, t.run_id)))
    said: list[UnverifiedByTrace] = []
    if not ordered:
        said.append(NO_RUNS_YET)
    if skipped:
        said.append(
            UnverifiedByTrace(
                "runs_skipped",
                f"{len(skipped)} run(s) left out: their ledger could not be verified",
            )
        )
    return ordered, tuple(said)


def _llm_intent(
    ws: WorkspaceSession, text: str, library: Library, matcher: Matcher
) -> tuple[Any, list[UnverifiedByTrace]]:
    from ..planning.intent import decompose
    from ..planning.llm_intent import llm_prompt, merge_llm_answer
    from ..planning.selector import nearest_actions
    from ..query.pipeline import resolve_llm

    base = decompose(
        text,
        nearest=nearest_actions(library, matcher.match(text)),
        embeddings=matcher.mode == "embeddings",
    )
    completer, why = resolve_llm(ws.root, discover=True)
    if completer is None:
        return None, [why or UnverifiedByTrace("provider_unavailable", "no LLM provider")]
    try:
        answer = completer(llm_prompt(text))
    except Exception as exc:  # a provider failing must not take planning down
        return None, [UnverifiedByTrace("provider_error", f"{type(exc).__name__}: {exc}")]
    merged, problems = merge_llm_answer(answer, base)
    if merged is None:
        return None, [UnverifiedByTrace("llm_answer_unusable", "; ".join(problems))]
    return merged, []


def select_intent(
    ws: WorkspaceSession,
    text: str,
    *,
    llm: bool = False,
    embeddings: bool = True,
    exclude: Sequence[str] = (),
    history: tuple[tuple[RunTrace, ...], tuple[UnverifiedByTrace, ...]] | None = None,
) -> Selection:
    """Rank patterns and compositions for ``text`` (see ``planning.selector``);
    ``history`` is :func:`run_traces`'s answer when the caller has read it already."""
    from ..techniques.registry import default_library

    if not text.strip():
        raise UsageError("the intent is empty", hint="Say what you want done, in words.")
    from .evolution import deprecated_compositions

    library = default_library()
    exclude = (*exclude, *deprecated_compositions(ws))
    if exclude:
        from dataclasses import replace

        library = replace(
            library,
            compositions={k: v for k, v in library.compositions.items() if k not in exclude},
        )
    pm, cm = matchers(default_library(), embeddings=embeddings)
    traces, degr = history if history is not None else run_traces(ws)
    intent = None
    extra: list[UnverifiedByTrace] = []
    if llm:
        intent, extra = _llm_intent(ws, text, library, pm)
    return select(text, library, pm, cm, traces=traces, intent=intent, degradations=(*degr, *extra))


# ------------------------------------------------------------------------------ plan


@dataclass(frozen=True, slots=True)
class _Request:
    query: str
    budget: int
    role: str
    files: tuple[str, ...]


def _step_contexts(
    composer: ComposeService,
    compiled: CompiledComposition,
    library: Library,
    facts: Facts,
    text: str,
    *,
    model: str | None,
    as_of: int,
) -> dict[str, StepContext]:
    """Each step's context pack, composed now under its recipe's budget (dry run)."""
    from ..techniques.tree import steps_of

    env = {"task": text, **facts.env(), "steps": {}}
    memo: dict[_Request, tuple[int, int]] = {}
    out: dict[str, StepContext] = {}
    for step in steps_of(compiled.root):
        recipe = library.primitive(step.primitive).context
        req = _Request(
            recipe.render_query(env) or text, recipe.budget, recipe.role, recipe.pinned_files(env)
        )
        if req not in memo:
            request = ComposeRequest(
                req.query,
                budget=req.budget,
                model=model,
                files=req.files,
                agent_role=req.role,
                as_of=as_of,
                refresh=False,
                record=False,
                event="agent_request",
            )
            result = composer.compose(request)
            memo[req] = (result.tokens, len(result.files))
        tokens, files = memo[req]
        out[step.step_id] = StepContext(
            req.query, req.budget, tokens, req.role, recipe.all_lanes, files
        )
    return out


def _providers(
    ws: WorkspaceSession,
    compiled: CompiledComposition,
    library: Library,
    registry: ProviderRegistry | None,
) -> tuple[ProviderView, dict[str, ModelChoice]]:
    from ..providers import ModelCapabilityRegistry, default_registry, match_models
    from ..techniques.tree import steps_of

    reg = registry or default_registry(state_dir=ws.state.dir)
    discovery = reg.discover()
    available: list[str] = []
    unavailable: list[tuple[str, str]] = []
    for probe in reg.all():
        pid = probe.descriptor.id
        result = discovery.results.get(pid)
        if result is not None and result.usable:
            available.append(pid)
        else:
            unavailable.append((pid, result.status if result is not None else "unknown"))
    best = reg.find_best()
    view = ProviderView(
        True,
        tuple(available),
        tuple(unavailable),
        best.provider if best is not None else None,
        f"discovery: {discovery.source}",
    )
    profiles = ModelCapabilityRegistry().available(reg, discovery)
    models: dict[str, ModelChoice] = {}
    for step in steps_of(compiled.root):
        prim = library.primitive(step.primitive)
        if prim.executor != "llm":
            continue
        match = match_models(prim.capabilities, profiles)
        if match.best is not None:
            p = match.best.profile
            models[step.step_id] = ModelChoice(
                p.provider, p.model_id, "; ".join(match.best.reasons)
            )
        else:
            why = "no usable provider" if not profiles else "no model meets its requirements"
            models[step.step_id] = ModelChoice(None, None, f"{why}: the calling agent does it")
    return view, models


def _snapshot(ws: WorkspaceSession) -> Snapshot:
    from ..vitals import load_status
    from .compose import STATUS_FILE

    sig = ws.workspace_signature()
    commit, modified = (sig[0], tuple(p for p, _, _ in sig[1])) if sig is not None else (None, ())
    status = load_status(ws.state.dir / STATUS_FILE)
    return Snapshot(
        commit,
        tuple(p for p in modified if not p.startswith(".librarian/")),
        status.tests,
        status.recorded_at or None,
    )


def _choose(
    selection: Selection, library: Library, facts: Facts
) -> tuple[Candidate, CompiledComposition, tuple[Any, ...]]:
    pattern = selection.pattern
    mine = selection.compositions_for(pattern.id)
    chosen = mine[0] if mine else pattern
    compiled, decisions = compile_candidate(chosen.kind, chosen.id, library, facts)
    return chosen, compiled, decisions


def _alternatives(
    selection: Selection, chosen: Candidate, library: Library, facts: Facts
) -> list[tuple[Candidate, CompiledComposition | None]]:
    picks: list[Candidate] = []
    for c in selection.compositions_for(selection.pattern.id):
        if c.id != chosen.id:
            picks.append(c)
            break
    for p in selection.patterns[1:]:
        if len(picks) >= MAX_ALTERNATIVES:
            break
        best = next((c for c in selection.compositions_for(p.id) if c.id != chosen.id), None)
        if best is not None and best.id not in {x.id for x in picks}:
            picks.append(best)
    out: list[tuple[Candidate, CompiledComposition | None]] = []
    for c in sorted(picks[:MAX_ALTERNATIVES], key=lambda c: (-c.score, c.id)):
        compiled, _ = compile_candidate(c.kind, c.id, library, facts)
        out.append((c, compiled))
    return out


def plan_intent(
    ws: WorkspaceSession,
    composer: ComposeService,
    text: str,
    *,
    base: str | None = None,
    diff_text: str | None = None,
    llm: bool = False,
    embeddings: bool = True,
    model: str | None = None,
    as_of: int | None = None,
    registry: ProviderRegistry | None = None,
    exclude: Sequence[str] = (),
) -> EnrichedPlan:
    """The enriched plan for ``text`` on this workspace (see ``planning.plan``)."""
    from ..planning.history import step_timings
    from ..techniques.registry import default_library
    from .techniques import workspace_facts

    now = now_or(as_of)
    library = default_library()
    facts = workspace_facts(ws, text, base=base, diff_text=diff_text, refresh=True)
    history = run_traces(ws)  # read once: the boost, then step timings
    selection = select_intent(
        ws, text, llm=llm, embeddings=embeddings, exclude=exclude, history=history
    )
    chosen, compiled, decisions = _choose(selection, library, facts)
    contexts = _step_contexts(composer, compiled, library, facts, text, model=model, as_of=now)
    view, models = _providers(ws, compiled, library, registry)
    traces = history[0]
    return assemble_plan(
        intent=text,
        selection=selection,
        chosen=chosen,
        compiled=compiled,
        decisions=decisions,
        contexts=contexts,
        models=models,
        timings=step_timings(traces),
        snapshot=_snapshot(ws),
        providers=view,
        facts=facts,
        library=library,
        alternatives=_alternatives(selection, chosen, library, facts),
        degradations=selection.degradations,
    )
