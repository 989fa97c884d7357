"""The engine core over scripted topologies: exact dispatch order, final outputs, evidence.

Each case is a composition tree, a script of step outcomes (success, failure,
contract violation, timeout, disagreeing votes, slow steps) and, for runs that ask
a human, the answers; the expected values are written from the operator semantics
in docs/execution.md, not copied from a run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from codelibrarian.execution.plan import RunPlan, StepInfo
from codelibrarian.techniques.strata import EXECUTION_POLICIES
from codelibrarian.techniques.tree import OperatorNode, assign_ids

from .sim import FAIL, OK, TIMEOUT, VIOLATED, Out, ok, op, s, simulate

FACTS = {"codebase": {"has_tests": True, "file_count": 12}, "change": {"present": False}}


@dataclass
class Case:
    name: str
    tree: Any
    script: Mapping[str, Sequence[Out]] = field(default_factory=dict)
    dispatches: Sequence[str] = ()
    status: str = "succeeded"
    decisions: Sequence[str] | None = ()
    outputs: Mapping[str, Any] | None = None
    reason: str | None = None
    humans: Sequence[bool] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    extra: Callable[[Any], None] | None = None


def vote(value: str, ms: int = 10) -> Out:
    return ok(ms, conclusion=value)


def _times(expected: Sequence[int]) -> Callable[[Any], None]:
    def check(sim: Any) -> None:
        assert sim.dispatch_times == list(expected)

    return check


def _unsupported_plan() -> RunPlan:
    node = OperatorNode("acme_throttle", {}, (s("a"),))
    root, _ = assign_ids(node)
    info = {"a": StepInfo("a", "a", "agent", "Thinker", 0, {})}
    return RunPlan("comp", root, info, "finite", EXECUTION_POLICIES["finite"])


CASES = [
    Case("sequence_in_order", op("sequence", s("a"), s("b"), s("c")),
         dispatches=["a.1", "b.1", "c.1"],
         outputs={"a": {"ok": True}, "b": {"ok": True}, "c": {"ok": True}}),
    Case("sequence_stops_at_first_failure", op("sequence", s("a"), s("b"), s("c")),
         {"b": [FAIL]}, ["a.1", "b.1"], "failed", [], {"a": {"ok": True}}, reason="child_failed"),
    Case("sequence_stops_at_contract_violation", op("sequence", s("a"), s("b"), s("c")),
         {"b": [VIOLATED]}, ["a.1", "b.1"], "failed", reason="child_failed"),
    Case("parallel_outputs_keyed_by_step_not_arrival",
         op("sequence", op("parallel", s("b"), s("c")), s("d")),
         {"b": [ok(50, field="from b")], "c": [ok(5, field="from c")]},
         ["b.1", "c.1", "d.1"],
         outputs={"b": {"field": "from b"}, "c": {"field": "from c"}, "d": {"ok": True}},
         extra=_times([0, 0, 50])),
    Case("parallel_max_concurrency_one_runs_in_child_order",
         op("parallel", s("b"), s("c"), s("d"), max_concurrency=1),
         {"b": [ok(30)], "c": [ok(20)], "d": [ok(10)]},
         ["b.1", "c.1", "d.1"], extra=_times([0, 30, 50])),
    Case("parallel_max_concurrency_two",
         op("parallel", s("b"), s("c"), s("d"), max_concurrency=2),
         {"b": [ok(30)], "c": [ok(10)], "d": [ok(10)]},
         ["b.1", "c.1", "d.1"], extra=_times([0, 0, 10])),
    Case("parallel_fail_fast_cancels_the_rest",
         op("parallel", s("b"), s("c"), s("d"), fail_fast=True),
         {"b": [Out("failure", ms=5)], "c": [ok(50)], "d": [ok(60)]},
         ["b.1", "c.1", "d.1"], "failed",
         ["cancel c.1 node_finished", "cancel d.1 node_finished"], reason="fail_fast"),
    Case("parallel_without_fail_fast_waits_for_all",
         op("parallel", s("b"), s("c"), s("d")),
         {"b": [Out("failure", ms=5)], "c": [ok(50)], "d": [ok(60)]},
         ["b.1", "c.1", "d.1"], "failed", [], {"c": {"ok": True}, "d": {"ok": True}}),
    Case("conditional_true_takes_the_first_child",
         op("conditional", s("a"), s("b"), when="codebase.has_tests"),
         dispatches=["a.1"], decisions=["branch conditional#1->a condition_true"]),
    Case("conditional_false_takes_the_else_child",
         op("conditional", s("a"), s("b"), when="not codebase.has_tests"),
         dispatches=["b.1"], decisions=["branch conditional#1->b condition_false"]),
    Case("conditional_false_without_else_is_skipped",
         op("sequence", op("conditional", s("a"), when="codebase.file_count > 100"), s("c")),
         dispatches=["c.1"], decisions=["skip conditional#1 condition_false"]),
    Case("conditional_reads_an_earlier_output",
         op("sequence", s("a"),
            op("conditional", s("b"), s("c"), when="steps.a.output.score >= 5")),
         {"a": [ok(score=7)]}, ["a.1", "b.1"],
         decisions=["branch conditional#1->b condition_true"]),
    Case("loop_until_a_confident_hypothesis",
         op("loop", s("h"), until="steps.h.output.confidence >= 800", max_iterations=5),
         {"h": [ok(confidence=300), ok(confidence=600), ok(confidence=900)]},
         ["h.1", "h.2", "h.3"],
         decisions=["loop loop#1 #1 continue not_met", "loop loop#1 #2 continue not_met",
                    "loop loop#1 #3 stop until_holds"],
         outputs={"h": {"confidence": 900}}),
    Case("loop_until_holds_but_the_iteration_failed",
         op("sequence",
            op("loop", op("sequence", s("h"), s("r")),
               until="steps.h.output.confidence >= 800", max_iterations=3),
            s("fix")),
         {"h": [ok(confidence=900)], "r": [VIOLATED]}, ["h.1", "r.1"], "failed",
         ["loop loop#1 #1 stop until_holds"], reason="child_failed"),
    Case("loop_exhausted_fails",
         op("loop", s("h"), until="steps.h.output.confidence >= 800", max_iterations=3),
         {"h": [ok(confidence=1)] * 3}, ["h.1", "h.2", "h.3"], "failed",
         ["loop loop#1 #1 continue not_met", "loop loop#1 #2 continue not_met",
          "loop loop#1 #3 stop loop_exhausted"], reason="loop_exhausted"),
    Case("counted_loop_runs_its_iterations",
         op("loop", s("a"), max_iterations=3), dispatches=["a.1", "a.2", "a.3"],
         decisions=["loop loop#1 #1 continue not_met", "loop loop#1 #2 continue not_met",
                    "loop loop#1 #3 stop iterations_done"]),
    Case("counted_loop_stops_at_a_failed_iteration",
         op("loop", s("a"), max_iterations=3), {"a": [OK, FAIL]}, ["a.1", "a.2"], "failed",
         ["loop loop#1 #1 continue not_met", "loop loop#1 #2 stop iteration_failed"]),
    Case("loop_converges_when_outputs_repeat",
         op("loop", s("a"), converge=True, max_iterations=10),
         {"a": [ok(v=1), ok(v=2), ok(v=2)]}, ["a.1", "a.2", "a.3"],
         decisions=["loop loop#1 #1 continue not_met", "loop loop#1 #2 continue not_met",
                    "loop loop#1 #3 stop converged"]),
    Case("loop_stop_on_all_success",
         op("loop", op("sequence", s("a"), s("b")), stop_on="all_success", max_iterations=4),
         {"b": [FAIL, OK]}, ["a.1", "b.1", "a.2", "b.2"],
         decisions=["loop loop#1 #1 continue not_met", "loop loop#1 #2 stop all_success"]),
    Case("loop_stop_on_any_success",
         op("loop", op("parallel", s("a"), s("b")), stop_on="any_success", max_iterations=4),
         {"a": [FAIL, FAIL], "b": [FAIL, OK]}, ["a.1", "b.1", "a.2", "b.2"],
         decisions=["loop loop#1 #1 continue not_met", "loop loop#1 #2 stop any_success"]),
    Case("loop_stop_on_verification_passed",
         op("loop", op("sequence", s("impl"), s("verify")), stop_on="verification_passed",
            max_iterations=4),
         {"verify": [ok(passed=False), ok(passed=True)]},
         ["impl.1", "verify.1", "impl.2", "verify.2"],
         decisions=["loop loop#1 #1 continue not_met", "loop loop#1 #2 stop verification_passed"]),
    Case("nested_loops_keep_their_own_counters",
         op("loop", op("loop", s("a"), max_iterations=2), max_iterations=3),
         dispatches=[f"a.{i}" for i in range(1, 7)],
         decisions=["loop loop#2 #1 continue not_met", "loop loop#2 #2 stop iterations_done",
                    "loop loop#1 #1 continue not_met",
                    "loop loop#2 #1 continue not_met", "loop loop#2 #2 stop iterations_done",
                    "loop loop#1 #2 continue not_met",
                    "loop loop#2 #1 continue not_met", "loop loop#2 #2 stop iterations_done",
                    "loop loop#1 #3 stop iterations_done"]),
    Case("a_thousand_skipped_iterations_do_not_recurse",
         op("loop", op("conditional", s("a"), when="codebase.file_count > 100"),
            max_iterations=1000),
         dispatches=[], decisions=None, extra=lambda sim: (
             sum(1 for e in sim.events if e["kind"] == "skip_decision") == 1000 or
             pytest.fail("expected 1000 skips"))),
    Case("gate_open_runs_the_body", op("gate", s("a"), when="codebase.has_tests"),
         dispatches=["a.1"], decisions=["branch gate#1->a gate_open"]),
    Case("gate_closed_stops_the_run",
         op("sequence", op("gate", s("a"), when="change.present"), s("b")),
         dispatches=[], status="terminated", decisions=["terminate gate#1 gate_closed"],
         reason="gate_closed"),
    Case("gate_closed_skip_goes_on",
         op("sequence", op("gate", s("a"), when="change.present", on_fail="skip"), s("b")),
         dispatches=["b.1"], decisions=["skip gate#1 gate_closed"]),
    Case("retry_after_failure_and_violation",
         op("retry", s("b"), attempts=3, backoff="constant", base_delay_ms=0),
         {"b": [FAIL, VIOLATED, OK]}, ["b.1", "b.2", "b.3"],
         decisions=["retry retry#1 attempt=2 delay=0", "retry retry#1 attempt=3 delay=0"]),
    Case("retry_on_timeout",
         op("retry", s("b"), attempts=2, backoff="constant", base_delay_ms=0),
         {"b": [TIMEOUT, OK]}, ["b.1", "b.2"], decisions=["retry retry#1 attempt=2 delay=0"]),
    Case("retry_exhausted_falls_back",
         op("fallback", op("retry", s("b"), attempts=2, backoff="constant", base_delay_ms=0),
            s("c")),
         {"b": [FAIL, FAIL]}, ["b.1", "b.2", "c.1"],
         decisions=["retry retry#1 attempt=2 delay=0", "branch fallback#1->c alternative"]),
    Case("retry_exponential_backoff_waits",
         op("retry", s("b"), attempts=3, backoff="exponential", base_delay_ms=100),
         {"b": [FAIL, FAIL, OK]}, ["b.1", "b.2", "b.3"],
         decisions=["retry retry#1 attempt=2 delay=100", "retry retry#1 attempt=3 delay=200"],
         extra=_times([0, 110, 320])),
    Case("fallback_primary_succeeds", op("fallback", s("a"), s("b"), s("c")),
         dispatches=["a.1"]),
    Case("fallback_alternatives_in_order", op("fallback", s("a"), s("b"), s("c")),
         {"a": [FAIL], "b": [VIOLATED]}, ["a.1", "b.1", "c.1"],
         decisions=["branch fallback#1->b alternative", "branch fallback#1->c alternative"]),
    Case("fallback_exhausted", op("fallback", s("a"), s("b")), {"a": [FAIL], "b": [FAIL]},
         ["a.1", "b.1"], "failed", ["branch fallback#1->b alternative"],
         reason="fallback_exhausted"),
    Case("quorum_two_of_three_agree",
         op("quorum", s("v", "v1"), s("v", "v2"), s("v", "v3")),
         {"v1": [vote("A")], "v2": [vote("A")], "v3": [vote("B")]},
         ["v1.1", "v2.1", "v3.1"],
         decisions=["vote quorum#1 2/2 agreed=True tied=False dissent=v3"],
         extra=lambda sim: sim.outputs["quorum#1"]["conclusion"] == "A"
         or pytest.fail(str(sim.outputs))),
    Case("quorum_without_agreement_escalates_and_a_human_approves",
         op("quorum", s("v", "v1"), s("v", "v2"), s("v", "v3")),
         {"v1": [vote("A")], "v2": [vote("B")], "v3": [vote("C")]},
         ["v1.1", "v2.1", "v3.1"],
         decisions=["vote quorum#1 1/2 agreed=False tied=True dissent=v1,v2,v3",
                    "escalate quorum#1 vote_tied", "human quorum#1 escalate approved=True"],
         humans=[True],
         extra=lambda sim: sim.outputs["quorum#1"]["method"] == "human"
         or pytest.fail(str(sim.outputs))),
    Case("quorum_required_three_escalates_and_is_rejected",
         op("quorum", s("v", "v1"), s("v", "v2"), s("v", "v3"), required=3),
         {"v1": [vote("A")], "v2": [vote("A")], "v3": [vote("B")]},
         ["v1.1", "v2.1", "v3.1"], "failed",
         ["vote quorum#1 2/3 agreed=False tied=False dissent=v3",
          "escalate quorum#1 no_quorum", "human quorum#1 escalate approved=False"],
         humans=[False], reason="rejected_by_human"),
    Case("quorum_threshold_tie_escalates",
         op("quorum", s("v", "v1"), s("v", "v2"), s("v", "v3"), s("v", "v4"), threshold=0.25),
         {"v1": [vote("A")], "v2": [vote("A")], "v3": [vote("B")], "v4": [vote("B")]},
         ["v1.1", "v2.1", "v3.1", "v4.1"], "awaiting_human",
         ["vote quorum#1 2/2 agreed=False tied=True dissent=v1,v2,v3,v4",
          "escalate quorum#1 vote_tied"]),
    Case("quorum_on_no_quorum_fail",
         op("quorum", s("v", "v1"), s("v", "v2"), on_no_quorum="fail"),
         {"v1": [vote("A")], "v2": [vote("B")]}, ["v1.1", "v2.1"], "failed",
         ["vote quorum#1 1/2 agreed=False tied=True dissent=v1,v2"], reason="no_quorum"),
    Case("quorum_a_failed_voter_abstains",
         op("quorum", s("v", "v1"), s("v", "v2"), s("v", "v3")),
         {"v1": [vote("A")], "v2": [FAIL], "v3": [vote("A")]},
         ["v1.1", "v2.1", "v3.1"],
         decisions=["vote quorum#1 2/2 agreed=True tied=False dissent=v2"]),
    Case("consensus_unanimous",
         op("consensus", s("v", "v1"), s("v", "v2"), s("v", "v3")),
         {"v1": [vote("A")], "v2": [vote("A")], "v3": [vote("A")]},
         ["v1.1", "v2.1", "v3.1"],
         decisions=["vote consensus#1 3/3 agreed=True tied=False dissent="]),
    Case("consensus_true_majority_resolution",
         op("consensus", s("v", "v1"), s("v", "v2"), s("v", "v3"), resolution="majority"),
         {"v1": [vote("A")], "v2": [vote("B")], "v3": [vote("A")]},
         ["v1.1", "v2.1", "v3.1"],
         decisions=["vote consensus#1 2/3 agreed=True tied=False dissent=v2"],
         extra=lambda sim: sim.outputs["consensus#1"]["method"] == "majority"
         or pytest.fail(str(sim.outputs))),
    Case("consensus_plurality_is_not_a_majority",
         op("consensus", s("v", "v1"), s("v", "v2"), s("v", "v3"), s("v", "v4"),
            resolution="majority"),
         {"v1": [vote("A")], "v2": [vote("A")], "v3": [vote("B")], "v4": [vote("C")]},
         ["v1.1", "v2.1", "v3.1", "v4.1"], "awaiting_human",
         ["vote consensus#1 2/4 agreed=False tied=False dissent=v3,v4",
          "escalate consensus#1 no_consensus"]),
    Case("timebox_met",
         op("timebox", op("sequence", s("a"), s("b")), duration_ms=1000),
         dispatches=["a.1", "b.1"]),
    Case("timebox_stops_a_running_step_and_terminates",
         op("sequence", op("timebox", s("a"), duration_ms=100, on_timeout="terminate"), s("b")),
         {"a": [ok(500)]}, ["a.1"], "terminated",
         ["cancel a.1 timebox_expired", "timebox timebox#1 running=1",
          "terminate timebox#1 timebox_expired"], reason="timebox_expired"),
    Case("timebox_checkpoint_then_approve_redispatches",
         op("timebox", op("sequence", s("a"), s("b")), duration_ms=100),
         {"a": [ok(50)], "b": [ok(500), ok(10)]}, ["a.1", "b.1", "b.2"],
         decisions=["cancel b.1 timebox_expired", "timebox timebox#1 running=1",
                    "checkpoint timebox#1 timebox_expired",
                    "human timebox#1 checkpoint approved=True", "renewed timebox#1 held=1"],
         humans=[True], extra=_times([0, 50, 100])),
    Case("timebox_checked_before_dispatch",
         op("timebox", op("sequence", s("a"), s("b")), duration_ms=100, on_timeout="terminate"),
         {"a": [ok(100)]}, ["a.1"], "terminated",
         ["timebox timebox#1 running=0", "terminate timebox#1 timebox_expired"]),
    Case("budget_cap_refuses_the_step_that_would_cross",
         op("budget_cap", op("sequence", s("a"), s("b"), s("c")), max_tokens=250),
         dispatches=["a.1", "b.1"], status="terminated",
         decisions=["refused budget_cap#1 step=c used=200 reserved=0",
                    "terminate budget_cap#1 budget_exceeded"], reason="budget_exceeded"),
    Case("budget_cap_across_parallel_branches",
         op("budget_cap", op("parallel", s("a"), s("b"), s("c")), max_tokens=250),
         dispatches=["a.1", "b.1"], status="terminated",
         decisions=["refused budget_cap#1 step=c used=0 reserved=200",
                    "terminate budget_cap#1 budget_exceeded",
                    "cancel a.1 budget_exceeded", "cancel b.1 budget_exceeded"]),
    Case("budget_cap_checkpoint_then_approve",
         op("budget_cap", op("sequence", s("a"), s("b"), s("c")), max_tokens=250,
            on_exceed="checkpoint"),
         dispatches=["a.1", "b.1", "c.1"], humans=[True],
         decisions=["refused budget_cap#1 step=c used=200 reserved=0",
                    "checkpoint budget_cap#1 budget_exceeded",
                    "human budget_cap#1 checkpoint approved=True", "renewed budget_cap#1 held=1"]),
    Case("run_token_limit", op("sequence", s("a"), s("b")), dispatches=["a.1"],
         status="terminated", decisions=["refused run step=b used=100 reserved=0",
                                         "terminate run run_tokens_exceeded"],
         kwargs={"max_tokens": 150}, reason="run_tokens_exceeded"),
    Case("run_duration_limit", op("sequence", s("a"), s("b")), {"a": [ok(500)]},
         dispatches=["a.1"], status="terminated",
         decisions=["terminate run run_duration_exceeded", "cancel a.1 run_duration_exceeded"],
         kwargs={"max_duration_ms": 100}),
    Case("open_breaker_fails_fast_to_the_fallback",
         op("fallback", op("circuit_breaker", s("a"), threshold=1, key="svc"), s("b")),
         dispatches=["b.1"],
         decisions=["breaker circuit_breaker#1 open", "branch fallback#1->b alternative"],
         kwargs={"breakers": {"svc": {"state": "open", "failures": 1, "opened_at": 0}}}),
    Case("closed_breaker_runs_and_opens_on_failure",
         op("fallback", op("circuit_breaker", s("a"), threshold=1, key="svc"), s("b")),
         {"a": [FAIL]}, ["a.1", "b.1"],
         decisions=["breaker circuit_breaker#1 closed", "branch fallback#1->b alternative"],
         extra=lambda sim: sim.kwargs_breakers["svc"]["state"] == "open"
         or pytest.fail(str(sim.kwargs_breakers))),
    Case("unknown_operator_is_unsupported", "unsupported", dispatches=[], status="failed",
         decisions=["unsupported acme_throttle#1"],
         reason="unverified_by_trace(operator_unsupported)"),
    Case("nested_everything",
         op("sequence",
            op("parallel",
               op("retry", s("a"), attempts=2, backoff="constant", base_delay_ms=0),
               op("fallback", s("b"), s("c"))),
            op("loop",
               op("sequence", s("h"),
                  op("conditional", s("fix"), s("probe"),
                     when="steps.h.output.confidence >= 500")),
               until="steps.h.output.confidence >= 800", max_iterations=3),
            op("quorum", s("r", "r1"), s("r", "r2"), s("r", "r3"))),
         {"a": [FAIL, ok(ms=30)], "b": [FAIL],
          "h": [ok(confidence=100), ok(confidence=600), ok(confidence=850)],
          "r1": [vote("ship")], "r2": [vote("ship")], "r3": [vote("hold")]},
         ["a.1", "b.1", "a.2", "c.1", "h.1", "probe.1", "h.2", "fix.1", "h.3", "fix.2",
          "r1.1", "r2.1", "r3.1"],
         decisions=["retry retry#1 attempt=2 delay=0", "branch fallback#1->c alternative",
                    "branch conditional#1->probe condition_false",
                    "loop loop#1 #1 continue not_met",
                    "branch conditional#1->fix condition_true",
                    "loop loop#1 #2 continue not_met",
                    "branch conditional#1->fix condition_true",
                    "loop loop#1 #3 stop until_holds",
                    "vote quorum#1 2/2 agreed=True tied=False dissent=r3"]),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_topology(case: Case) -> None:
    kwargs = dict(case.kwargs)
    breakers = kwargs.pop("breakers", {})
    tree = _unsupported_plan() if case.tree == "unsupported" else case.tree
    sim = simulate(tree, case.script, facts=FACTS, humans=case.humans, breakers=breakers, **kwargs)
    sim.kwargs_breakers = breakers  # type: ignore[attr-defined]
    assert sim.dispatches == list(case.dispatches)
    assert sim.status == case.status, (sim.status, sim.reason)
    if case.decisions is not None:
        assert sim.decisions() == list(case.decisions)
    if case.reason is not None:
        assert sim.reason == case.reason
    if case.outputs is not None:
        assert sim.outputs == dict(case.outputs)
    if case.extra is not None:
        case.extra(sim)
    kinds = [e["kind"] for e in sim.events]
    assert kinds[-1] == "run_finished" or sim.status == "awaiting_human"
    assert kinds.count("primitive_dispatch") == len(case.dispatches)


def test_there_are_at_least_thirty_topologies() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES[:12], ids=[c.name for c in CASES[:12]])
def test_same_inputs_give_the_same_events(case: Case) -> None:
    first = simulate(case.tree, case.script, facts=FACTS, humans=case.humans)
    second = simulate(case.tree, case.script, facts=FACTS, humans=case.humans)
    assert first.events == second.events and first.dispatches == second.dispatches
