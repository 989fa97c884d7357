"""The predicate language's syntax tree.

Every node carries ``span`` — ``(start, end)`` character offsets into the text it
was parsed from — so type errors point at the exact sub-expression. ``and`` and
``or`` are n-ary (a long chain is one node, not a deep tree), which keeps the
evaluator's recursion as shallow as the parser's nesting limit.

:func:`unparse` writes the canonical text of a tree: single spaces, double-quoted
strings, parentheses only where precedence needs them. ``parse(unparse(e))``
gives back ``e`` up to spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

__all__ = [
    "BoolOp",
    "CompareOp",
    "Comparison",
    "Exists",
    "Expr",
    "ListExpr",
    "Literal_",
    "Not",
    "Path",
    "Scalar",
    "format_number",
    "unparse",
]

Scalar = bool | int | Fraction | str
CompareOp = Literal["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Literal_:
    """``true``/``false``, an integer, a decimal (kept exact as a Fraction), or a string."""

    value: Scalar
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class Path:
    """A dotted name such as ``codebase.has_tests`` or ``steps.tp_bisect.output.converged``."""

    parts: tuple[str, ...]
    span: Span = (0, 0)

    @property
    def dotted(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True, slots=True)
class Exists:
    path: Path
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class Not:
    operand: Expr
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class BoolOp:
    op: Literal["and", "or"]
    operands: tuple[Expr, ...]
    span: Span = (0, 0)


@dataclass(frozen=True, slots=True)
class Comparison:
    op: CompareOp
    left: Expr
    right: Expr
    span: Span = (0, 0)


Expr = Literal_ | ListExpr | Path | Exists | Not | BoolOp | Comparison

_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "atom": 5}


def format_number(value: int | Fraction) -> str:
    """An exact decimal rendering (fractions from decimal literals always terminate)."""
    if isinstance(value, int):
        return str(value)
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    num, den = abs(value.numerator), value.denominator
    whole, rest = divmod(num, den)
    digits: list[str] = []
    seen = 0
    while rest and seen < 40:
        rest *= 10
        d, rest = divmod(rest, den)
        digits.append(str(d))
        seen += 1
    return f"{sign}{whole}." + ("".join(digits) or "0")


def _quote(text: str) -> str:
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{out}"'


def _prec(e: Expr) -> int:
    if isinstance(e, BoolOp):
        return _PREC[e.op]
    if isinstance(e, Not):
        return _PREC["not"]
    if isinstance(e, Comparison):
        return _PREC["cmp"]
    return _PREC["atom"]


def _wrap(e: Expr, above: int) -> str:
    text = unparse(e)
    return f"({text})" if _prec(e) <= above and _prec(e) < _PREC["atom"] else text


def unparse(e: Expr) -> str:
    """Canonical text of an expression (see the module docstring)."""
    if isinstance(e, Literal_):
        v = e.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return _quote(v)
        return format_number(v)
    if isinstance(e, ListExpr):
        return "[" + ", ".join(unparse(i) for i in e.items) + "]"
    if isinstance(e, Path):
        return e.dotted
    if isinstance(e, Exists):
        return f"exists {e.path.dotted}"
    if isinstance(e, Not):
        return f"not {_wrap(e.operand, _PREC['not'] - 1)}"
    if isinstance(e, BoolOp):
        return f" {e.op} ".join(_wrap(o, _PREC[e.op]) for o in e.operands)
    return f"{_wrap(e.left, _PREC['cmp'])} {e.op} {_wrap(e.right, _PREC['cmp'])}"
