"""The type checker: each rule, with errors that name the place and the alternatives."""

from __future__ import annotations

import pytest

from codelibrarian.techniques.facts import FACTS_SCHEMA
from codelibrarian.techniques.predicates import (
    BOOL,
    INT,
    PredicateTypeError,
    infer,
    parse,
    typecheck,
)
from tests.techniques.strategies import SCHEMA


def _type(text: str) -> str:
    t, diags = infer(parse(text).expr, SCHEMA, text=text)
    assert not diags, [d.render() for d in diags]
    return str(t)


def test_types_of_paths_and_literals() -> None:
    assert _type("codebase.file_count") == "int"
    assert _type("codebase.languages") == "list<string>"
    assert _type("steps.tp_hypothesis.output.confidence") == "int?"
    assert _type("1.5") == "number"
    assert _type("[1, 2.5]") == "list<number>"
    assert _type("exists steps.tp_hypothesis.output") == "bool"
    assert _type("codebase.file_count > 1.5") == "bool"


def test_conditions_must_be_boolean() -> None:
    with pytest.raises(PredicateTypeError) as info:
        typecheck("codebase.file_count", FACTS_SCHEMA)
    assert "must be true or false" in info.value.message
    assert typecheck("codebase.has_tests", FACTS_SCHEMA) == BOOL


@pytest.mark.parametrize(
    ("text", "fragment", "suggestion"),
    [
        ("codebase.has_test", "unknown name `codebase.has_test`", "codebase.has_tests"),
        ("chnage.present", "unknown name", "change.present"),
        ("codebase", "group of fields", None),
        ("codebase.file_count == 'x'", "cannot compare int with string", None),
        ("codebase.has_tests < true", "orders two numbers or two strings", None),
        ("1 in codebase.languages", "cannot look for int in list<string>", None),
        ("'a' in codebase.file_count", "needs a list or a string", None),
        ("not codebase.file_count", "`not` needs true/false", None),
        ("steps.tp_verify_plan.output.status == 'pas'", "not a possible value", "pass"),
        ("[1, 'a'] == []", "share one type", None),
        ("codebase.languages.first == 'x'", "has no field", None),
    ],
)
def test_type_errors_name_the_place_and_alternatives(
    text: str, fragment: str, suggestion: str | None
) -> None:
    with pytest.raises(PredicateTypeError) as info:
        typecheck(text, SCHEMA)
    messages = " | ".join(d.message for d in info.value.diagnostics)
    assert fragment in messages
    if suggestion:
        assert any(suggestion in d.suggestions for d in info.value.diagnostics)
    assert all(d.loc.line == 1 and d.loc.column >= 1 for d in info.value.diagnostics)


def test_every_error_is_collected() -> None:
    with pytest.raises(PredicateTypeError) as info:
        typecheck("codebase.nope and change.nada", FACTS_SCHEMA)
    cols = sorted(d.loc.column for d in info.value.diagnostics)
    assert cols == [1, 19]


def test_numbers_mix_and_optional_operands_are_allowed() -> None:
    assert typecheck("steps.tp_hypothesis.output.score >= 1", SCHEMA) == BOOL
    t, diags = infer(parse("steps.tp_hypothesis.output.confidence").expr, SCHEMA)
    assert t.required() == INT and t.optional and not diags
