"""Operator parameter models: defaults, validation, and the seed's quorum arithmetic fixed."""

from __future__ import annotations

import pytest

from codelibrarian.techniques.diagnostics import Loc
from codelibrarian.techniques.operators import BUILTIN_OPERATORS, quorum_required, validate_params
from codelibrarian.techniques.predicates import Predicate

OPS = {o.id: o for o in BUILTIN_OPERATORS}
LOC = Loc("x", 1, 1)


def test_defaults_are_applied() -> None:
    params, diags = validate_params(OPS["retry"], {}, children=1, loc=LOC)
    assert not diags
    assert params == {
        "attempts": 3,
        "backoff": "exponential",
        "base_delay_ms": 1000,
        "max_delay_ms": 60000,
    }


@pytest.mark.parametrize(
    ("op", "raw", "fragment"),
    [
        ("retry", {"attempts": 0}, "at least 1"),
        ("retry", {"backoff": "exponentail"}, "use one of"),
        ("retry", {"maxRetries": 3}, "no parameter 'maxRetries'"),
        ("loop", {"max_iterations": "5"}, "whole number"),
        ("gate", {}, "needs the parameter 'when'"),
        ("conditional", {"when": "a ="}, "use `==`"),
        ("quorum", {"required": 2, "threshold": 0.5}, "not both"),
        ("quorum", {"threshold": 1.5}, "share in [0, 1)"),
        ("timebox", {"duration_ms": True}, "whole number"),
    ],
)
def test_invalid_parameters(op: str, raw: dict[str, object], fragment: str) -> None:
    _, diags = validate_params(OPS[op], raw, children=3, loc=LOC)
    assert any(fragment in d.message for d in diags), [d.message for d in diags]


def test_predicates_are_parsed() -> None:
    params, _ = validate_params(OPS["loop"], {"until": "change.present"}, children=1, loc=LOC)
    assert isinstance(params["until"], Predicate)


def test_quorum_default_is_a_strict_majority_not_unanimity() -> None:
    # seed defect: ceil(n * 0.5) + 1 demands all three of three voters
    assert quorum_required(3, required=None, threshold_pm=None) == 2
    assert quorum_required(4, required=None, threshold_pm=None) == 3
    assert quorum_required(5, required=None, threshold_pm=None) == 3
    # the seed template's threshold 0.5 means "more than half"
    assert quorum_required(4, required=None, threshold_pm=500) == 3
    assert quorum_required(3, required=None, threshold_pm=0) == 1
    params, diags = validate_params(OPS["quorum"], {}, children=3, loc=LOC)
    assert params["required"] == 2 and not diags


def test_quorum_cannot_require_more_voters_than_it_has() -> None:
    _, diags = validate_params(OPS["quorum"], {"required": 4}, children=3, loc=LOC)
    assert any("only 3" in d.message for d in diags)


def test_unbounded_loop_is_a_warning_not_a_hidden_limit() -> None:
    params, diags = validate_params(OPS["loop"], {}, children=1, loc=LOC)
    assert params["max_iterations"] is None
    [d] = diags
    assert d.severity == "warning" and d.code == "lcl_loop_unbounded"
