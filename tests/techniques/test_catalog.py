"""Every built-in primitive, pattern, composition and preset validates, type-checks and compiles."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from codelibrarian.techniques import lcl
from codelibrarian.techniques.lcl import compile_composition
from codelibrarian.techniques.patterns import MIN_EXAMPLES
from codelibrarian.techniques.registry import default_library
from codelibrarian.techniques.vocabulary import ARCHETYPES

LIB = default_library()

SEED_PRIMITIVES = (
    "tp_hypothesis", "tp_bisect", "tp_root_cause", "tp_verify_plan", "tp_min_repro",
    "tp_instrument", "tp_review_tests", "tp_threat_model", "tp_security_abuse_cases",
    "tp_secret_scan", "tp_arch_mapping", "tp_search_history", "tp_change_impact",
    "tp_dependency_map", "tp_test_gap_analysis", "tp_risk_scan", "tp_accessibility_review",
    "tp_deliberate",
)  # fmt: skip
SEED_COMPOSITIONS = (
    "tc_root_cause_recovery", "tc_auth_security_review", "tc_api_change_review",
    "tc_migration_review", "tc_ui_accessibility_review", "tc_performance_regression",
)  # fmt: skip
SEED_PATTERNS = (
    "pattern_bug_investigation", "pattern_performance_investigation",
    "pattern_change_verification", "pattern_release_verification",
    "pattern_feature_construction", "pattern_refactoring", "pattern_multi_agent_task",
    "pattern_self_improvement", "pattern_codebase_onboarding", "pattern_security_audit",
    "pattern_api_design", "pattern_incident_response", "pattern_dependency_update",
    "pattern_technical_debt", "pattern_test_generation", "pattern_documentation",
)  # fmt: skip
SEED_OPERATORS = (
    "sequence", "parallel", "conditional", "loop", "gate", "retry", "circuit_breaker",
    "fallback", "quorum", "consensus", "timebox", "budget_cap",
)  # fmt: skip


def test_every_seed_name_is_present() -> None:
    assert set(SEED_PRIMITIVES) <= set(LIB.primitives)
    assert set(SEED_COMPOSITIONS) <= set(LIB.compositions)
    assert set(LIB.patterns) == set(SEED_PATTERNS)
    assert set(LIB.operators) == set(SEED_OPERATORS)
    assert not LIB.plugin_errors
    assert not LIB.warnings


@pytest.mark.parametrize("pid", sorted(LIB.primitives))
def test_primitive_schemas_and_contract(pid: str) -> None:
    p = LIB.primitives[pid]
    Draft202012Validator.check_schema(p.input_schema)
    Draft202012Validator.check_schema(p.output_schema)
    out = p.output_schema
    assert out["type"] == "object" and out["properties"] and out["required"]
    assert set(out["required"]) <= set(out["properties"])
    assert p.instructions and p.description and p.name
    assert p.context.budget >= 200 and "policy" in p.context.all_lanes
    if p.executor == "builtin":
        assert not p.capabilities.required
    else:
        assert p.capabilities.required, "a model- or agent-run primitive declares what it needs"


@pytest.mark.parametrize("pattern_id", sorted(LIB.patterns))
def test_patterns_are_complete(pattern_id: str) -> None:
    p = LIB.patterns[pattern_id]
    assert p.archetype in ARCHETYPES
    assert p.situations and all(len(s.examples) >= MIN_EXAMPLES for s in p.situations)
    assert all(s.context and s.trigger for s in p.situations)
    assert p.core and p.anti_patterns and p.success_signals and p.failure_signals
    assert p.metadata.actions and p.metadata.domains and p.metadata.scopes
    for name in (*p.core, *(o.primitive for o in p.optional)):
        assert name in LIB.primitives, f"{pattern_id} names unknown primitive {name}"
    for cid in p.examples:
        assert cid in LIB.compositions, f"{pattern_id} names unknown composition {cid}"
        assert pattern_id in LIB.compositions[cid].metadata.patterns
    lcl.compile(pattern_id)  # a pattern instantiates and compiles


def test_every_pattern_has_a_composition() -> None:
    covered = {pid for c in LIB.compositions.values() for pid in c.metadata.patterns}
    assert covered == set(LIB.patterns)


@pytest.mark.parametrize("cid", sorted(LIB.compositions))
def test_compositions_compile_cleanly(cid: str) -> None:
    c = LIB.compositions[cid]
    compiled = compile_composition(c, library=LIB)
    assert compiled.stratum == "finite"
    assert not compiled.warnings, [w.render() for w in compiled.warnings]
    assert c.metadata.actions and c.metadata.domains and c.metadata.scopes


def test_all_twelve_operators_are_used_by_builtins() -> None:
    from codelibrarian.techniques.tree import OperatorNode, preorder

    used = {
        n.operator
        for c in LIB.compositions.values()
        for n in preorder(c.root)
        if isinstance(n, OperatorNode)
    }
    assert used == set(SEED_OPERATORS)


@pytest.mark.parametrize("name", sorted(lcl.builtin_presets()))
def test_builtin_presets_compile(name: str) -> None:
    assert lcl.compile(name).stratum == "finite"


def test_a_pattern_naming_a_missing_primitive_fails() -> None:
    from codelibrarian.techniques.patterns import read_pattern
    from codelibrarian.techniques.reader import Reader

    good = LIB.patterns["pattern_bug_investigation"]
    data = {
        "id": "pattern_x", "name": "X", "archetype": "investigation", "description": "d",
        "actions": ["debug"], "domains": ["general"], "scopes": ["Small"],
        "core_primitives": ["tp_hypothesis", "tp_bisekt"], "examples": ["tc_root_cause_recovery"],
        "success_signals": ["s"], "failure_signals": ["f"], "structure": {"template": "pipeline"},
        "situations": [s.to_dict() | {"match_score": 0.5} for s in good.situations][:1],
        "anti_patterns": [a.to_dict() for a in good.anti_patterns],
    }  # fmt: skip
    data["situations"][0].pop("match_score_per_mille")
    diags: list = []
    got = read_pattern(
        Reader(data, positions=None, diags=diags),
        LIB.primitives,
        sorted(LIB.operators),
    )
    assert got is None
    [d] = [d for d in diags if d.severity == "error"]
    assert d.code == "lcl_primitive_not_found" and d.suggestions[0] == "tp_bisect"
    assert d.loc.key == "core_primitives[1]"
