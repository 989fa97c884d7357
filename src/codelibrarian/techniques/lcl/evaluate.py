"""LCL evaluation ``E ⊢ e ⇒ v`` and type checking ``Γ ⊢ e : T``: one structural recursion.

Values: a primitive, a pattern (with its overrides, not yet instantiated) or a
composition tree. The judgments of seed 004's "DSL Formal Semantics":

* ``E ⊢ primitive(id) ⇒ Primitive(id)`` and ``E ⊢ pattern(id) ⇒ CATALOG[id]``;
  ``composition(id)`` gives the library's composition; unknown ids are errors
  (``lcl_primitive_not_found`` ...) with the closest ids as suggestions;
* ``E ⊢ compose(base, overrides) ⇒ merge(base, overrides)``: overrides are applied
  in order; pattern fields (``core_primitives`` ...) only to a pattern base
  (``Partial<T>`` of a pattern), edits to anything (a pattern is instantiated:
  its template over its core primitives, each optional primitive under its
  condition);
* ``E ⊢ when(p, t, e)``: ``p`` must be a ``bool`` over the facts; ``t`` and ``e``
  both compositions (or both edits). When ``p`` can be decided — facts were
  given — only the chosen branch is evaluated (and the choice is recorded as a
  :class:`Decision`). Otherwise the conditional is *residual*: it becomes a
  ``conditional`` node the engine decides when the run starts;
* ``E ⊢ operator(type, [e1..en]) ⇒ OperatorNode(type, [v1..vn])``: the operator
  must exist, its arity and parameters must be valid, and voting operators
  (quorum, consensus) need operands that produce the vote field.

Type checking is the same walk with nothing decided: every branch is visited and
every error collected, so ``typecheck`` reports all of them at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..diagnostics import Diagnostic, Loc, closest
from ..facts import FACTS_SCHEMA
from ..operators import build_operator
from ..patterns import Pattern
from ..predicates import Predicate, PredicateTypeError
from ..registry import Library
from ..templates import apply_template
from ..tree import Node, Step, freeze
from .ast import (
    Add,
    Compose,
    Edit,
    Expr,
    Operator,
    Patch,
    Primitives,
    Ref,
    Remove,
    Replace,
    When,
    WhenEdit,
    Wrap,
)
from .editor import TreeEditor
from .edits import conditional

__all__ = ["CompValue", "Decision", "PatternValue", "Reducer"]


@dataclass(frozen=True, slots=True)
class Decision:
    """A conditional of the program and what became of it (``value`` None: residual)."""

    source: str
    predicate: str
    value: bool | None
    effect: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "when": self.predicate,
            "value": self.value,
            "effect": self.effect,
        }


@dataclass(frozen=True, slots=True)
class PatternValue:
    pattern: Pattern
    core: tuple[str, ...]
    optional: tuple[str, ...]
    template: str
    params: Any


@dataclass(frozen=True, slots=True)
class CompValue:
    root: Node | None
    patterns: tuple[str, ...] = ()
    base: str = ""


@dataclass(frozen=True, slots=True)
class PrimValue:
    primitive: str


Value = PatternValue | CompValue | PrimValue


@dataclass
class Reducer(TreeEditor):
    """One evaluation (or type check) of an LCL expression against a library.

    ``decide`` returns a condition's value, or None to leave it residual; with
    ``decide=None`` everything is residual (the type-checking walk).
    """

    library: Library
    decide: Callable[[Predicate], bool | None] | None = None
    diags: list[Diagnostic] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    # -- helpers ----------------------------------------------------------------

    def check_condition(self, pred: Predicate, loc: Loc) -> bool:
        """``Γ ⊢ p : bool`` over the facts (LCL conditions are decided before the run)."""
        try:
            pred.check(FACTS_SCHEMA, where=loc)
        except PredicateTypeError as exc:
            self.diags.extend(exc.diagnostics)
            return False
        return True

    def choose(self, pred: Predicate, loc: Loc) -> bool | None:
        if not self.check_condition(pred, loc) or self.decide is None:
            return None
        return self.decide(pred)

    # -- expressions ----------------------------------------------------------------

    def reduce(self, e: Expr) -> Value:
        if isinstance(e, Ref):
            return self.ref(e)
        if isinstance(e, Primitives):
            ok = all(
                self.known_primitive(p, loc)
                for p, loc in zip(e.ids, e.id_locs or (e.loc,) * len(e.ids), strict=False)
            )
            if not e.ids:
                self.err("lcl_empty", "the primitives list is empty", e.loc)
                return CompValue(None)
            if not ok:
                return CompValue(None)
            root, diags = apply_template(e.template, e.ids, dict(e.params), loc=e.loc)
            self.diags.extend(diags)
            return CompValue(root)
        if isinstance(e, Compose):
            value = self.reduce(e.base)
            for edit in e.edits:
                value = self.apply(value, edit, None, edit.loc.key or "program")
            return value
        if isinstance(e, When):
            verdict = self.choose(e.predicate, e.loc)
            if verdict is not None:
                self.decisions.append(
                    Decision(
                        "when",
                        e.predicate.text,
                        verdict,
                        "then-branch" if verdict else "else-branch",
                    )
                )
                return self.reduce(e.then if verdict else e.otherwise)
            then_v, else_v = (
                self.as_comp(self.reduce(e.then)),
                self.as_comp(self.reduce(e.otherwise)),
            )
            if then_v.root is None or else_v.root is None:
                return CompValue(then_v.root or else_v.root)
            if self.decide is not None:
                self.decisions.append(Decision("when", e.predicate.text, None, "left to run time"))
            return CompValue(conditional(e.predicate, then_v.root, else_v.root, loc=e.loc))
        return self.operator(e)

    def ref(self, e: Ref) -> Value:
        lib = self.library
        kinds = ("pattern", "composition", "primitive") if e.kind == "any" else (e.kind,)
        tables = {
            "pattern": lib.patterns,
            "composition": lib.compositions,
            "primitive": lib.primitives,
        }
        hits = [k for k in kinds if e.id in tables[k]]
        if not hits:
            pool = [i for k in kinds for i in tables[k]]
            what = "pattern, composition or primitive" if e.kind == "any" else e.kind
            self.err(
                f"lcl_{kinds[0] if len(kinds) == 1 else 'ref'}_not_found",
                f"unknown {what} {e.id!r}",
                e.loc,
                closest(e.id, pool),
            )
            return CompValue(None)
        kind = hits[0]
        if kind == "pattern":
            p = lib.patterns[e.id]
            return PatternValue(
                p, p.core, tuple(o.primitive for o in p.optional), p.template, p.template_params
            )
        if kind == "composition":
            c = lib.compositions[e.id]
            return CompValue(c.root, c.metadata.patterns, c.id)
        return PrimValue(e.id)

    def operator(self, e: Operator) -> Value:
        spec = self.library.operators.get(e.operator)
        if spec is None:
            self.err(
                "lcl_operator_not_found",
                f"unknown operator {e.operator!r}; operators: {', '.join(self.library.operators)}",
                e.loc,
                closest(e.operator, self.library.operators),
            )
            return CompValue(None)
        kids = [self.as_comp(self.reduce(o)).root for o in e.operands]
        children = [k for k in kids if k is not None]
        node, diags = build_operator(spec, e.params, children, loc=e.loc, param_locs=e.param_locs)
        self.diags.extend(diags)
        return CompValue(node)

    # -- values -----------------------------------------------------------------

    def as_comp(self, v: Value) -> CompValue:
        if isinstance(v, CompValue):
            return v
        if isinstance(v, PrimValue):
            return CompValue(Step(v.primitive))
        p = v.pattern
        locs = p.template_locs if v.template == p.template else {}
        root, diags = apply_template(v.template, v.core, dict(v.params), loc=p.loc, param_locs=locs)
        self.diags.extend(diags)
        value: Value = CompValue(root, (p.id,), p.id)
        for opt in p.optional:
            if opt.primitive not in v.optional:
                continue
            add = Add(opt.primitive, opt.position, loc=p.loc)
            edit = WhenEdit(opt.condition, (add,), (), loc=p.loc)
            value = self.apply(value, edit, None, f"{p.id} optional {opt.primitive}")
        assert isinstance(value, CompValue)
        return value

    # -- edits ----------------------------------------------------------------------

    def apply(self, v: Value, edit: Edit, cond: Predicate | None, source: str) -> Value:
        if isinstance(edit, Patch):
            return self.patch(v, edit, cond)
        if isinstance(edit, WhenEdit) and any(
            isinstance(e, Patch) for e in (*edit.then, *edit.otherwise)
        ):
            self.err(
                "lcl_conditional_override",
                "pattern fields cannot be overridden under a condition; use add/remove/replace",
                edit.loc,
            )
            return v
        if isinstance(v, PatternValue):
            v = self.as_comp(v)  # instantiate first, so its decisions come first
        if isinstance(edit, WhenEdit):
            verdict = self.choose(edit.predicate, edit.loc)
            if verdict is not None:
                chosen = edit.then if verdict else edit.otherwise
                effect = self.describe(chosen) if chosen else "nothing"
                self.decisions.append(Decision(source, edit.predicate.text, verdict, effect))
                for e in chosen:
                    v = self.apply(v, e, cond, source)
                return v
            if self.decide is not None:
                self.decisions.append(
                    Decision(
                        source,
                        edit.predicate.text,
                        None,
                        "left to run time: " + self.describe((*edit.then, *edit.otherwise)),
                    )
                )
            neg = edit.predicate.negated()
            then_cond = (
                edit.predicate
                if cond is None
                else Predicate.parse(f"({cond.text}) and ({edit.predicate.text})")
            )
            else_cond = neg if cond is None else Predicate.parse(f"({cond.text}) and ({neg.text})")
            for e in edit.then:
                v = self.apply(v, e, then_cond, source)
            for e in edit.otherwise:
                v = self.apply(v, e, else_cond, source)
            return v
        comp = self.as_comp(v)
        if comp.root is None:
            return comp
        root = self.edit_tree(comp.root, edit, cond)
        return replace(comp, root=root)

    @staticmethod
    def describe(edits: tuple[Edit, ...]) -> str:
        parts = []
        for e in edits:
            if isinstance(e, Add):
                parts.append(f"add {e.primitive}")
            elif isinstance(e, Remove):
                parts.append(f"remove {e.target}")
            elif isinstance(e, Replace):
                parts.append(f"replace {e.old} by {e.new}")
            elif isinstance(e, Wrap):
                parts.append(f"wrap {', '.join(e.inputs)} in {e.operator}")
            elif isinstance(e, WhenEdit):
                parts.append(f"when {e.predicate.text}: ...")
            else:
                parts.append("override pattern fields")
        return "; ".join(parts)

    def patch(self, v: Value, p: Patch, cond: Predicate | None) -> Value:
        if cond is not None:
            self.err(
                "lcl_conditional_override",
                "pattern fields cannot be overridden under a condition; use add/remove/replace",
                p.loc,
            )
            return v
        if not isinstance(v, PatternValue):
            self.err(
                "lcl_override_needs_pattern",
                "core_primitives, optional_primitives and template override a *pattern*; "
                "this base is not one (use add/remove/replace)",
                p.loc,
            )
            return v
        core, optional, template, params = v.core, v.optional, v.template, v.params
        if p.core_primitives is not None:
            if not p.core_primitives:
                self.err(
                    "lcl_empty",
                    "core_primitives cannot be empty",
                    p.locs.get("core_primitives", p.loc),
                )
            at = p.locs.get("core_primitives", p.loc)
            known = [
                self.known_primitive(x, p.locs.get(f"core_primitives[{i}]", at))
                for i, x in enumerate(p.core_primitives)
            ]
            if all(known):
                core = p.core_primitives
        if p.optional_primitives is not None:
            offered = {o.primitive for o in v.pattern.optional}
            for x in p.optional_primitives:
                if x not in offered:
                    self.err(
                        "lcl_not_optional",
                        f"{x!r} is not an optional primitive of {v.pattern.id}",
                        p.locs.get(
                            f"optional_primitives[{p.optional_primitives.index(x)}]",
                            p.locs.get("optional_primitives", p.loc),
                        ),
                        closest(x, offered),
                    )
            optional = tuple(x for x in p.optional_primitives if x in offered)
        if p.template is not None:
            template = p.template
            params = freeze(dict(p.template_params or {}))
        elif p.template_params is not None:
            params = freeze({**dict(params), **dict(p.template_params)})
        return PatternValue(v.pattern, core, optional, template, params)
