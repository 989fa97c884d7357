"""The predicate type checker: ``Γ ⊢ e : T`` against an :class:`EnvSchema`.

Rules (``T?`` is an optional ``T``; ``any`` fits everywhere):

* literals have their type; a list's items share one type (ints and decimals
  make ``list<number>``); ``[]`` fits any list;
* a path has the type the schema gives it — optional if any segment on the way is
  optional; a path that names a group of fields is an error listing them;
* ``exists p`` is ``bool`` for any known path ``p`` (groups included);
* ``not e``, ``e1 and e2``, ``e1 or e2`` need ``bool``/``bool?`` operands and are ``bool``;
* ``==``/``!=`` need comparable operands (both numeric, both the same scalar kind,
  or lists of comparable items); a string literal compared with an enumerated
  field must be one of its values;
* ``<``, ``<=``, ``>``, ``>=`` need two numbers or two strings;
* ``x in l`` needs ``l : list<T>`` with ``x`` comparable to ``T``, or two strings
  (substring); every comparison is ``bool`` (a missing operand makes it false).

All errors are collected, each positioned at its sub-expression.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, Loc, closest
from .ast import BoolOp, Comparison, Exists, Expr, ListExpr, Literal_, Not, Path
from .errors import PredicateTypeError, predicate_loc
from .types import ANY, BOOL, INT, NUMBER, STRING, EnvSchema, PType, list_of

__all__ = ["infer", "typecheck"]


class _Checker:
    def __init__(self, schema: EnvSchema, text: str, where: Loc | None) -> None:
        self.schema = schema
        self.text = text
        self.where = where
        self.diags: list[Diagnostic] = []

    def fail(self, node: Expr, message: str, suggestions: tuple[str, ...] = ()) -> PType:
        loc = predicate_loc(self.text, node.span[0], self.where)
        self.diags.append(Diagnostic("lcl_predicate_type", message, loc, suggestions))
        return ANY

    def path(self, node: Path, *, allow_group: bool = False) -> PType:
        t = self.schema.root
        optional = False
        for i, seg in enumerate(node.parts):
            if t.kind == "any":
                return ANY.maybe()
            here = ".".join(node.parts[:i])
            if t.kind != "record":
                return self.fail(node, f"`{here}` is {t.required()}; it has no field {seg!r}")
            sub = t.field(seg)
            if sub is None:
                full = node.dotted
                near = closest(full, self.schema.paths()) or tuple(
                    f"{here}.{n}" if here else n for n in closest(seg, t.names)
                )
                fields = ", ".join(t.names) if len(t.names) <= 12 else f"{len(t.names)} fields"
                where = f"`{here}`" if here else "the environment"
                return self.fail(node, f"unknown name `{full}`: {where} has {fields}", near)
            optional = optional or sub.optional
            t = sub
        if t.kind == "record" and not allow_group:
            names = ", ".join(t.names[:12])
            return self.fail(
                node, f"`{node.dotted}` is a group of fields ({names}); name one of them"
            )
        return t.maybe() if optional else t

    def infer(self, e: Expr) -> PType:
        if isinstance(e, Literal_):
            v = e.value
            if isinstance(v, bool):
                return BOOL
            if isinstance(v, int):
                return INT
            if isinstance(v, str):
                return STRING
            return NUMBER
        if isinstance(e, ListExpr):
            return self.list_type(e)
        if isinstance(e, Path):
            return self.path(e)
        if isinstance(e, Exists):
            self.path(e.path, allow_group=True)
            return BOOL
        if isinstance(e, Not):
            self.boolean(e.operand, "`not`")
            return BOOL
        if isinstance(e, BoolOp):
            for operand in e.operands:
                self.boolean(operand, f"`{e.op}`")
            return BOOL
        return self.comparison(e)

    def boolean(self, e: Expr, what: str) -> None:
        t = self.infer(e)
        if t.kind not in ("bool", "any"):
            self.fail(e, f"{what} needs true/false, but this is {t}; compare it to a value")

    def list_type(self, e: ListExpr) -> PType:
        if not e.items:
            return PType("list")
        types = [self.infer(i).required() for i in e.items]
        if all(t.kind == "any" for t in types):
            return list_of(ANY)
        known = [t for t in types if t.kind != "any"]
        if all(t.numeric for t in known):
            return list_of(INT if all(t.kind == "int" for t in known) else NUMBER)
        kinds = {t.kind for t in known}
        if len(kinds) == 1 and known[0].scalar:
            return list_of(PType(known[0].kind))
        return self.fail(e, "a list's items must share one type (all numbers, all strings, ...)")

    def comparable(self, a: PType, b: PType) -> bool:
        a, b = a.required(), b.required()
        if a.kind == "any" or b.kind == "any":
            return True
        if a.numeric and b.numeric:
            return True
        if a.kind == "list" and b.kind == "list":
            if a.elem is None or b.elem is None:
                return True
            return self.comparable(a.elem, b.elem)
        return a.kind == b.kind and a.scalar

    def enum_check(self, node: Expr, t: PType, other: Expr) -> None:
        if (
            t.enum
            and isinstance(other, Literal_)
            and isinstance(other.value, str)
            and other.value not in t.enum
        ):
            self.fail(
                other,
                f"{other.value!r} is not a possible value here; values: {', '.join(t.enum)}",
                closest(other.value, t.enum),
            )

    def comparison(self, e: Comparison) -> PType:
        lt, rt = self.infer(e.left), self.infer(e.right)
        op = e.op
        if op in ("==", "!="):
            if not self.comparable(lt, rt):
                return self._mismatch(e, f"cannot compare {lt} with {rt}")
            self.enum_check(e.left, lt, e.right)
            self.enum_check(e.right, rt, e.left)
            return BOOL
        if op in ("<", "<=", ">", ">="):
            ok = (lt.numeric or lt.kind == "any") and (rt.numeric or rt.kind == "any")
            ok = ok or (lt.kind in ("string", "any") and rt.kind in ("string", "any"))
            if not ok:
                return self._mismatch(
                    e, f"`{op}` orders two numbers or two strings, not {lt} and {rt}"
                )
            return BOOL
        # in / not in
        r = rt.required()
        if r.kind == "any":
            return BOOL
        if r.kind == "list":
            if r.elem is not None and not self.comparable(lt, r.elem):
                self._mismatch(e, f"cannot look for {lt} in {r}")
            elif r.elem is not None:
                self.enum_check(e.left, r.elem, e.left)
            return BOOL
        if r.kind == "string":
            if lt.required().kind not in ("string", "any"):
                self._mismatch(e, f"`{op}` on a string looks for a substring; {lt} is not a string")
            return BOOL
        return self._mismatch(e, f"`{op}` needs a list or a string on the right, not {rt}")

    def _mismatch(self, e: Comparison, message: str) -> PType:
        self.fail(e, message)
        return BOOL


def infer(
    expr: Expr, schema: EnvSchema, *, text: str = "", where: Loc | None = None
) -> tuple[PType, tuple[Diagnostic, ...]]:
    """The type of ``expr`` and the type errors found (empty when it is well typed)."""
    checker = _Checker(schema, text, where)
    t = checker.infer(expr)
    return t, tuple(checker.diags)


def typecheck(
    expr: Expr,
    schema: EnvSchema,
    *,
    text: str = "",
    where: Loc | None = None,
    expect_bool: bool = True,
) -> PType:
    """The type of ``expr``; raises :class:`PredicateTypeError` listing every type error.

    With ``expect_bool`` (the default, for conditions) the whole expression must be
    ``bool`` or ``bool?``.
    """
    checker = _Checker(schema, text, where)
    t = checker.infer(expr)
    if expect_bool and not checker.diags and t.kind not in ("bool", "any"):
        checker.fail(
            expr, f"a condition must be true or false, but this is {t}; compare it to a value"
        )
    if checker.diags:
        raise PredicateTypeError(checker.diags)
    return t
