"""The enriched plan (seed 004 P20): what will run, what each step sees and costs, and why.

:func:`assemble_plan` is pure: the shell (``service/planning.py``) gathers the
selection, the chosen composition compiled and decided on the facts, each step's
context *as composed* (tokens measured, not guessed), the providers' status, the
codebase snapshot and past step timings, and this module turns them into an
:class:`EnrichedPlan` — steps with budgets, measured tokens, expected runs and
times, the model matched to every ``llm`` step; estimates; the rationale
(selection, each primitive's inclusion, each operator, assumptions, limitations);
alternatives with why-not and trade-offs; and the degradations met on the way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UnverifiedByTrace
from ..techniques.tree import OperatorNode, preorder, steps_of
from .decide import PlanDecision
from .estimate import expected_runs, step_time, total_ms
from .history import StepTiming
from .selector import Candidate, Selection

if TYPE_CHECKING:
    from ..techniques.facts import Facts
    from ..techniques.lcl import CompiledComposition
    from ..techniques.registry import Library

__all__ = [
    "PLAN_SCHEMA",
    "Alternative",
    "EnrichedPlan",
    "ModelChoice",
    "ProviderView",
    "Snapshot",
    "StepContext",
    "StepPlan",
    "assemble_plan",
]

PLAN_SCHEMA = "codelibrarian.plan/1"


@dataclass(frozen=True, slots=True)
class StepContext:
    """A step's context pack as composed for the plan: its query and measured size."""

    query: str
    budget: int
    tokens: int
    role: str
    lanes: tuple[str, ...]
    files: int


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The provider model an ``llm`` step would use, or why none (the agent does it)."""

    provider: str | None
    model: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ProviderView:
    checked: bool
    available: tuple[str, ...] = ()
    unavailable: tuple[tuple[str, str], ...] = ()
    preferred: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "available": list(self.available),
            "unavailable": [{"provider": p, "status": s} for p, s in self.unavailable],
            "preferred": self.preferred,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class Snapshot:
    commit: str | None
    modified_files: tuple[str, ...]
    test_status: str
    tests_recorded_at: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "modified_files": list(self.modified_files),
            "test_status": self.test_status,
            "tests_recorded_at": self.tests_recorded_at,
        }


@dataclass(frozen=True, slots=True)
class StepPlan:
    step_id: str
    primitive: str
    name: str
    executor: str
    context: StepContext
    runs: int
    time_ms: int
    time_source: str
    why: str
    model: ModelChoice | None = None

    def to_dict(self) -> dict[str, Any]:
        c = self.context
        out: dict[str, Any] = {
            "step": self.step_id,
            "primitive": self.primitive,
            "name": self.name,
            "executor": self.executor,
            "role": c.role,
            "lanes": list(c.lanes),
            "query": c.query,
            "budget_tokens": c.budget,
            "context_tokens": c.tokens,
            "context_files": c.files,
            "expected_runs": self.runs,
            "time_ms": self.time_ms,
            "time_source": self.time_source,
            "why": self.why,
        }
        if self.model is not None:
            out["model"] = self.model.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class Alternative:
    kind: str
    id: str
    name: str
    score: int
    why_not: str
    tradeoffs: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "name": self.name,
            "score_per_mille": self.score,
            "why_not": self.why_not,
            "tradeoffs": list(self.tradeoffs),
        }


@dataclass(frozen=True, slots=True)
class EnrichedPlan:
    intent: str
    selection: Selection
    chosen: Candidate
    compiled: CompiledComposition
    decisions: tuple[PlanDecision, ...]
    steps: tuple[StepPlan, ...]
    total_tokens: int
    total_ms: int
    api_calls: int
    estimate_confidence: int
    snapshot: Snapshot
    providers: ProviderView
    rationale: Mapping[str, Any]
    alternatives: tuple[Alternative, ...]
    degradations: tuple[UnverifiedByTrace, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        comp = self.compiled
        return {
            "schema": PLAN_SCHEMA,
            "intent": self.selection.intent.to_dict() | {"text": self.intent},
            "selection": {
                "pattern": self.selection.pattern.id,
                "composition": self.chosen.id,
                "kind": self.chosen.kind,
                "score_per_mille": self.chosen.score,
                "confidence_per_mille": self.selection.confidence,
                "mode": self.selection.mode,
                "matcher": self.selection.matcher,
                "aspects": [a.to_dict() for a in self.chosen.aspects],
                "pattern_aspects": [a.to_dict() for a in self.selection.pattern.aspects],
            },
            "plan": {
                "id": comp.composition.id,
                "name": comp.composition.name,
                "description": comp.composition.description,
                "stratum": comp.stratum,
                "policy": comp.policy.to_dict(),
                "tree": comp.root.to_dict(),
                "steps": [s.to_dict() for s in self.steps],
            },
            "decisions": [d.to_dict() for d in self.decisions],
            "estimates": {
                "tokens_by_step": {s.step_id: s.context.tokens * s.runs for s in self.steps},
                "time_by_step_ms": {s.step_id: s.time_ms * s.runs for s in self.steps},
                "total_tokens": self.total_tokens,
                "total_time_ms": self.total_ms,
                "api_calls": self.api_calls,
                "confidence_per_mille": self.estimate_confidence,
            },
            "context": {"snapshot": self.snapshot.to_dict(), "providers": self.providers.to_dict()},
            "rationale": dict(self.rationale),
            "alternatives": [a.to_dict() for a in self.alternatives],
            "degradations": [d.to_dict() for d in self.degradations],
        }


# ------------------------------------------------------------------------- rationale


def _why_step(
    primitive: str,
    library: Library,
    chosen: Candidate,
    pattern_id: str,
    decisions: Sequence[PlanDecision],
) -> str:
    p = library.primitive(primitive)
    pattern = library.patterns.get(pattern_id)
    by: list[str] = []
    if pattern is not None and primitive in pattern.core:
        by.append(f"a core primitive of {pattern.name}")
    for d in decisions:
        if d.value is not None and primitive in d.effect and d.effect.startswith(("runs", "adds")):
            by.append(f"included because {d.when} is {str(d.value).lower()}")
    if chosen.kind == "composition":
        by.append(f"a step of {chosen.name} as written")
    tail = f" ({'; '.join(by)})" if by else ""
    return f"{p.description}{tail}"


def _why_operator(node: OperatorNode, library: Library, pattern_id: str) -> str:
    pattern = library.patterns.get(pattern_id)
    rec = (
        next((r for r in pattern.operators if r.operator == node.operator), None)
        if pattern
        else None
    )
    params = ", ".join(f"{k}={_param(v)}" for k, v in sorted(node.params.items()))
    shown = f" ({params})" if params else ""
    if rec is not None:
        by = pattern.name if pattern is not None else "the pattern"
        return f"{node.operator}{shown}: {rec.purpose} (recommended by {by})"
    spec = library.operators.get(node.operator)
    return f"{node.operator}{shown}: {spec.description if spec else 'an extension operator'}"


def _param(value: Any) -> str:
    text = getattr(value, "text", None)
    return str(text) if text is not None else str(value)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _assumptions(facts: Facts, snapshot: Snapshot, timed: int, steps: int) -> list[str]:
    env = facts.env()
    cb, ch = env.get("codebase", {}), env.get("change", {})
    out = [
        f"the codebase facts come from the index ({cb.get('file_count', 0)} files, "
        f"{cb.get('primary_language') or 'no parsed language'}"
        f"{', tests present' if cb.get('has_tests') else ', no tests found'})",
    ]
    if ch.get("present"):
        touched = [
            k.removeprefix("touches_")
            for k, v in sorted(ch.items())
            if k.startswith("touches_") and v
        ]
        out.append(
            f"the current change ({_n(ch.get('files_changed', 0), 'file')}, "
            f"{_n(ch.get('lines_changed', 0), 'line')}) is the work in progress"
            + (f"; it touches {', '.join(touched)}" if touched else "")
        )
    else:
        out.append("there is no current change: the steps start from the committed code")
    out.append("agent steps are carried out by the calling agent, one context pack each")
    if timed < steps:
        out.append(
            f"{steps - timed} of {steps} step durations are documented defaults, not measurements"
        )
    if snapshot.test_status == "unknown":
        out.append("the test status is unknown (record it with `librarian vitals record --tests`)")
    return out


def _limitations(
    decisions: Sequence[PlanDecision], steps: Sequence[StepPlan], selection: Selection
) -> list[str]:
    out: list[str] = []
    residual = [d for d in decisions if d.value is None]
    if residual:
        out.append(
            f"{len(residual)} condition(s) depend on step outputs and are decided at run time"
        )
    fallback = [s.step_id for s in steps if s.model is not None and s.model.provider is None]
    if fallback:
        out.append(f"no provider model for {', '.join(fallback)}: the calling agent does them")
    if selection.confidence < 500:
        out.append(f"selection confidence is low ({selection.confidence}‰): check the alternatives")
    out.append(
        "token estimates are the context packs composed now; later steps' packs also pin "
        "files earlier steps find, which cannot be known before the run"
    )
    return out


def _declared(compiled: CompiledComposition, library: Library) -> tuple[int, int, int]:
    """(steps, agent steps, declared context budget) of a compiled composition."""
    steps = steps_of(compiled.root)
    prims = [library.primitive(s.primitive) for s in steps]
    agent = sum(1 for p in prims if p.executor == "agent")
    return len(steps), agent, sum(p.context.budget for p in prims)


def _tradeoffs(
    compiled: CompiledComposition | None, chosen: CompiledComposition, library: Library
) -> tuple[str, ...]:
    if compiled is None:
        return ()
    n, agent, budget = _declared(compiled, library)
    cn, cagent, cbudget = _declared(chosen, library)
    out = [
        f"{n} steps vs {cn} ({agent} vs {cagent} for the agent)",
        f"declared context budgets {budget} vs {cbudget} tokens",
    ]
    if compiled.stratum != chosen.stratum:
        out.append(f"stratum {compiled.stratum} vs {chosen.stratum}")
    return tuple(out)


def why_not(alt: Candidate, chosen: Candidate) -> str:
    """The aspects where ``alt`` lost (or won) points against ``chosen``."""
    diffs = []
    for a, b in zip(alt.aspects, chosen.aspects, strict=True):
        d = a.points - b.points
        if d:
            diffs.append((d, a.name, a.why))
    diffs.sort(key=lambda t: (t[0], t[1]))
    parts = [f"{name} {d:+d} ({why})" for d, name, why in diffs[:2] if d < 0]
    gains = [f"{name} {d:+d}" for d, name, _ in reversed(diffs) if d > 0][:2]
    text = f"scores {alt.score}‰ vs {chosen.score}‰"
    if parts:
        text += "; loses on " + "; ".join(parts)
    if gains:
        text += "; gains on " + ", ".join(gains)
    return text


def assemble_plan(
    *,
    intent: str,
    selection: Selection,
    chosen: Candidate,
    compiled: CompiledComposition,
    decisions: Sequence[PlanDecision],
    contexts: Mapping[str, StepContext],
    models: Mapping[str, ModelChoice],
    timings: Mapping[str, StepTiming],
    snapshot: Snapshot,
    providers: ProviderView,
    facts: Facts,
    library: Library,
    alternatives: Sequence[tuple[Candidate, CompiledComposition | None]],
    degradations: Sequence[UnverifiedByTrace] = (),
) -> EnrichedPlan:
    """The plan (module docstring); every input is a value, the output too."""
    pattern_id = selection.pattern.id
    runs = expected_runs(compiled.root)
    steps: list[StepPlan] = []
    durations: dict[str, int] = {}
    timed = 0
    for s in steps_of(compiled.root):
        prim = library.primitive(s.primitive)
        t = step_time(s.primitive, prim.executor, timings)
        timed += t.source == "history"
        durations[s.step_id] = t.ms
        steps.append(
            StepPlan(
                step_id=s.step_id,
                primitive=s.primitive,
                name=prim.name,
                executor=prim.executor,
                context=contexts[s.step_id],
                runs=runs.get(s.step_id, 1),
                time_ms=t.ms,
                time_source=t.explain(),
                why=_why_step(s.primitive, library, chosen, pattern_id, decisions),
                model=models.get(s.step_id),
            )
        )
    total_tokens = sum(s.context.tokens * s.runs for s in steps)
    api_calls = sum(s.runs for s in steps if s.executor == "llm" and s.model and s.model.provider)
    confidence = 300 + 700 * timed // max(1, len(steps))
    operators = {
        n.node_id: _why_operator(n, library, pattern_id)
        for n in preorder(compiled.root)
        if isinstance(n, OperatorNode)
    }
    p = selection.pattern
    sel_text = (
        f"{p.name} scores {p.score}‰ for a '{selection.intent.action}' request about "
        f"{', '.join(selection.intent.domain_words)}; "
        + "; ".join(f"{a.name} {a.points} ({a.why})" for a in p.aspects)
    )
    if chosen.kind == "composition":
        sel_text += f". {chosen.name} realizes it best ({chosen.score}‰)"
    rationale = {
        "selection": sel_text,
        "primitives": {s.step_id: s.why for s in steps},
        "operators": operators,
        "assumptions": _assumptions(facts, snapshot, timed, len(steps)),
        "limitations": _limitations(decisions, steps, selection),
    }
    alts = tuple(
        Alternative(
            a.kind, a.id, a.name, a.score, why_not(a, chosen), _tradeoffs(comp, compiled, library)
        )
        for a, comp in alternatives
    )
    return EnrichedPlan(
        intent=intent,
        selection=selection,
        chosen=chosen,
        compiled=compiled,
        decisions=tuple(decisions),
        steps=tuple(steps),
        total_tokens=total_tokens,
        total_ms=total_ms(compiled.root, durations),
        api_calls=api_calls,
        estimate_confidence=confidence,
        snapshot=snapshot,
        providers=providers,
        rationale=rationale,
        alternatives=alts,
        degradations=tuple(degradations),
    )
