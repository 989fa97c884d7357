"""Conditionals decided on facts before the run; expected runs and durations."""

from __future__ import annotations

from codelibrarian.planning.decide import compile_candidate
from codelibrarian.planning.estimate import DEFAULT_STEP_MS, expected_runs, step_time, total_ms
from codelibrarian.planning.history import StepTiming
from codelibrarian.techniques.facts import facts_from_mapping
from codelibrarian.techniques.registry import default_library
from codelibrarian.techniques.tree import steps_of


def test_fact_conditionals_are_decided_and_step_ones_left() -> None:
    lib = default_library()
    git = facts_from_mapping({"codebase": {"has_git": True}})
    compiled, decisions = compile_candidate("composition", "tc_change_verification", lib, git)
    assert {d.value for d in decisions} == {None}  # it reads a step's output: run time
    assert any("conditional" in n for n in str(compiled.root.to_dict()).split("'"))
    on, d_on = compile_candidate("composition", "tc_incident_response", lib, git)
    off, d_off = compile_candidate(
        "composition", "tc_incident_response", lib, facts_from_mapping({})
    )
    assert [d.value for d in d_on] == [True] and [d.value for d in d_off] == [False]
    assert "tp_search_history" in {s.primitive for s in steps_of(on.root)}
    assert "tp_search_history" not in {s.primitive for s in steps_of(off.root)}
    assert d_off[0].effect.startswith("skips")


def test_patterns_decide_their_optional_primitives() -> None:
    lib = default_library()
    flaky = facts_from_mapping({"intent": {"text": "flaky", "keywords": ["flaky"]},
                                "codebase": {"has_tests": True}})  # fmt: skip
    compiled, decisions = compile_candidate("pattern", "pattern_bug_investigation", lib, flaky)
    prims = [s.primitive for s in steps_of(compiled.root)]
    assert prims[0] == "tp_min_repro"
    assert any(d.value is True for d in decisions)


def test_expected_runs_and_total_time() -> None:
    lib = default_library()
    compiled, _ = compile_candidate(
        "composition", "tc_root_cause_recovery", lib, facts_from_mapping({})
    )
    runs = expected_runs(compiled.root)
    assert runs["tp_min_repro"] == 1
    assert runs["tp_hypothesis"] == 3  # loop: min(max_iterations 5, 3)
    assert runs["tp_search_history"] == 0  # a fallback alternative
    ms = {s.step_id: 1000 for s in steps_of(compiled.root)}
    # min_repro + 3 x (hypothesis + bisect + root_cause) + implement + verify
    assert total_ms(compiled.root, ms) == 1000 + 3 * 3000 + 2000


def test_step_time_from_history_or_default() -> None:
    timings = {"tp_a": StepTiming("tp_a", 1234, 7)}
    assert step_time("tp_a", "agent", timings).ms == 1234
    t = step_time("tp_b", "builtin", timings)
    assert (t.ms, t.source) == (DEFAULT_STEP_MS["builtin"], "default")
    assert "7 successful" in step_time("tp_a", "agent", timings).explain()
