"""The total evaluator: ``E ⊢ e ⇒ v`` over plain values. No calls, no loops, no ``eval``.

The environment is nested mappings of plain values (what JSON gives: dicts,
lists, strings, ints, floats, booleans, None). Numbers are compared exactly:
integers as they are, floats through their shortest decimal text (``0.8`` is
4/5, not 0.8000000000000000444), decimal literals as fractions — so no float
rounding decides a comparison.

Evaluation never raises. A path that is absent, or ``None``, is **missing**:

* ``exists p`` is false exactly when ``p`` is missing;
* every comparison with a missing operand is false — ``==`` and ``!=`` alike;
* a missing value used as a condition counts as false (so ``not p`` is true).

Values of the wrong kind at run time (an environment that does not match its
schema) follow the same rule as missing ones: the comparison is false.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Final

from .ast import BoolOp, Exists, Expr, ListExpr, Literal_, Not, Path

__all__ = ["MISSING", "Missing", "Value", "evaluate", "lookup", "normalize", "truthy"]


class Missing:
    """The value of an absent path (a singleton, falsy, equal only to itself)."""

    _instance: Missing | None = None

    def __new__(cls) -> Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = Missing()
Value = Any  # bool | int | Fraction | str | tuple[Value, ...] | Mapping[str, Any] | Missing


def normalize(value: object) -> Value:
    """A plain value in the evaluator's terms (floats become exact fractions)."""
    if value is None or isinstance(value, Missing):
        return MISSING
    if isinstance(value, bool | int | str | Fraction):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return MISSING
        return Fraction(Decimal(repr(value)))
    if isinstance(value, Decimal):
        try:
            return Fraction(value) if value.is_finite() else MISSING
        except (InvalidOperation, ValueError):
            return MISSING
    if isinstance(value, Mapping):
        return value
    if isinstance(value, list | tuple):
        return tuple(normalize(v) for v in value)
    return MISSING


def lookup(env: Mapping[str, Any], parts: Sequence[str]) -> Value:
    """The value at a dotted path, or ``MISSING``."""
    cur: Any = env
    for part in parts:
        if not isinstance(cur, Mapping):
            return MISSING
        cur = cur.get(part, MISSING)
        if cur is None or cur is MISSING:
            return MISSING
    return normalize(cur)


def truthy(value: Value) -> bool:
    """A condition's verdict: only ``true`` is true (missing and non-booleans are false)."""
    return value is True


def _is_num(v: Value) -> bool:
    return isinstance(v, int | Fraction) and not isinstance(v, bool)


def _equal(a: Value, b: Value) -> bool | None:
    """Equality, or None when the two cannot be compared."""
    if a is MISSING or b is MISSING:
        return None
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if isinstance(a, bool) and isinstance(b, bool):
        return a is b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            eq = _equal(x, y)
            if eq is not True:
                return eq
        return True
    return None


def _order(op: str, a: Value, b: Value) -> bool:
    if not ((_is_num(a) and _is_num(b)) or (isinstance(a, str) and isinstance(b, str))):
        return False
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _contains(a: Value, b: Value) -> bool | None:
    if a is MISSING or b is MISSING:
        return None
    if isinstance(b, tuple):
        return any(_equal(a, item) is True for item in b)
    if isinstance(b, str) and isinstance(a, str):
        return a in b
    return None


def evaluate(expr: Expr, env: Mapping[str, Any]) -> Value:
    """The value of ``expr`` in ``env`` (see the module docstring); never raises."""
    if isinstance(expr, Literal_):
        return expr.value
    if isinstance(expr, ListExpr):
        return tuple(evaluate(i, env) for i in expr.items)
    if isinstance(expr, Path):
        return lookup(env, expr.parts)
    if isinstance(expr, Exists):
        return lookup(env, expr.path.parts) is not MISSING
    if isinstance(expr, Not):
        return not truthy(evaluate(expr.operand, env))
    if isinstance(expr, BoolOp):
        if expr.op == "and":
            return all(truthy(evaluate(o, env)) for o in expr.operands)
        return any(truthy(evaluate(o, env)) for o in expr.operands)
    left = evaluate(expr.left, env)
    right = evaluate(expr.right, env)
    op = expr.op
    if op in ("==", "!="):
        eq = _equal(left, right)
        if eq is None:
            return False
        return eq if op == "==" else not eq
    if op in ("in", "not in"):
        found = _contains(left, right)
        if found is None:
            return False
        return found if op == "in" else not found
    if left is MISSING or right is MISSING:
        return False
    return _order(op, left, right)
