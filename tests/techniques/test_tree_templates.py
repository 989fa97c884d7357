"""Composition trees: stable derived ids, normalization; structure templates."""

from __future__ import annotations

from codelibrarian.techniques.diagnostics import Loc
from codelibrarian.techniques.predicates import Predicate
from codelibrarian.techniques.templates import apply_template
from codelibrarian.techniques.tree import (
    OperatorNode,
    Step,
    assign_ids,
    freeze,
    normalize,
    steps_of,
)


def _seq(*kids: object) -> OperatorNode:
    return OperatorNode("sequence", freeze({}), tuple(kids))  # type: ignore[arg-type]


def test_ids_derive_from_primitive_and_position() -> None:
    tree = _seq(
        Step("tp_a"),
        OperatorNode("parallel", freeze({}), (Step("tp_a"), Step("tp_b"))),
        Step("tp_a"),
    )
    named, diags = assign_ids(tree)
    assert not diags
    assert [s.step_id for s in steps_of(named)] == ["tp_a", "tp_a__2", "tp_b", "tp_a__3"]
    assert isinstance(named, OperatorNode) and named.node_id == "sequence#1"
    again, _ = assign_ids(tree)
    assert again == named


def test_explicit_ids_and_duplicates() -> None:
    tree = _seq(
        Step("tp_a", step_id="first", explicit_id=True),
        Step("tp_b", step_id="first", explicit_id=True),
    )
    _, diags = assign_ids(tree)
    assert [d.code for d in diags] == ["lcl_duplicate_step"]


def test_normalize_flattens_collapses_and_drops() -> None:
    tree = _seq(
        _seq(Step("a"), Step("b")),
        OperatorNode("parallel", freeze({}), (Step("c"),)),
        OperatorNode("retry", freeze({}), ()),
    )
    out, diags = normalize(tree)
    assert isinstance(out, OperatorNode)
    assert [getattr(c, "primitive", None) for c in out.children] == ["a", "b", "c"]
    assert [d.code for d in diags] == ["lcl_operator_emptied"]


def test_conditional_losing_its_then_branch_negates() -> None:
    when = Predicate.parse("change.present")
    cond = OperatorNode("conditional", freeze({"when": when}), (_seq(), Step("b")))
    out, _ = normalize(cond)
    assert isinstance(out, OperatorNode)
    assert out.params["when"].text == "not (change.present)"
    assert out.children == (Step("b"),)


def test_templates() -> None:
    loc = Loc("t", 1, 1)
    node, diags = apply_template(
        "gated", ["tp_verify_plan", "tp_implement", "tp_write_docs"], loc=loc
    )
    assert not diags and isinstance(node, OperatorNode)
    gate = node.children[1]
    assert isinstance(gate, OperatorNode) and gate.operator == "gate"
    assert gate.params["when"].text == "steps.tp_verify_plan.output.passed == true"
    node, _ = apply_template("iterative", ["a", "b"])
    assert isinstance(node, OperatorNode) and node.params["max_iterations"] == 10
    assert node.params["converge"] is True
    node, _ = apply_template("quorum", ["a", "b", "c"], {"threshold": 0.5})
    assert isinstance(node, OperatorNode) and node.params["required"] == 2
    _, diags = apply_template("fanout", ["a"])
    assert diags[0].code == "lcl_template_arity"
    _, diags = apply_template("pipline", ["a"])
    assert diags[0].suggestions == ("pipeline",)
