"""Relationship checks: requires, inhibits, precedes, substitutes, cycles."""

from __future__ import annotations

from codelibrarian.techniques import lcl
from codelibrarian.techniques.composition import Relationship
from codelibrarian.techniques.diagnostics import LclError
from codelibrarian.techniques.relationships import check_relationships, find_cycle
from codelibrarian.techniques.tree import OperatorNode, Step, freeze


def _seq(*kids: object) -> OperatorNode:
    return OperatorNode("sequence", freeze({}), tuple(kids))  # type: ignore[arg-type]


def _codes(root: OperatorNode, *rels: Relationship) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in check_relationships(root, rels)]


def test_requires_missing_is_an_error() -> None:
    rel = Relationship("tp_write_tests", "requires", "tp_test_gap_analysis")
    assert _codes(_seq(Step("tp_write_tests"), Step("tp_implement")), rel) == [
        ("lcl_requires_missing", "error")
    ]
    assert _codes(_seq(Step("tp_test_gap_analysis"), Step("tp_write_tests")), rel) == []
    cond = OperatorNode("conditional", freeze({"when": None}), (Step("tp_test_gap_analysis"),))
    assert _codes(_seq(cond, Step("tp_write_tests")), rel) == [
        ("lcl_requires_conditional", "warning")
    ]


def test_inhibits_pairs_are_flagged() -> None:
    rel = Relationship("tp_instrument", "inhibits", "tp_profile", "probes distort timings")
    assert _codes(_seq(Step("tp_instrument"), Step("tp_profile")), rel) == [
        ("lcl_inhibits_pair", "warning")
    ]
    assert _codes(_seq(Step("tp_instrument")), rel) == []


def test_precedes_order() -> None:
    rel = Relationship("tp_hypothesis", "precedes", "tp_bisect")
    assert _codes(_seq(Step("tp_bisect"), Step("tp_hypothesis")), rel) == [
        ("lcl_order_violated", "error")
    ]
    assert _codes(_seq(Step("tp_hypothesis"), Step("tp_bisect")), rel) == []
    par = OperatorNode("parallel", freeze({}), (Step("tp_bisect"), Step("tp_hypothesis")))
    assert _codes(_seq(par), rel) == []  # concurrent: no order to violate
    follows = Relationship("tp_bisect", "follows", "tp_hypothesis")
    assert _codes(_seq(Step("tp_bisect"), Step("tp_hypothesis")), follows) == [
        ("lcl_order_violated", "error")
    ]


def test_substitutes_are_fine_as_fallback_alternatives() -> None:
    rel = Relationship("tp_bisect", "substitutes", "tp_search_history")
    both = _seq(Step("tp_bisect"), Step("tp_search_history"))
    assert _codes(both, rel) == [("lcl_substitutes_pair", "warning")]
    fb = OperatorNode("fallback", freeze({}), (Step("tp_bisect"), Step("tp_search_history")))
    assert _codes(_seq(fb), rel) == []


def test_ordering_cycles_are_found() -> None:
    rels = [
        Relationship("a", "precedes", "b"),
        Relationship("b", "precedes", "c"),
        Relationship("a", "follows", "c"),
    ]
    assert find_cycle(rels) == ("a", "b", "c", "a")
    assert find_cycle(rels[:2]) is None


def test_program_relationships_are_checked_at_compile_time() -> None:
    program = (
        lcl.compose("x")
        .primitives("tp_implement", "tp_verify_plan")
        .relate("tp_implement", "requires", "tp_design_plan", rationale="plan first")
        .done()
    )
    try:
        program.compile()
    except LclError as exc:
        [d] = exc.errors
        assert d.code == "lcl_requires_missing" and "plan first" in d.message
    else:  # pragma: no cover - the compile must fail
        raise AssertionError("a missing `requires` target must be an error")
