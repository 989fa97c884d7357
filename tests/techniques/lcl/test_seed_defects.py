"""Each defect of seed 004's operator, LCL, template and stratum sections, fixed.

Every test here would fail on the seed's behaviour; docs/lcl.md lists them.
"""

from __future__ import annotations

import pytest

from codelibrarian.techniques import lcl
from codelibrarian.techniques.diagnostics import LclError
from codelibrarian.techniques.operators import quorum_required
from codelibrarian.techniques.predicates import evaluate, parse
from codelibrarian.techniques.strata import EXECUTION_POLICIES, infer_stratum, validate_stratum
from codelibrarian.techniques.templates import apply_template
from codelibrarian.techniques.tree import OperatorNode, Step, freeze, steps_of


def _op(name: str, *kids: object, **params: object) -> OperatorNode:
    return OperatorNode(name, freeze(params), tuple(kids))  # type: ignore[arg-type]


def test_quorum_of_three_needs_two_not_three() -> None:
    # seed: required = ceil(n * 0.5) + 1 -> 3 of 3
    assert quorum_required(3, required=None, threshold_pm=None) == 2


def test_quorum_threshold_and_required_are_one_model() -> None:
    # seed: the template writes `threshold`, the interpreter reads only `required`
    node, _ = apply_template("quorum", ["a", "b", "c", "d"], {"threshold": 0.5})
    assert isinstance(node, OperatorNode) and node.params["required"] == 3


def test_loop_without_bound_has_no_hidden_limit_and_is_productive() -> None:
    # seed: MAX_ITERATIONS = 100 at run time, yet inferStratum says "productive"
    loop = _op("loop", Step("a"), until=None, converge=False, max_iterations=None)
    assert loop.params["max_iterations"] is None
    assert infer_stratum(loop) == "productive"
    assert EXECUTION_POLICIES["productive"].human_approval_required


def test_loop_with_a_static_bound_is_finite() -> None:
    # seed: "bounded loop with counter" is a *finite* example but inferred as bounded
    assert infer_stratum(_op("loop", Step("a"), max_iterations=5)) == "finite"


def test_retry_and_timebox_strata() -> None:
    # seed: listed as bounded examples, ignored by its inference
    assert infer_stratum(_op("retry", Step("a"), attempts=3)) == "finite"
    unbounded = _op("loop", Step("a"), max_iterations=None)
    assert infer_stratum(_op("timebox", unbounded, duration_ms=1000)) == "bounded"
    assert infer_stratum(_op("budget_cap", unbounded, max_tokens=1000)) == "bounded"
    assert infer_stratum(_op("timebox", Step("a"), duration_ms=1000)) == "finite"


def test_nested_loops_are_seen() -> None:
    # seed: inferStratum reads only composition.operators (the top level)
    nested = _op("sequence", Step("a"), _op("parallel", Step("b"), _op("loop", Step("c"))))
    assert infer_stratum(nested) == "productive"


def test_stratum_violations_name_the_node_and_a_fix() -> None:
    tree, _ = __import__("codelibrarian.techniques.tree", fromlist=["assign_ids"]).assign_ids(
        _op("sequence", Step("a"), _op("loop", Step("b"), max_iterations=None))
    )
    result = validate_stratum(tree, "bounded")
    assert not result.valid and result.actual == "productive"
    [v] = result.violations
    assert v.node_id == "loop#1" and "max_iterations" in v.suggested_fix


def test_branch_cycles_cannot_be_written() -> None:
    # seed: `branch` results may jump to any primitive id, so cycles are possible;
    # here conditional/gate/fallback only choose among their own children
    program = (
        lcl.compose("x")
        .primitives("tp_hypothesis", "tp_bisect")
        .relate("tp_bisect", "precedes", "tp_hypothesis")
        .done()
    )
    with pytest.raises(LclError) as info:
        program.compile()
    assert info.value.errors[0].code == "lcl_order_violated"


