"""A scripted shell for the engine core: steps answer from a script, time is simulated.

The core is pure, so a topology is a tree plus a script of outcomes; the simulator
plays a perfectly concurrent shell (every dispatch runs at once and finishes after
its scripted duration, earliest first, ties in dispatch order; a timer due before
the next finish fires first) and records what the core did.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codelibrarian.execution.core import Engine
from codelibrarian.execution.plan import RunPlan, StepInfo
from codelibrarian.execution.rules import breaker_enter, breaker_record
from codelibrarian.execution.values import (
    BreakerCheck,
    BreakerUpdate,
    Dispatch,
    StepResult,
)
from codelibrarian.techniques.diagnostics import Loc
from codelibrarian.techniques.operators import BUILTIN_OPERATORS, build_operator
from codelibrarian.techniques.strata import EXECUTION_POLICIES
from codelibrarian.techniques.tree import Node, OperatorNode, Step, assign_ids, freeze, steps_of

OPS = {o.id: o for o in BUILTIN_OPERATORS}


def op(name: str, *children: Node, **params: Any) -> OperatorNode:
    spec = OPS[name]
    node, diags = build_operator(spec, params, list(children), loc=Loc())
    errors = [d for d in diags if d.severity == "error"]
    assert not errors, errors
    return node


def s(primitive: str, sid: str = "", **params: Any) -> Step:
    return Step(primitive, freeze(params), step_id=sid, explicit_id=bool(sid))


def plan_of(tree: Node, *, reserve: int | Mapping[str, int] = 100) -> RunPlan:
    root, diags = assign_ids(tree)
    assert not diags
    steps = {}
    for st in steps_of(root):
        r = reserve if isinstance(reserve, int) else reserve.get(st.step_id, 100)
        steps[st.step_id] = StepInfo(st.step_id, st.primitive, "agent", "Thinker", r, st.params)
    return RunPlan("comp", root, steps, "finite", EXECUTION_POLICIES["finite"])


@dataclass(frozen=True)
class Out:
    """One scripted dispatch outcome."""

    status: str = "success"
    output: Mapping[str, Any] | None = None
    ms: int = 10
    tokens: int = 100


OK = Out()


def ok(ms: int = 10, **output: Any) -> Out:
    return Out("success", output or {"ok": True}, ms)


FAIL = Out("failure")
VIOLATED = Out("violated")
TIMEOUT = Out("timeout")


@dataclass
class Sim:
    dispatches: list[str] = field(default_factory=list)
    dispatch_times: list[int] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    status: str = ""
    reason: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)
    engine: Engine | None = None

    def decisions(self) -> list[str]:
        return [_line(e) for e in self.events if e["kind"] in _DECISIONS]


_DECISIONS = (
    "branch_decision",
    "skip_decision",
    "loop_decision",
    "retry_decision",
    "vote_result",
    "escalation",
    "checkpoint",
    "checkpoint_renewed",
    "timebox_expired",
    "budget_refused",
    "dispatch_cancelled",
    "run_terminated",
    "breaker_decision",
    "human_resolution",
    "operator_unsupported",
)


def _line(e: Mapping[str, Any]) -> str:
    k = e["kind"]
    if k == "branch_decision":
        return f"branch {e['node']}->{e['target']} {e['reason']}"
    if k == "skip_decision":
        return f"skip {e['node']} {e['reason']}"
    if k == "loop_decision":
        return f"loop {e['node']} #{e['iteration']} {e['decision']} {e['reason']}"
    if k == "retry_decision":
        return f"retry {e['node']} attempt={e['attempt']} delay={e['delay_ms']}"
    if k == "vote_result":
        return (
            f"vote {e['node']} {e['top_votes']}/{e['required']} agreed={e['agreed']} "
            f"tied={e['tied']} dissent={','.join(e['dissent'])}"
        )
    if k == "escalation":
        return f"escalate {e['node']} {e['reason']}"
    if k == "checkpoint":
        return f"checkpoint {e['node']} {e['reason']}"
    if k == "checkpoint_renewed":
        return f"renewed {e['node']} held={e['held']}"
    if k == "timebox_expired":
        return f"timebox {e['node']} running={e['running']}"
    if k == "budget_refused":
        return f"refused {e['node']} step={e['step']} used={e['used']} reserved={e['reserved']}"
    if k == "dispatch_cancelled":
        return f"cancel {e['dispatch']} {e['reason']}"
    if k == "run_terminated":
        return f"terminate {e['node']} {e['reason']}"
    if k == "breaker_decision":
        return f"breaker {e['node']} {e['verdict']}"
    if k == "human_resolution":
        return f"human {e['node']} {e['question']} approved={e['approved']}"
    return f"unsupported {','.join(e['nodes'])}"


def simulate(
    tree: Node | RunPlan,
    script: Mapping[str, Sequence[Out]] | None = None,
    *,
    facts: Mapping[str, Any] | None = None,
    humans: Sequence[bool] = (),
    breakers: dict[str, dict[str, Any]] | None = None,
    max_tokens: int | None = None,
    max_duration_ms: int | None = None,
    reserve: int | Mapping[str, int] = 100,
    run_id: str = "run-1",
) -> Sim:
    plan = tree if isinstance(tree, RunPlan) else plan_of(tree, reserve=reserve)
    engine = Engine(
        plan,
        run_id=run_id,
        task="the task",
        facts=facts or {},
        max_duration_ms=max_duration_ms,
        max_tokens=max_tokens,
    )
    queues = {k: deque(v) for k, v in (script or {}).items()}
    breaker_state = breakers if breakers is not None else {}
    answers = deque(humans)
    sim = Sim(engine=engine)
    running: list[tuple[int, int, Dispatch, Out]] = []
    seq = 0
    now = 0

    def handle(turn: Any) -> None:
        nonlocal seq
        sim.events.extend(turn.events)
        for a in turn.actions:
            sim.actions.append(a)
            if isinstance(a, Dispatch):
                q = queues.get(a.step_id)
                out = q.popleft() if q else OK
                sim.dispatches.append(a.dispatch_id)
                sim.dispatch_times.append(now)
                seq += 1
                running.append((now + out.ms, seq, a, out))
            elif isinstance(a, BreakerCheck):
                verdict, new = breaker_enter(breaker_state.get(a.key, {}), now, a.reset_after_ms)
                breaker_state[a.key] = new
                handle(engine.breaker(a.node_id, verdict, now))
            elif isinstance(a, BreakerUpdate):
                breaker_state[a.key] = breaker_record(
                    breaker_state.get(a.key, {}),
                    success=a.success,
                    now_ms=now,
                    threshold=a.threshold,
                )

    handle(engine.start(now))
    for _ in range(100_000):
        if engine.finished:
            break
        running.sort(key=lambda r: (r[0], r[1]))
        live = [r for r in running if r[2].dispatch_id in engine.inflight]
        running[:] = live
        wake = engine.next_wake()
        if running and (wake is None or running[0][0] <= wake):
            finish, _, d, out = running.pop(0)
            now = max(now, finish)
            output = (
                dict(out.output)
                if out.output is not None
                else ({"ok": True} if out.status == "success" else None)
            )
            handle(
                engine.result(
                    StepResult(d.dispatch_id, out.status, output, out.tokens, out.ms),  # type: ignore[arg-type]
                    now,
                )
            )
        elif engine.status == "awaiting_human" and answers:
            handle(engine.resolve(answers.popleft(), now))
        elif wake is not None:
            now = max(now, wake)
            handle(engine.tick(now))
        else:
            break
    sim.status = engine.status
    sim.reason = engine.reason
    sim.outputs = engine.final_outputs()
    return sim
