"""The twelve operators' interpreters: what each does when it starts and when a child ends.

An interpreter never runs anything itself. It reads its node's parameters and
its frame's state and answers with one of seed 004 P1's result kinds
(:mod:`.values`); the core (:mod:`.core`) turns the answer into dispatches,
timers, ledger events and the run's status. The semantics, precisely:

===============  =========================================================================
sequence         children in order; the first failed child fails it (skipped ones do not)
parallel         children at once (``max_concurrency`` at a time, in child order); it fails
                 when one fails (with ``fail_fast`` at once, cancelling the rest); its value
                 maps child ids to values, so branches never overwrite each other
conditional      ``when`` decided when the node starts, over the facts and earlier outputs:
                 the first child, else the second, else the node is skipped
loop             the body again and again, each iteration a fresh frame (nested loops keep
                 their own counters); after each iteration it stops when ``until`` holds,
                 ``stop_on`` is met or (``converge``) the iteration's outputs equal the
                 previous one's; at ``max_iterations`` a loop with a stop condition fails
                 (``loop_exhausted``), a plain counted loop succeeds; a plain loop stops at
                 its first failed iteration
gate             ``when`` holds: the body; otherwise ``on_fail``: stop the run or skip
retry            the body again after a failure (a contract violation or a timeout is a
                 failure) with the backoff delay, up to ``attempts`` runs in all
circuit_breaker  asks the persisted breaker first: open means the node fails at once
                 (``circuit_open``) so a fallback can take over; the body's outcome is
                 recorded in the breaker
fallback         the first child; on failure (or skip) the next, in order; fails when
                 every alternative failed
quorum           every voter; succeeds when one value of ``vote_field`` has ``required``
                 votes and no other value ties it; otherwise escalates (or fails, with
                 ``on_no_quorum = "fail"``); dissenting and abstaining voters are listed
consensus        every voter; unanimity (all voters, none abstaining) succeeds; with
                 ``resolution = "majority"`` a value held by more than half of the voters
                 succeeds; otherwise it escalates
timebox          a deadline for its body, enforced by the core before every dispatch and
                 on running steps (they are cancelled at the deadline)
budget_cap       a token allowance for its body, charged by the core (see :mod:`.core`)
===============  =========================================================================
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..techniques.predicates import Predicate
from ..techniques.tree import OperatorNode, Step
from .rules import canonical, retry_delay, tally
from .values import (
    Branch,
    Checkpoint,
    Continue,
    Decision,
    Escalate,
    Frame,
    NodeResult,
    Retry,
    Skip,
    Terminate,
)

__all__ = ["INTERPRETERS", "Interpreter", "Runtime", "child_id"]


class Runtime(Protocol):
    """What an interpreter may ask of the core."""

    @property
    def now(self) -> int: ...

    @property
    def run_id(self) -> str: ...

    @property
    def composition_id(self) -> str: ...

    def env(self) -> Mapping[str, Any]: ...

    def emit(self, kind: str, **fields: Any) -> None: ...

    def check_breaker(self, frame: Frame, key: str) -> None: ...

    def update_breaker(self, frame: Frame, key: str, *, success: bool) -> None: ...


class Interpreter(Protocol):
    def enter(self, f: Frame, rt: Runtime) -> Decision: ...

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision: ...


def child_id(node: OperatorNode, slot: int) -> str:
    child = node.children[slot]
    return child.step_id if isinstance(child, Step) else child.node_id


def _done(status: str, reason: str, value: Mapping[str, Any] | None = None) -> Continue:
    return Continue(result=NodeResult(status, reason, value))  # type: ignore[arg-type]


def _pass(r: NodeResult) -> Continue:
    return Continue(result=r)


def _n(f: Frame) -> int:
    return len(f.node.children)


class _Sequence:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        f.state["i"] = 0
        return Continue(run=(0,))

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        if r.status == "failed":
            return _done("failed", "child_failed", r.value)
        f.state["last"] = r.value if r.status == "succeeded" else f.state.get("last")
        nxt = slot + 1
        if nxt < _n(f):
            return Continue(run=(nxt,))
        return _done("succeeded", "all_done", f.state.get("last"))


class _Parallel:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        n = _n(f)
        limit = f.node.params.get("max_concurrency") or n
        k = min(n, int(limit))
        f.state.update(next=k, results={})
        return Continue(run=tuple(range(k)))

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        results: dict[int, NodeResult] = f.state["results"]
        results[slot] = r
        node: OperatorNode = f.node
        if r.status == "failed" and node.params.get("fail_fast"):
            return _done("failed", "fail_fast", self._value(node, results))
        nxt = int(f.state["next"])
        if nxt < _n(f):
            f.state["next"] = nxt + 1
            return Continue(run=(nxt,))
        if len(results) < _n(f):
            return Continue()
        failed = any(x.status == "failed" for x in results.values())
        return _done(
            "failed" if failed else "succeeded",
            "child_failed" if failed else "all_done",
            self._value(node, results),
        )

    @staticmethod
    def _value(node: OperatorNode, results: Mapping[int, NodeResult]) -> dict[str, Any]:
        return {
            child_id(node, s): results[s].value
            for s in sorted(results)
            if results[s].value is not None
        }


class _Conditional:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        when: Predicate = f.node.params["when"]
        if when.holds(rt.env()):
            return Branch(0, "condition_true")
        if _n(f) == 2:
            return Branch(1, "condition_false")
        return Skip("condition_false")

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        return _pass(r)


class _Gate:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        when: Predicate = f.node.params["when"]
        if when.holds(rt.env()):
            return Branch(0, "gate_open")
        if f.node.params.get("on_fail", "stop") == "stop":
            return Terminate("gate_closed")
        return Skip("gate_closed")

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        return _pass(r)


def _iteration_signature(steps: Sequence[tuple[str, str, Any]]) -> tuple[tuple[str, str], ...]:
    latest: dict[str, str] = {}
    for sid, status, output in steps:
        if status == "succeeded":
            latest[sid] = canonical(output)
    return tuple(sorted(latest.items()))


class _Loop:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        f.state.update(iteration=1, cur=[], prev=None)
        return Continue(run=(0,))

    @staticmethod
    def _stop(f: Frame, r: NodeResult, rt: Runtime) -> str | None:
        params = f.node.params
        cur: list[tuple[str, str, Any]] = f.state["cur"]
        until = params.get("until")
        if isinstance(until, Predicate) and until.holds(rt.env()):
            return "until_holds"
        stop_on = params.get("stop_on") or "none"
        if stop_on == "all_success" and r.status == "succeeded":
            return "all_success"
        if stop_on == "any_success" and any(s == "succeeded" for _, s, _ in cur):
            return "any_success"
        if stop_on == "verification_passed":
            verdicts = [
                out["passed"]
                for _, s, out in cur
                if s == "succeeded"
                and isinstance(out, Mapping)
                and isinstance(out.get("passed"), bool)
            ]
            if verdicts and verdicts[-1] is True:
                return "verification_passed"
        if params.get("converge"):
            sig = _iteration_signature(cur)
            if f.state["prev"] is not None and sig == f.state["prev"]:
                return "converged"
        return None

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        params = f.node.params
        it = int(f.state["iteration"])
        has_condition = (
            params.get("until") is not None
            or (params.get("stop_on") or "none") != "none"
            or bool(params.get("converge"))
        )
        why = self._stop(f, r, rt)
        node_id = f.node_id
        if why is not None:
            rt.emit("loop_decision", node=node_id, iteration=it, decision="stop", reason=why)
            # `until` ends the loop, but does not undo a failure in the iteration that
            # made it hold (a later step of the body broke its contract): the loop fails
            failed = why == "until_holds" and r.status == "failed"
            return _done("failed" if failed else "succeeded", why, r.value)
        if not has_condition and r.status == "failed":
            rt.emit(
                "loop_decision",
                node=node_id,
                iteration=it,
                decision="stop",
                reason="iteration_failed",
            )
            return _done("failed", "iteration_failed", r.value)
        bound = params.get("max_iterations")
        if bound is not None and it >= int(bound):
            reason = "loop_exhausted" if has_condition else "iterations_done"
            rt.emit("loop_decision", node=node_id, iteration=it, decision="stop", reason=reason)
            return _done("failed" if has_condition else "succeeded", reason, r.value)
        rt.emit("loop_decision", node=node_id, iteration=it, decision="continue", reason="not_met")
        f.state.update(iteration=it + 1, prev=_iteration_signature(f.state["cur"]), cur=[])
        return Continue(run=(0,))  # the body again, in a fresh frame


class _Retry:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        f.state["attempt"] = 1
        return Continue(run=(0,))

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        if r.status != "failed":
            return _pass(r)
        params = f.node.params
        attempt = int(f.state["attempt"])
        if attempt >= int(params.get("attempts", 3)):
            return _done("failed", "retry_exhausted", r.value)
        delay = retry_delay(
            str(params.get("backoff", "exponential")),
            base_ms=int(params.get("base_delay_ms", 1000)),
            max_ms=int(params.get("max_delay_ms", 60000)),
            failed_attempt=attempt,
            seed=f"{rt.run_id}|{f.node_id}",
        )
        f.state["attempt"] = attempt + 1
        return Retry(0, delay, attempt + 1)


class _CircuitBreaker:
    @staticmethod
    def key(f: Frame, rt: Runtime) -> str:
        return str(f.node.params.get("key") or f"{rt.composition_id}:{f.node_id}")

    def enter(self, f: Frame, rt: Runtime) -> Decision:
        rt.check_breaker(f, self.key(f, rt))
        return Continue()

    def on_breaker(self, f: Frame, verdict: str, rt: Runtime) -> Decision:
        if verdict == "open":
            return _done("failed", "circuit_open")
        f.state["trial"] = verdict == "half_open"
        return Continue(run=(0,))

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        rt.update_breaker(f, self.key(f, rt), success=r.status != "failed")
        return _pass(r)


class _Fallback:
    def enter(self, f: Frame, rt: Runtime) -> Decision:
        return Continue(run=(0,))

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        if r.status == "succeeded":
            return _pass(r)
        nxt = slot + 1
        if nxt < _n(f):
            return Branch(nxt, "alternative")
        return _done("failed", "fallback_exhausted", r.value)


class _Vote:
    """Quorum and consensus share the collection of votes."""

    def __init__(self, operator: str) -> None:
        self.operator = operator

    def enter(self, f: Frame, rt: Runtime) -> Decision:
        f.state["results"] = {}
        return Continue(run=tuple(range(_n(f))))

    def _votes(self, f: Frame) -> list[tuple[str, str | None]]:
        field = str(f.node.params.get("vote_field") or "conclusion")
        results: dict[int, NodeResult] = f.state["results"]
        votes: list[tuple[str, str | None]] = []
        for slot in range(_n(f)):
            r = results[slot]
            value = r.value
            has = r.status == "succeeded" and isinstance(value, Mapping) and field in value
            votes.append((child_id(f.node, slot), canonical(value[field]) if has else None))  # type: ignore[index]
        return votes

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        results: dict[int, NodeResult] = f.state["results"]
        results[slot] = r
        if len(results) < _n(f):
            return Continue()
        params = f.node.params
        field = str(params.get("vote_field") or "conclusion")
        t = tally(self._votes(f))
        n = _n(f)
        f.state["tally"] = t
        if self.operator == "quorum":
            required = int(params.get("required") or n // 2 + 1)
            agreed = t.top is not None and t.top_votes >= required
            method = "quorum"
        else:
            required = n
            unanimous = t.distinct == 1 and not t.abstained
            majority = (
                params.get("resolution") == "majority" and t.top is not None and t.top_votes * 2 > n
            )
            agreed = unanimous or majority
            method = "unanimous" if unanimous else "majority"
        rt.emit(
            "vote_result",
            node=f.node_id,
            operator=self.operator,
            voters=n,
            required=required,
            top_votes=t.top_votes,
            distinct=t.distinct,
            tied=t.tied,
            abstained=len(t.abstained),
            agreed=agreed,
            dissent=list(t.dissent),
        )
        if agreed:
            assert t.top is not None
            value = {
                field: json.loads(t.top),
                "method": method,
                "votes": t.top_votes,
                "required": required,
                "dissent": list(t.dissent),
            }
            return _done("succeeded", method, value)
        if t.distinct == 0:
            return _done("failed", "no_votes")
        if self.operator == "quorum" and params.get("on_no_quorum") == "fail":
            return _done("failed", "no_quorum")
        reason = (
            "vote_tied"
            if t.tied
            else ("no_quorum" if self.operator == "quorum" else "no_consensus")
        )
        return Escalate(reason)

    def resolve(self, f: Frame, approved: bool, rt: Runtime) -> Decision:
        """A human settled the vote: approval accepts the leading value (None on a tie)."""
        if not approved:
            return _done("failed", "rejected_by_human")
        t = f.state["tally"]
        field = str(f.node.params.get("vote_field") or "conclusion")
        value = {
            field: None if t.top is None else json.loads(t.top),
            "method": "human",
            "votes": t.top_votes,
            "required": int(f.node.params.get("required") or 0),
            "dissent": list(t.dissent),
        }
        return _done("succeeded", "approved_by_human", value)


class _Passthrough:
    """timebox and budget_cap: the core enforces the limit; the body's result is theirs."""

    def enter(self, f: Frame, rt: Runtime) -> Decision:
        return Continue(run=(0,))

    def child_done(self, f: Frame, slot: int, r: NodeResult, rt: Runtime) -> Decision:
        return _pass(r)


INTERPRETERS: Mapping[str, Any] = {
    "sequence": _Sequence(),
    "parallel": _Parallel(),
    "conditional": _Conditional(),
    "loop": _Loop(),
    "gate": _Gate(),
    "retry": _Retry(),
    "circuit_breaker": _CircuitBreaker(),
    "fallback": _Fallback(),
    "quorum": _Vote("quorum"),
    "consensus": _Vote("consensus"),
    "timebox": _Passthrough(),
    "budget_cap": _Passthrough(),
}

# the result kinds an interpreter may answer with (for readers of this module)
_KINDS = (Continue, Skip, Branch, Retry, Terminate, Escalate, Checkpoint)
