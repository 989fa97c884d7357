"""The predicate parser: grammar, canonical text, and positioned errors only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.techniques.predicates import PredicateSyntaxError, parse, unparse
from codelibrarian.techniques.predicates.ast import BoolOp, Comparison, Exists, Literal_, Not, Path
from codelibrarian.techniques.predicates.parser import MAX_DEPTH, parse_expr
from tests.techniques.strategies import VALID_PREDICATES, typed_exprs


def test_precedence_not_and_or() -> None:
    e = parse_expr("not a or b and c == 1")
    assert isinstance(e, BoolOp) and e.op == "or"
    left, right = e.operands
    assert isinstance(left, Not) and isinstance(left.operand, Path)
    assert isinstance(right, BoolOp) and right.op == "and"
    assert isinstance(right.operands[1], Comparison)


def test_chains_are_flat_and_spans_cover_the_text() -> None:
    text = "a and b and c and d"
    e = parse_expr(text)
    assert isinstance(e, BoolOp) and len(e.operands) == 4
    assert e.span == (0, len(text))


def test_literals_and_exact_decimals() -> None:
    e = parse_expr("x == -0.25")
    assert isinstance(e, Comparison) and isinstance(e.right, Literal_)
    assert str(e.right.value) == "-1/4"
    assert parse_expr("'it\\'s'") == Literal_("it's", (0, 7))


def test_not_in_and_exists() -> None:
    e = parse_expr("exists steps.tp_bisect.output and 'x' not in change.languages")
    assert isinstance(e, BoolOp)
    assert isinstance(e.operands[0], Exists)
    cmp = e.operands[1]
    assert isinstance(cmp, Comparison) and cmp.op == "not in"


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("a ==", 5, "expected a value"),
        ("a = 1", 3, "use `==`"),
        ("(a", 3, "expected ')'"),
        ("a < b < c", 7, "cannot be chained"),
        ("a && b", 3, "use `and`"),
        ("a || b", 3, "use `or`"),
        ("!a", 1, "use `not`"),
        ('"open', 1, "unterminated string"),
        ("a.in", 2, "keyword"),
        ("1abc", 1, "malformed number"),
        ("x not y", 3, "followed by `in`"),
        ("a b", 3, "after a complete condition"),
        ("", 1, "empty condition"),
        ("a)", 2, "unbalanced"),
        ("a === b", 3, "use `==`"),
        ("- a", 3, "must be followed by a number"),
        ("[1, 2", 6, "expected ',' or ']'"),
        ("a ~ b", 3, "unexpected character"),
    ],
)
def test_errors_name_the_place(text: str, column: int, fragment: str) -> None:
    with pytest.raises(PredicateSyntaxError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (1, column)
    assert fragment in err.message
    assert err.diagnostics[0].code == "lcl_predicate_syntax"


def test_multi_line_positions() -> None:
    with pytest.raises(PredicateSyntaxError) as info:
        parse("a and\n  b ==\n")
    assert (info.value.line, info.value.column) == (3, 1)


def test_nesting_limit_is_an_error_with_a_position() -> None:
    deep = "(" * (MAX_DEPTH + 5) + "a" + ")" * (MAX_DEPTH + 5)
    with pytest.raises(PredicateSyntaxError) as info:
        parse(deep)
    assert "levels deep" in info.value.message
    nots = "not " * 500 + "a"
    with pytest.raises(PredicateSyntaxError):
        parse(nots)


def test_seed_compat_reads_camel_case_and_triple_equals() -> None:
    p = parse("change.touchesAuth === true", compat=True)
    assert p.text == "change.touches_auth == true"
    with pytest.raises(PredicateSyntaxError):
        parse("change.touchesAuth === true")


@pytest.mark.parametrize("text", VALID_PREDICATES)
def test_valid_predicates_parse_and_round_trip(text: str) -> None:
    e = parse_expr(text)
    assert unparse(parse_expr(unparse(e))) == unparse(e)


@given(typed_exprs())
def test_unparse_round_trips(expr: object) -> None:
    text = unparse(expr)  # type: ignore[arg-type]
    again = parse_expr(text)
    assert unparse(again) == text


def _mutate(text: str, ops: list[tuple[int, int, str]]) -> str:
    out = text
    for kind, at, ch in ops:
        i = at % (len(out) + 1)
        if kind == 0:
            out = out[:i] + ch + out[i:]
        elif kind == 1:
            out = out[:i] + out[i + 1 :]
        else:
            out = out[:i] + ch + out[i + 1 :]
    return out


_chars = st.sampled_from([*"()[]\"'=!<>.,-_ aZ09\n\\&|~", "and", "or", "not", "in", "\u00e9"])


@given(
    st.sampled_from(VALID_PREDICATES),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 200), _chars), max_size=6),
)
def test_mutated_input_raises_only_positioned_syntax_errors(
    text: str, ops: list[tuple[int, int, str]]
) -> None:
    mutated = _mutate(text, ops)
    try:
        parse(mutated)
    except PredicateSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
        assert 0 <= exc.offset <= len(mutated)


@given(st.text(max_size=80))
def test_random_text_raises_only_positioned_syntax_errors(text: str) -> None:
    try:
        parse(text)
    except PredicateSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1
