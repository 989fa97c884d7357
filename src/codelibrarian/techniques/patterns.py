"""The pattern catalog (seed 004 P5): when to use which primitives, and how.

A :class:`Pattern` is reusable advice: its archetype, the situations it fits
(each a trigger, context signals, a heuristic match score and at least five
realistic example intents — what planning compares a task against), core
primitives, optional primitives with ``include_when``/``exclude_when``
conditions *in the predicate language* (so they can be evaluated on codebase and
change facts), operator recommendations, anti-patterns, success and failure
signals, its default structure (a template over the core primitives) and the
compositions that realize it.

Using a pattern in LCL instantiates its structure over the core primitives and
adds each optional primitive under its condition (see :mod:`.lcl.evaluate`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .composition import Metadata, read_metadata
from .diagnostics import Loc
from .predicates import Predicate, PredicateSyntaxError, parse
from .reader import Reader
from .templates import TEMPLATES
from .tree import freeze, thaw
from .vocabulary import ARCHETYPES

__all__ = [
    "MIN_EXAMPLES",
    "AntiPattern",
    "OperatorRecommendation",
    "OptionalPrimitive",
    "Pattern",
    "Situation",
    "read_pattern",
]

MIN_EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class Situation:
    trigger: str
    context: tuple[str, ...]
    #: heuristic match score in thousandths (not a calibrated confidence)
    match_score: int
    examples: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "trigger": self.trigger,
            "context": list(self.context),
            "match_score_per_mille": self.match_score,
            "examples": list(self.examples),
        }


@dataclass(frozen=True, slots=True)
class OptionalPrimitive:
    primitive: str
    include_when: Predicate
    exclude_when: Predicate | None
    rationale: str
    #: where it goes when included: "end", "start", "before:<step>", "after:<step>"
    position: str = "end"

    @property
    def condition(self) -> Predicate:
        """Included when ``include_when and not exclude_when``."""
        if self.exclude_when is None:
            return self.include_when
        return Predicate.parse(f"({self.include_when.text}) and not ({self.exclude_when.text})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "primitive": self.primitive,
            "include_when": self.include_when.text,
            "exclude_when": self.exclude_when.text if self.exclude_when else None,
            "rationale": self.rationale,
            "position": self.position,
        }


@dataclass(frozen=True, slots=True)
class OperatorRecommendation:
    operator: str
    purpose: str
    placement: str
    conditions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "purpose": self.purpose,
            "placement": self.placement,
            "conditions": list(self.conditions),
        }


@dataclass(frozen=True, slots=True)
class AntiPattern:
    description: str
    why_bad: str
    better_alternative: str

    def to_dict(self) -> dict[str, str]:
        return {
            "description": self.description,
            "why_bad": self.why_bad,
            "better_alternative": self.better_alternative,
        }


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    name: str
    archetype: str
    description: str
    situations: tuple[Situation, ...]
    core: tuple[str, ...]
    optional: tuple[OptionalPrimitive, ...]
    operators: tuple[OperatorRecommendation, ...]
    anti_patterns: tuple[AntiPattern, ...]
    examples: tuple[str, ...]
    success_signals: tuple[str, ...]
    failure_signals: tuple[str, ...]
    template: str = "pipeline"
    template_params: Mapping[str, Any] = field(default_factory=dict)
    metadata: Metadata = field(default_factory=Metadata)
    #: where each structure parameter is written (for positioned errors)
    template_locs: Mapping[str, Loc] = field(default_factory=dict, compare=False)
    origin: str = "builtin"
    loc: Loc = field(default_factory=Loc, compare=False)

    @property
    def primitives(self) -> tuple[str, ...]:
        """Core then optional primitive ids, without repeats."""
        return tuple(dict.fromkeys([*self.core, *(o.primitive for o in self.optional)]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "archetype": self.archetype,
            "description": self.description,
            "metadata": self.metadata.to_dict(),
            "situations": [s.to_dict() for s in self.situations],
            "core_primitives": list(self.core),
            "optional_primitives": [o.to_dict() for o in self.optional],
            "structure": {"template": self.template, "params": thaw(self.template_params)},
            "operators": [o.to_dict() for o in self.operators],
            "anti_patterns": [a.to_dict() for a in self.anti_patterns],
            "examples": list(self.examples),
            "success_signals": list(self.success_signals),
            "failure_signals": list(self.failure_signals),
            "origin": self.origin,
        }


def _pred(r: Reader, key: str, *, required: bool) -> Predicate | None:
    text = r.text(key, required=required)
    if not text:
        return None
    try:
        return parse(text, where=r.loc(key))
    except PredicateSyntaxError as exc:
        r.diags.extend(exc.diagnostics)
        return None


def _situation(r: Reader) -> Situation | None:
    r.only(("trigger", "context", "match_score", "examples"), what="in a situation")
    examples = r.strs("examples", required=True)
    if len(examples) < MIN_EXAMPLES:
        r.error(
            "lcl_pattern_examples",
            f"a situation needs at least {MIN_EXAMPLES} example intents (has {len(examples)})",
            "examples",
        )
    context = r.strs("context", required=True)
    if not context:
        r.error("lcl_missing_key", "a situation needs context signals", "context")
    return Situation(
        r.text("trigger", required=True), context, r.per_mille("match_score", default=500), examples
    )


def read_pattern(r: Reader, primitives: Collection[str], operator_ids: list[str]) -> Pattern | None:
    before = sum(1 for d in r.diags if d.severity == "error")
    r.only(
        ("id", "name", "archetype", "description", "actions", "domains", "scopes", "situations",
         "core_primitives", "optional_primitives", "structure", "operators", "anti_patterns",
         "examples", "success_signals", "failure_signals"),
        what="in a pattern",
    )  # fmt: skip

    core = r.strs("core_primitives", required=True)
    for i, pid in enumerate(core):
        r.known(pid, primitives, "core_primitives", i)
    optional: list[OptionalPrimitive] = []
    for o in r.tables("optional_primitives"):
        o.only(("primitive", "include_when", "exclude_when", "rationale", "position"))
        pid = o.text("primitive", required=True)
        o.known(pid, primitives, "primitive")
        inc = _pred(o, "include_when", required=True)
        exc = _pred(o, "exclude_when", required=False)
        if inc is not None:
            optional.append(
                OptionalPrimitive(
                    pid,
                    inc,
                    exc,
                    o.text("rationale", required=True),
                    o.text("position", default="end"),
                )
            )
    situations = [s for t in r.tables("situations") if (s := _situation(t)) is not None]
    if not situations:
        r.error("lcl_missing_key", "a pattern needs at least one [[situations]]")
    ops = []
    for t in r.tables("operators"):
        t.only(("operator", "purpose", "placement", "conditions"))
        op = t.choice("operator", operator_ids, required=True)
        ops.append(
            OperatorRecommendation(
                op,
                t.text("purpose", required=True),
                t.text("placement", required=True),
                t.strs("conditions"),
            )
        )
    antis = []
    for t in r.tables("anti_patterns"):
        t.only(("description", "why_bad", "better_alternative"))
        antis.append(
            AntiPattern(
                t.text("description", required=True),
                t.text("why_bad", required=True),
                t.text("better_alternative", required=True),
            )
        )
    structure = r.table("structure", required=True)
    template, params, plocs = "pipeline", {}, {}
    if structure is not None:
        structure.only(("template", "params"))
        template = structure.choice("template", tuple(TEMPLATES), required=True) or "pipeline"
        table = structure.table("params")
        params = dict(table.data) if table else {}
        plocs = {k: structure.loc("params", k) for k in params}
    for key in ("success_signals", "failure_signals", "examples"):
        if not r.strs(key, required=True):
            r.error("lcl_missing_key", f"{key!r} must not be empty", key)
    if not antis:
        r.error("lcl_missing_key", "a pattern needs at least one [[anti_patterns]]")
    pattern = Pattern(
        id=r.text("id", required=True),
        name=r.text("name", required=True),
        archetype=r.choice("archetype", ARCHETYPES, required=True),
        description=r.text("description", required=True),
        situations=tuple(situations),
        core=core,
        optional=tuple(optional),
        operators=tuple(ops),
        anti_patterns=tuple(antis),
        examples=r.strs("examples"),
        success_signals=r.strs("success_signals"),
        failure_signals=r.strs("failure_signals"),
        template=template,
        template_params=freeze(params),
        metadata=read_metadata(r),
        loc=r.loc(),
        template_locs=plocs,
    )
    after = sum(1 for d in r.diags if d.severity == "error")
    return pattern if after == before else None
