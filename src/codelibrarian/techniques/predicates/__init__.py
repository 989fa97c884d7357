"""The predicate language of ``when`` clauses, loop/gate conditions and contracts.

A small, total language — literals, dotted paths, comparisons, ``in``,
``exists``, ``and``/``or``/``not``, parentheses — with a real parser (positioned
errors), a type checker against a declared environment schema and an evaluator
that never raises. See docs/lcl.md for the grammar and the rules.

Typical use (this is the seam the execution engine and the planner call)::

    from codelibrarian.techniques.predicates import parse, typecheck, evaluate
    pred = parse("change.touches_auth and not codebase.has_tests")
    typecheck(pred, FACTS_SCHEMA)              # raises PredicateTypeError
    evaluate(pred, {"change": {...}, "codebase": {...}})   # -> True / False

:class:`Predicate` keeps the source text beside the tree (the text is what is
stored in compiled compositions and shown in explanations).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Loc
from .ast import BoolOp, Comparison, Exists, Expr, ListExpr, Literal_, Not, Path, unparse
from .check import infer
from .check import typecheck as _typecheck_expr
from .errors import PredicateSyntaxError, PredicateTypeError
from .evaluate import MISSING, Missing, Value, lookup, normalize, truthy
from .evaluate import evaluate as _evaluate_expr
from .parser import parse_expr, snake_case
from .types import ANY, BOOL, INT, NUMBER, STRING, EnvSchema, PType, list_of, record, schema_type

__all__ = [
    "ANY",
    "BOOL",
    "INT",
    "MISSING",
    "NUMBER",
    "STRING",
    "EnvSchema",
    "Expr",
    "Missing",
    "PType",
    "Predicate",
    "PredicateSyntaxError",
    "PredicateTypeError",
    "Value",
    "evaluate",
    "infer",
    "list_of",
    "lookup",
    "normalize",
    "parse",
    "paths_in",
    "record",
    "schema_type",
    "snake_case",
    "truthy",
    "typecheck",
    "unparse",
]


def paths_in(expr: Expr) -> tuple[tuple[str, ...], ...]:
    """Every path the expression reads, in first-occurrence order, without repeats."""
    seen: dict[tuple[str, ...], None] = {}
    stack: list[Expr] = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Path):
            seen.setdefault(e.parts, None)
        elif isinstance(e, Exists):
            seen.setdefault(e.path.parts, None)
        elif isinstance(e, Not):
            stack.append(e.operand)
        elif isinstance(e, BoolOp):
            stack.extend(reversed(e.operands))
        elif isinstance(e, Comparison):
            stack.extend((e.right, e.left))
        elif isinstance(e, ListExpr):
            stack.extend(reversed(e.items))
        else:
            assert isinstance(e, Literal_)
    return tuple(seen)


@dataclass(frozen=True, slots=True)
class Predicate:
    """A parsed condition: ``text`` (canonical when read in seed-compatibility mode)
    and its tree. Equal predicates have equal text."""

    text: str
    expr: Expr = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: str, *, where: Loc | None = None, compat: bool = False) -> Predicate:
        try:
            expr = parse_expr(text, compat=compat)
        except PredicateSyntaxError as exc:
            raise exc.located(where) if where is not None else exc from None
        return cls(unparse(expr) if compat else text, expr)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(".".join(p) for p in paths_in(self.expr))

    @property
    def steps(self) -> tuple[str, ...]:
        """Step ids this predicate reads (``steps.<id>...``), sorted."""
        return tuple(sorted({p[1] for p in paths_in(self.expr) if len(p) > 1 and p[0] == "steps"}))

    def negated(self) -> Predicate:
        return Predicate.parse(f"not ({self.text})")

    def check(self, schema: EnvSchema, *, where: Loc | None = None) -> PType:
        return _typecheck_expr(self.expr, schema, text=self.text, where=where)

    def value(self, env: Mapping[str, Any]) -> Value:
        return _evaluate_expr(self.expr, env)

    def holds(self, env: Mapping[str, Any]) -> bool:
        return truthy(_evaluate_expr(self.expr, env))

    def __str__(self) -> str:
        return self.text


def parse(text: str, *, where: Loc | None = None, compat: bool = False) -> Predicate:
    """Parse a condition; raises :class:`PredicateSyntaxError` with a position."""
    return Predicate.parse(text, where=where, compat=compat)


def typecheck(pred: Predicate | str, schema: EnvSchema, *, where: Loc | None = None) -> PType:
    """Check a condition against ``schema``; raises :class:`PredicateTypeError`."""
    p = parse(pred, where=where) if isinstance(pred, str) else pred
    return p.check(schema, where=where)


def evaluate(pred: Predicate | Expr | str, env: Mapping[str, Any]) -> Value:
    """The value of a predicate (or expression) in ``env``; total — never raises
    for a parsed expression. A condition holds when the value is ``True``."""
    if isinstance(pred, str):
        pred = parse(pred)
    expr = pred.expr if isinstance(pred, Predicate) else pred
    return _evaluate_expr(expr, env)
