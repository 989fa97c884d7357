"""The fluent Python surface of LCL, and the formal-core constructors.

::

    from codelibrarian.techniques import lcl

    program = (
        lcl.compose("my_workflow")
        .use("pattern_bug_investigation")
        .override(core_primitives=["tp_hypothesis", "tp_bisect"])
        .when("codebase.has_tests == false").add("tp_review_tests")
        .done()
    )
    compiled = program.compile()            # or lcl.compile(program, facts=...)

``when(p)`` guards the one edit that follows it; ``otherwise()`` gives the last
``when`` an else-branch. The formal core is available directly:
``lcl.primitive(id)``, ``lcl.pattern(id)``, ``lcl.composition(id)``,
``lcl.choose(pred, then, otherwise)`` and ``lcl.operator(type, *operands, **params)``
build expressions that ``use()`` accepts. The TOML and JSON surfaces are read
through this same builder, so all three produce one AST.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..composition import Metadata, Relationship
from ..diagnostics import Diagnostic, LclError, Loc
from ..predicates import Predicate, parse
from ..vocabulary import RELATIONSHIP_KINDS
from .ast import (
    Add,
    Compose,
    Edit,
    Expr,
    Operator,
    Patch,
    Primitives,
    Program,
    Ref,
    Remove,
    Replace,
    When,
    WhenEdit,
    Wrap,
)

__all__ = [
    "ProgramBuilder",
    "choose",
    "compose",
    "composition",
    "operator",
    "pattern",
    "primitive",
]

_BUILDER = Loc("<builder>")


def _pred(text: str | Predicate, loc: Loc | None) -> Predicate:
    return text if isinstance(text, Predicate) else parse(text, where=loc)


def primitive(pid: str) -> Ref:
    return Ref("primitive", pid)


def pattern(pid: str) -> Ref:
    return Ref("pattern", pid)


def composition(cid: str) -> Ref:
    return Ref("composition", cid)


def choose(when: str | Predicate, then: Expr | str, otherwise: Expr | str) -> When:
    """``when(pred, then, else)`` over whole expressions (ids are looked up as any kind)."""
    return When(_pred(when, None), _expr(then), _expr(otherwise))


def operator(kind: str, *operands: Expr | str, **params: Any) -> Operator:
    return Operator(kind, tuple(_expr(o) for o in operands), dict(params))


def _expr(value: Expr | str) -> Expr:
    return Ref("any", value) if isinstance(value, str) else value


class _When:
    def __init__(self, builder: ProgramBuilder, pred: Predicate, loc: Loc | None) -> None:
        self._b = builder
        self._pred = pred
        self._loc = loc or _BUILDER

    def _guard(self, edit: Edit) -> ProgramBuilder:
        self._b._edits.append(WhenEdit(self._pred, (edit,), (), loc=self._loc))
        return self._b

    def add(
        self, pid: str, *, position: str = "end", loc: Loc | None = None, **params: Any
    ) -> ProgramBuilder:
        return self._guard(Add(pid, position, params, loc=loc or self._loc))

    def remove(self, target: str, *, loc: Loc | None = None) -> ProgramBuilder:
        return self._guard(Remove(target, loc=loc or self._loc))

    def replace(self, old: str, new: str, *, loc: Loc | None = None) -> ProgramBuilder:
        return self._guard(Replace(old, new, loc=loc or self._loc))

    def wrap(
        self, kind: str, inputs: Sequence[str], *, loc: Loc | None = None, **params: Any
    ) -> ProgramBuilder:
        return self._guard(Wrap(kind, tuple(inputs), params, loc=loc or self._loc))


class _Otherwise:
    def __init__(self, builder: ProgramBuilder, index: int) -> None:
        self._b = builder
        self._i = index

    def _else(self, edit: Edit) -> ProgramBuilder:
        w = self._b._edits[self._i]
        assert isinstance(w, WhenEdit)
        self._b._edits[self._i] = replace(w, otherwise=(*w.otherwise, edit))
        return self._b

    def add(
        self, pid: str, *, position: str = "end", loc: Loc | None = None, **params: Any
    ) -> ProgramBuilder:
        return self._else(Add(pid, position, params, loc=loc or _BUILDER))

    def remove(self, target: str, *, loc: Loc | None = None) -> ProgramBuilder:
        return self._else(Remove(target, loc=loc or _BUILDER))

    def replace(self, old: str, new: str, *, loc: Loc | None = None) -> ProgramBuilder:
        return self._else(Replace(old, new, loc=loc or _BUILDER))

    def wrap(
        self, kind: str, inputs: Sequence[str], *, loc: Loc | None = None, **params: Any
    ) -> ProgramBuilder:
        return self._else(Wrap(kind, tuple(inputs), params, loc=loc or _BUILDER))


class ProgramBuilder:
    """Builds one :class:`~.ast.Program`; every method returns the builder."""

    def __init__(
        self, name: str, *, description: str = "", source: str = "<builder>", loc: Loc | None = None
    ) -> None:
        self._name = name
        self._description = description
        self._source = source
        self._loc = loc or Loc(source)
        self._base: Expr | None = None
        self._edits: list[Edit] = []
        self._relationships: list[Relationship] = []
        self._metadata = Metadata()
        self._stratum: str | None = None
        self._problems: list[Diagnostic] = []

    # -- base --------------------------------------------------------------------

    def use(self, base: Expr | str, *, kind: str = "any", loc: Loc | None = None) -> ProgramBuilder:
        """Start from a pattern, composition or primitive id (or any expression)."""
        if isinstance(base, str):
            base = Ref(kind, base, loc=loc or _BUILDER)  # type: ignore[arg-type]
        self._set_base(base, loc)
        return self

    def use_pattern(self, pid: str, *, loc: Loc | None = None) -> ProgramBuilder:
        return self.use(pid, kind="pattern", loc=loc)

    def use_composition(self, cid: str, *, loc: Loc | None = None) -> ProgramBuilder:
        return self.use(cid, kind="composition", loc=loc)

    def primitives(
        self,
        *ids: str,
        template: str = "pipeline",
        loc: Loc | None = None,
        id_locs: Sequence[Loc] = (),
        **params: Any,
    ) -> ProgramBuilder:
        self._set_base(
            Primitives(tuple(ids), template, params, loc=loc or _BUILDER, id_locs=tuple(id_locs)),
            loc,
        )
        return self

    def _set_base(self, base: Expr, loc: Loc | None) -> None:
        if self._base is not None:
            self._problems.append(
                Diagnostic(
                    "lcl_two_bases",
                    "the program already has a base; give exactly one",
                    loc or _BUILDER,
                )
            )
        self._base = base

    # -- overrides and edits ---------------------------------------------------------

    def override(
        self,
        *,
        core_primitives: Sequence[str] | None = None,
        optional_primitives: Sequence[str] | None = None,
        template: str | None = None,
        template_params: Mapping[str, Any] | None = None,
        loc: Loc | None = None,
        locs: Mapping[str, Loc] | None = None,
    ) -> ProgramBuilder:
        self._edits.append(
            Patch(
                None if core_primitives is None else tuple(core_primitives),
                None if optional_primitives is None else tuple(optional_primitives),
                template,
                template_params,
                loc=loc or _BUILDER,
                locs=dict(locs or {}),
            )
        )
        return self

    def add(
        self, pid: str, *, position: str = "end", loc: Loc | None = None, **params: Any
    ) -> ProgramBuilder:
        self._edits.append(Add(pid, position, params, loc=loc or _BUILDER))
        return self

    def remove(self, target: str, *, loc: Loc | None = None) -> ProgramBuilder:
        self._edits.append(Remove(target, loc=loc or _BUILDER))
        return self

    def replace(self, old: str, new: str, *, loc: Loc | None = None) -> ProgramBuilder:
        self._edits.append(Replace(old, new, loc=loc or _BUILDER))
        return self

    def wrap(
        self,
        kind: str,
        inputs: Sequence[str],
        *,
        loc: Loc | None = None,
        param_locs: Mapping[str, Loc] | None = None,
        **params: Any,
    ) -> ProgramBuilder:
        """Put operator ``kind`` around the ``inputs`` steps (siblings, adjacent in a sequence)."""
        self._edits.append(
            Wrap(
                kind, tuple(inputs), params, loc=loc or _BUILDER, param_locs=dict(param_locs or {})
            )
        )
        return self

    operator = wrap  # the seed's name for it

    def when(self, predicate: str | Predicate, *, loc: Loc | None = None) -> _When:
        """Guard the next edit: ``.when("change.touches_auth").add("tp_threat_model")``."""
        return _When(self, _pred(predicate, loc), loc)

    def edit(self, edit: Edit) -> ProgramBuilder:
        """Append an already-built edit (used by the file surfaces)."""
        self._edits.append(edit)
        return self

    def otherwise(self) -> _Otherwise:
        """The else-branch of the last ``when``."""
        for i in range(len(self._edits) - 1, -1, -1):
            if isinstance(self._edits[i], WhenEdit):
                return _Otherwise(self, i)
        raise LclError(
            [
                Diagnostic(
                    "lcl_otherwise_without_when", "otherwise() needs a when() before it", _BUILDER
                )
            ]
        )

    # -- program fields ----------------------------------------------------------------

    def relate(
        self,
        source: str,
        kind: str,
        target: str,
        *,
        rationale: str = "",
        weight: float | int | str = 0.5,
        loc: Loc | None = None,
    ) -> ProgramBuilder:
        """Declare an edge between primitives (checked at compile time)."""
        from decimal import Decimal

        where = loc or _BUILDER
        if kind not in RELATIONSHIP_KINDS:
            from ..diagnostics import closest

            self._problems.append(
                Diagnostic(
                    "lcl_bad_value",
                    f"unknown relationship kind {kind!r}",
                    where,
                    closest(kind, RELATIONSHIP_KINDS),
                )
            )
            return self
        d = Decimal(repr(weight)) if isinstance(weight, float) else Decimal(weight)
        pm = int(d * 1000) if 0 <= d <= 1 else 500
        self._relationships.append(Relationship(source, kind, target, rationale, pm, where))
        return self

    def tag(
        self,
        *,
        actions: Iterable[str] = (),
        domains: Iterable[str] = (),
        scopes: Iterable[str] = (),
        patterns: Iterable[str] = (),
    ) -> ProgramBuilder:
        self._metadata = Metadata(tuple(actions), tuple(domains), tuple(scopes), tuple(patterns))
        return self

    def require_stratum(self, stratum: str) -> ProgramBuilder:
        self._stratum = stratum
        return self

    def describe(self, text: str) -> ProgramBuilder:
        self._description = text
        return self

    def done(self) -> Program:
        """The program; raises :class:`LclError` when it has no base."""
        problems = list(self._problems)
        if self._base is None:
            problems.append(
                Diagnostic(
                    "lcl_no_base",
                    "the program has no base: call use(...) or primitives(...)",
                    self._loc,
                )
            )
        if problems:
            raise LclError(problems)
        assert self._base is not None
        expr: Expr = (
            Compose(self._base, tuple(self._edits), loc=self._loc) if self._edits else self._base
        )
        return Program(
            self._name,
            expr,
            self._description,
            tuple(self._relationships),
            self._metadata,
            self._stratum,
            self._source,
            self._loc,
        )


def compose(name: str, *, description: str = "") -> ProgramBuilder:
    """Start a program: ``lcl.compose("x").use(...)...done()``."""
    return ProgramBuilder(name, description=description)
