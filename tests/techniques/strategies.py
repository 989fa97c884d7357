"""Hypothesis strategies for the predicate language: well-typed expressions with
matching environments, and valid predicate texts to mutate."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from codelibrarian.techniques.facts import FACTS_SCHEMA
from codelibrarian.techniques.predicates import EnvSchema, PType
from codelibrarian.techniques.predicates.ast import (
    BoolOp,
    Comparison,
    Exists,
    Expr,
    ListExpr,
    Literal_,
    Not,
    Path,
)

#: the facts plus two steps, one of each kind of output field
STEP_OUTPUTS: dict[str, dict[str, Any]] = {
    "tp_hypothesis": {
        "type": "object",
        "properties": {
            "confidence": {"type": "integer"},
            "top": {"type": "string"},
            "score": {"type": "number"},
        },
    },
    "tp_verify_plan": {
        "type": "object",
        "properties": {
            "passed": {"type": "boolean"},
            "status": {"type": "string", "enum": ["fail", "pass"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    },
}
SCHEMA: EnvSchema = FACTS_SCHEMA.with_steps(STEP_OUTPUTS)


def _leaves(schema: EnvSchema) -> dict[str, list[tuple[tuple[str, ...], PType]]]:
    out: dict[str, list[tuple[tuple[str, ...], PType]]] = {}

    def walk(prefix: tuple[str, ...], t: PType, optional: bool) -> None:
        if t.kind == "record":
            for name, sub in t.fields:
                walk((*prefix, name), sub, optional or sub.optional)
            return
        kind = t.kind if t.kind != "list" else f"list<{t.elem.kind if t.elem else 'any'}>"
        out.setdefault(kind, []).append((prefix, t.maybe() if optional else t))

    walk((), schema.root, False)
    return out


LEAVES = _leaves(SCHEMA)

_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_ ", min_size=0, max_size=8)
_ints = st.integers(min_value=-1000, max_value=5000)
_decimals = st.decimals(min_value=-100, max_value=100, places=3, allow_nan=False).map(Fraction)


def _path(kind: str) -> st.SearchStrategy[Expr]:
    return st.sampled_from(LEAVES[kind]).map(lambda lp: Path(lp[0]))


def ints() -> st.SearchStrategy[Expr]:
    return st.one_of(_ints.map(Literal_), _path("int"))


def numbers() -> st.SearchStrategy[Expr]:
    return st.one_of(ints(), _decimals.map(Literal_), _path("number"))


#: string leaves with a closed set of values (a step's status): compared with a literal
#: only from that set, since any other literal is a type error by design
_ENUM_STRINGS = [lp for lp in LEAVES["string"] if lp[1].enum]
_FREE_STRINGS = [lp for lp in LEAVES["string"] if not lp[1].enum]


def strings() -> st.SearchStrategy[Expr]:
    return st.one_of(
        _words.map(Literal_), st.sampled_from(_FREE_STRINGS).map(lambda lp: Path(lp[0]))
    )


def _enum_comparisons() -> st.SearchStrategy[Expr]:
    return st.sampled_from(_ENUM_STRINGS).flatmap(
        lambda lp: st.builds(
            _cmp,
            st.sampled_from(["==", "!="]),
            st.just(Path(lp[0])),
            st.sampled_from(lp[1].enum).map(Literal_),
        )
    )


def string_lists() -> st.SearchStrategy[Expr]:
    return st.one_of(
        _path("list<string>"),
        st.lists(_words.map(Literal_), max_size=3).map(lambda xs: ListExpr(tuple(xs))),
    )


def _cmp(op: str, a: Expr, b: Expr) -> Expr:
    return Comparison(op, a, b)  # type: ignore[arg-type]


def bools() -> st.SearchStrategy[Expr]:
    base = st.one_of(
        st.booleans().map(Literal_),
        _path("bool"),
        st.sampled_from([lp[0] for kind in LEAVES for lp in LEAVES[kind]]).map(
            lambda p: Exists(Path(p))
        ),
        st.builds(_cmp, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), numbers(), numbers()),
        st.builds(_cmp, st.sampled_from(["==", "!=", "<", ">="]), strings(), strings()),
        st.builds(_cmp, st.sampled_from(["in", "not in"]), strings(), string_lists()),
        st.builds(_cmp, st.sampled_from(["in", "not in"]), strings(), strings()),
        _enum_comparisons(),
    )
    return st.recursive(
        base,
        lambda inner: st.one_of(
            inner.map(Not),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: BoolOp("and", tuple(xs))),
            st.lists(inner, min_size=2, max_size=3).map(lambda xs: BoolOp("or", tuple(xs))),
            st.builds(_cmp, st.sampled_from(["==", "!="]), inner, inner),
        ),
        max_leaves=12,
    )


def typed_exprs() -> st.SearchStrategy[Expr]:
    return st.one_of(bools(), ints(), numbers(), strings(), string_lists())


def _value(t: PType) -> st.SearchStrategy[Any]:
    if t.kind == "bool":
        return st.booleans()
    if t.kind == "int":
        return _ints
    if t.kind == "number":
        return st.one_of(_ints, st.floats(-100, 100, allow_nan=False, allow_infinity=False))
    if t.kind == "string":
        return st.sampled_from(t.enum) if t.enum else _words
    if t.kind == "list":
        return st.lists(_value(t.elem or PType("string")), max_size=3)
    return st.none()


@st.composite
def environments(draw: st.DrawFn) -> dict[str, Any]:
    env: dict[str, Any] = {}
    for kind in LEAVES:
        for path, t in LEAVES[kind]:
            if t.optional and draw(st.booleans()):
                continue  # a missing optional value (a step that has not run)
            cur = env
            for seg in path[:-1]:
                cur = cur.setdefault(seg, {})
            cur[path[-1]] = draw(_value(t))
    return env


VALID_PREDICATES = (
    "codebase.has_tests == false",
    "change.touches_auth and not codebase.has_tests",
    '"python" in codebase.languages or codebase.file_count > 200',
    "steps.tp_hypothesis.output.confidence >= 800",
    "exists steps.tp_verify_plan.output.passed and (change.lines_changed < 80)",
    '"flaky" in intent.keywords or "intermittent" in intent.keywords',
    'codebase.primary_language != "go" and change.files_changed <= 6',
    "not (change.present or codebase.has_ci)",
    "[1, 2, 3] == [1, 2.0, 3] or -0.5 < steps.tp_hypothesis.output.score",
    "change.languages == [] or 'x' not in change.languages",
)