def test_convergence_is_understood() -> None:
    # seed: iterative template sets terminationCondition 'convergence', unknown to the loop
    node, _ = apply_template("iterative", ["a"])
    assert isinstance(node, OperatorNode) and node.params["converge"] is True
    programs, diags = lcl.programs_from_text(
        '{"p": {"base": "primitives", "primitiveIds": ["tp_hypothesis"], "operators": ['
        '{"type": "loop", "inputs": ["tp_hypothesis"], "parameters": '
        '{"maxIterations": 3, "terminationCondition": "convergence"}}]}}',
        "seed.json",
    )
    assert not diags
    loop = programs[0].compile().root
    assert isinstance(loop, OperatorNode)
    assert loop.params["converge"] is True and loop.params["max_iterations"] == 3


def test_seed_max_retries_counts_repeats() -> None:
    programs, _ = lcl.programs_from_text(
        '{"p": {"base": "primitives", "primitiveIds": ["tp_bisect"], "operators": ['
        '{"type": "retry", "inputs": ["tp_bisect"], "parameters": {"maxRetries": 3}}]}}',
        "seed.json",
    )
    retry = programs[0].compile().root
    assert isinstance(retry, OperatorNode) and retry.params["attempts"] == 4


def test_overrides_are_applied() -> None:
    # seed: compileLCL adds pattern.corePrimitives and ignores `overrides`
    steps = [s.primitive for s in steps_of(lcl.compile("preset_quick_debug").root)]
    assert "tp_root_cause" not in steps and "tp_verify_plan" not in steps
    assert steps[-2:] == ["tp_hypothesis", "tp_bisect"]


def test_conditionals_are_conditions() -> None:
    # seed: compileLCL adds every conditional's primitive, true or not, and ignores then
    facts = {"change": {"touches_auth": False, "touches_input": False}}
    compiled = lcl.compile("preset_security_review", facts=facts)
    steps = [s.primitive for s in steps_of(compiled.root)]
    assert "tp_threat_model" not in steps and "tp_security_abuse_cases" not in steps
    removed = (
        lcl.compose("x").use("tc_change_verification").when("true").remove("tp_secret_scan").done()
    )
    assert "tp_secret_scan" not in [s.primitive for s in steps_of(removed.compile(facts={}).root)]


def test_conditional_has_an_else() -> None:
    # seed: LCLConditional has no else branch though the formal semantics require one
    p = (
        lcl.compose("x").use("tc_test_backfill").when("codebase.has_tests")
        .add("tp_verify_plan").otherwise().add("tp_review_tests").done()
    )  # fmt: skip
    steps = [s.step_id for s in steps_of(p.compile(facts={"codebase": {"has_tests": False}}).root)]
    assert steps[-1] == "tp_review_tests__2"


def test_condition_strings_are_parsed_not_split() -> None:
    # seed: safeEvaluate splits the text on the first comparator it finds
    env = {"x": "a>b", "y": 1}
    assert evaluate("x == 'a>b'", env) is True
    assert evaluate("y >= 1 and x != 'c'", env) is True
    with pytest.raises(LclError):
        parse("state.confidence > 0.8 => tp_fast_path")


def test_type_errors_are_all_reported() -> None:
    # seed: typecheckLCL throws at the first problem
    p = lcl.compose("x").use("tc_change_verification").add("tp_nope").add("tp_nada").done()
    with pytest.raises(LclError) as info:
        p.compile()
    assert len(info.value.errors) == 2


def test_compile_is_deterministic() -> None:
    # seed: compileLCL stamps `new Date()` into every composition
    a = lcl.compile("preset_security_review").to_dict()
    b = lcl.compile("preset_security_review").to_dict()
    assert a == b


def test_productive_policy_is_consistent() -> None:
    # seed: productive is "safe with supervision" and "not autonomous" at once
    p = EXECUTION_POLICIES["productive"]
    assert p.human_approval_required and not p.autonomous_execution
