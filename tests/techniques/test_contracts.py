"""Contracts: registration checks and the run-time ContractValidator."""

from __future__ import annotations

from codelibrarian.techniques.contracts import (
    Condition,
    Contract,
    ContractValidator,
    check_contract,
)
from codelibrarian.techniques.diagnostics import Loc
from codelibrarian.techniques.facts import default_facts
from codelibrarian.techniques.predicates import parse
from codelibrarian.techniques.registry import default_library

LIB = default_library()
FACTS = default_facts()


def _good_hypotheses() -> dict[str, object]:
    return {
        "hypotheses": [
            {
                "id": "h1",
                "statement": "the cache key ignores the locale",
                "confidence": 700,
                "evidence": [{"kind": "file", "ref": "src/cache.py"}],
                "test": "request the page in two locales",
            }
        ],
        "top": "h1",
        "confidence": 700,
        "conclusion": "h1",
    }


def test_postconditions_pass_with_ids_and_reasons() -> None:
    v = ContractValidator()
    p = LIB.primitive("tp_hypothesis")
    check = v.check_postconditions(p, {"task": "t"}, _good_hypotheses(), FACTS)
    assert check.satisfied
    ids = [r.condition_id for r in check.results]
    assert ids == ["output_schema", "top_named", "confidence_in_range"]


def test_schema_violations_are_listed_per_place() -> None:
    v = ContractValidator()
    p = LIB.primitive("tp_hypothesis")
    bad = _good_hypotheses() | {"confidence": 1200, "top": ""}
    del bad["conclusion"]
    check = v.check_postconditions(p, {"task": "t"}, bad, FACTS)
    assert not check.satisfied
    by_id = {}
    for r in check.violations:
        by_id.setdefault(r.condition_id, []).append(r)
    schema = by_id["output_schema"]
    assert {r.code for r in schema} == {"schema_maximum", "schema_required"}
    assert any(r.location == "output.confidence" for r in schema)
    assert by_id["top_named"][0].code == "predicate_false"
    assert 'output.top = ""' in by_id["top_named"][0].reason
    assert by_id["confidence_in_range"][0].reason.startswith("`output.confidence >= 0")


def test_preconditions_read_facts_and_input() -> None:
    v = ContractValidator()
    p = LIB.primitive("tp_search_history")
    no_git = v.check_preconditions(p, {"task": "why"}, FACTS)
    assert [r.condition_id for r in no_git.violations] == ["git_repository"]
    facts = default_facts()
    facts["codebase"]["has_git"] = True
    assert v.check_preconditions(p, {"task": "why"}, facts).satisfied
    bad_input = v.check_preconditions(p, {"task": "", "max_commits": 0}, facts)
    assert {r.code for r in bad_input.violations} == {"schema_minLength", "schema_minimum"}
    assert v.check_invariants(p, {"task": "x"}, facts).satisfied


def test_registration_rejects_bad_contracts() -> None:
    loc = Loc("x.toml", 1, 1)
    c = Contract(
        preconditions=(Condition("a", "precondition", parse("output.top != ''"), loc=loc),),
        postconditions=(Condition("a", "postcondition", parse("output.nope == 1"), loc=loc),),
    )
    schema = {"type": "object", "properties": {"top": {"type": "string"}}}
    diags = check_contract(c, {"type": "object"}, schema, loc=loc)
    messages = " | ".join(d.message for d in diags)
    assert "unknown name `output.top`" in messages  # preconditions cannot read the output
    assert "used twice" in messages
    assert "unknown name `output.nope`" in messages
    bad_schema = check_contract(Contract(), {"type": "wrong"}, schema, loc=loc)
    assert any(d.code == "lcl_contract_schema" for d in bad_schema)


def test_every_builtin_condition_has_an_id_and_holds_on_a_valid_example() -> None:
    v = ContractValidator()
    p = LIB.primitive("tp_verify_plan")
    out = {"passed": False, "failures": 1, "conclusion": "one check failed",
           "checks": [{"id": "c1", "description": "tests", "status": "fail"}]}  # fmt: skip
    assert v.check_postconditions(p, {"task": "t"}, out, FACTS).satisfied
    lie = out | {"passed": True}
    [violation] = v.check_postconditions(p, {"task": "t"}, lie, FACTS).violations
    assert violation.condition_id == "passed_iff_no_failures"
