"""The one syntax tree behind LCL's three surfaces (Python builder, TOML, the seed's JSON).

The formal core of seed 004's "DSL Formal Semantics" — ``primitive_ref``,
``pattern_ref``, ``compose``, ``conditional`` (with ``else``) and ``operator`` —
are the expression nodes :class:`Ref`, :class:`Compose`, :class:`When` and
:class:`Operator` (plus :class:`Primitives`, the P3 ``base = "primitives"``
form). ``compose(base, overrides)`` takes a list of *edits*, the partial
compositions the type rules call ``Partial<T>``: :class:`Patch` (pattern
fields), :class:`Add`, :class:`Remove`, :class:`Replace`, :class:`Wrap` (the
P3 operator specs) and :class:`WhenEdit` (a conditional edit with an ``else``).

A :class:`Program` is one named LCL expression with its relationships,
metadata and an optional required stratum — a preset is a stored program.
Every node carries the :class:`~..diagnostics.Loc` it was written at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..composition import Metadata, Relationship
from ..diagnostics import Loc
from ..predicates import Predicate

__all__ = [
    "Add",
    "Compose",
    "Edit",
    "Expr",
    "Operator",
    "Patch",
    "Primitives",
    "Program",
    "Ref",
    "RefKind",
    "Remove",
    "Replace",
    "When",
    "WhenEdit",
    "Wrap",
]

RefKind = Literal["primitive", "pattern", "composition", "any"]
_NOLOC = Loc("<builder>")


def _loc() -> Loc:
    return _NOLOC


@dataclass(frozen=True, slots=True)
class Ref:
    """``primitive(id)`` / ``pattern(id)`` / ``composition(id)``; ``any`` is resolved by lookup."""

    kind: RefKind
    id: str
    loc: Loc = field(default_factory=_loc, compare=False)


@dataclass(frozen=True, slots=True)
class Primitives:
    """A list of primitives shaped by a structure template (``pipeline`` by default)."""

    ids: tuple[str, ...]
    template: str = "pipeline"
    params: Mapping[str, Any] = field(default_factory=dict)
    loc: Loc = field(default_factory=_loc, compare=False)
    id_locs: tuple[Loc, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Patch:
    """Overrides of a pattern's fields (the seed's ``overrides: Partial<CompositionPattern>``)."""

    core_primitives: tuple[str, ...] | None = None
    optional_primitives: tuple[str, ...] | None = None
    template: str | None = None
    template_params: Mapping[str, Any] | None = None
    loc: Loc = field(default_factory=_loc, compare=False)
    locs: Mapping[str, Loc] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class Add:
    """Add a step; ``position`` is ``end``, ``start``, ``before:<step>`` or ``after:<step>``."""

    primitive: str
    position: str = "end"
    params: Mapping[str, Any] = field(default_factory=dict)
    loc: Loc = field(default_factory=_loc, compare=False)


@dataclass(frozen=True, slots=True)
class Remove:
    """Remove every step of a primitive (or the step with that explicit id)."""

    target: str
    loc: Loc = field(default_factory=_loc, compare=False)


@dataclass(frozen=True, slots=True)
class Replace:
    """Run ``new`` wherever ``old`` would have run."""

    old: str
    new: str
    loc: Loc = field(default_factory=_loc, compare=False)


@dataclass(frozen=True, slots=True)
class Wrap:
    """Put an operator around sibling steps (the seed's ``{type, inputs, parameters}``)."""

    operator: str
    inputs: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    loc: Loc = field(default_factory=_loc, compare=False)
    param_locs: Mapping[str, Loc] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class WhenEdit:
    """``when(pred, then_edits, else_edits)`` over a composition."""

    predicate: Predicate
    then: tuple[Edit, ...]
    otherwise: tuple[Edit, ...] = ()
    loc: Loc = field(default_factory=_loc, compare=False)


Edit = Patch | Add | Remove | Replace | Wrap | WhenEdit


@dataclass(frozen=True, slots=True)
class Compose:
    base: Expr
    edits: tuple[Edit, ...]
    loc: Loc = field(default_factory=_loc, compare=False)


@dataclass(frozen=True, slots=True)
class When:
    """``when(pred, then, else)`` choosing between whole compositions."""

    predicate: Predicate
    then: Expr
    otherwise: Expr
    loc: Loc = field(default_factory=_loc, compare=False)


@dataclass(frozen=True, slots=True)
class Operator:
    """``operator(type, [operands])`` with its parameters."""

    operator: str
    operands: tuple[Expr, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    loc: Loc = field(default_factory=_loc, compare=False)
    param_locs: Mapping[str, Loc] = field(default_factory=dict, compare=False)


Expr = Ref | Primitives | Compose | When | Operator


@dataclass(frozen=True, slots=True)
class Program:
    """One named LCL expression (a preset when stored)."""

    name: str
    expr: Expr
    description: str = ""
    relationships: tuple[Relationship, ...] = ()
    metadata: Metadata = field(default_factory=Metadata)
    require_stratum: str | None = None
    source: str = "<builder>"
    loc: Loc = field(default_factory=_loc, compare=False)

    def compile(self, *, facts: Any = None, library: Any = None) -> Any:
        """Compile this program (see :func:`~.compile.compile_program`)."""
        from .compile import compile_program

        return compile_program(self, facts=facts, library=library)
