"""The engine core: step outcomes and told times in, decisions out. Pure.

:class:`Engine` walks a :class:`~.plan.RunPlan`. It never reads a clock, a file or
a random source: every input — the start, each dispatch's result, the current
time, a breaker's verdict, a human's decision — carries the time it happened
(``now``, epoch milliseconds), and the same inputs in the same order give the same
ledger events and the same actions, byte for byte. That is what makes a crashed
run resumable: the shell replays the recorded inputs and checks that the core
emits exactly the events it recorded the first time.

Each input returns a :class:`Turn`: the ledger events it caused and the
:mod:`actions <.values>` for the shell. Work is done with a queue, not recursion,
so a loop of a thousand skipped iterations cannot overflow the stack.

**Enforced by the core** (not the interpreters):

* timeboxes — a step is not dispatched once an enclosing timebox's deadline has
  passed, and every dispatch carries the nearest deadline; when the time told
  passes a deadline while steps run under the timebox, those dispatches are
  cancelled. Then ``on_timeout``: ``terminate`` ends the run, ``checkpoint``
  pauses it (approval renews the deadline and re-dispatches the cancelled steps);
* budget caps — before a step is dispatched its known cost (its context budget)
  is reserved in every enclosing ``budget_cap`` and the run's own limit; a step
  whose reservation would cross a cap is not dispatched (``on_exceed``); when the
  step ends, the reservation is replaced by what it really spent (context plus
  model tokens). Parallel branches share the caps, so they cannot overspend
  together (the seed checked each branch after the fact);
* the stratum policy's duration and token limits for the whole run;
* pauses — while a human is asked (an escalated vote, a checkpoint), running
  steps may finish but nothing new is dispatched.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..errors import UsageError
from ..techniques.tree import Node, OperatorNode, Step, thaw
from .interpreters import INTERPRETERS, child_id
from .plan import RunPlan
from .values import (
    Action,
    Branch,
    BreakerCheck,
    BreakerUpdate,
    Cancel,
    Checkpoint,
    Continue,
    Decision,
    Dispatch,
    Escalate,
    Finish,
    Frame,
    NodeResult,
    Pause,
    Retry,
    Skip,
    StepResult,
    Terminate,
    WakeAt,
)

__all__ = ["Engine", "Pending", "RunState", "Turn"]

RunState = Literal["running", "awaiting_human", "succeeded", "failed", "terminated"]
UNSUPPORTED = "unverified_by_trace(operator_unsupported)"


@dataclass(frozen=True, slots=True)
class Turn:
    """What one input caused: ledger events (in order) and actions for the shell."""

    events: tuple[dict[str, Any], ...]
    actions: tuple[Action, ...]


@dataclass(slots=True)
class Pending:
    """A question for a human: an escalated vote or a checkpoint."""

    kind: Literal["escalate", "checkpoint"]
    frame: Frame
    reason: str
    #: step frames to dispatch again once approved (cancelled or refused ones)
    held: list[Frame] = field(default_factory=list)


@dataclass(slots=True)
class _Cap:
    node_id: str
    max: int
    used: int = 0
    reserved: int = 0


class Engine:
    """The pure interpreter of one run (see the module docstring)."""

    def __init__(
        self,
        plan: RunPlan,
        *,
        run_id: str,
        task: str,
        facts: Mapping[str, Any],
        max_duration_ms: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.plan = plan
        self._run_id = run_id
        self._task = task
        self._facts = {k: v for k, v in facts.items() if k != "steps"}
        self.max_duration_ms = max_duration_ms
        self.run_cap = None if max_tokens is None else _Cap("run", max_tokens)
        self.status: RunState = "running"
        self.reason = ""
        self.now = 0
        self.started_at: int | None = None
        self.steps: dict[str, dict[str, Any]] = {}
        self.outputs: dict[str, Mapping[str, Any]] = {}
        self.node_values: dict[str, Mapping[str, Any]] = {}
        #: the latest successful output of each primitive (what context recipes read)
        self.by_primitive: dict[str, Mapping[str, Any]] = {}
        #: dispatches in the order their results arrived: (dispatch id, status)
        self.history: list[tuple[str, str]] = []
        self.inflight: dict[str, Frame] = {}
        self.dispatches: dict[str, Dispatch] = {}
        self.dispatched_at: dict[str, int] = {}
        self.pending: list[Pending] = []
        self.tokens_used = 0
        self._count: dict[str, int] = {}
        self._serial = 0
        self._timers: list[tuple[int, int, str, Frame | None, int]] = []
        self._timer_seq = 0
        self._deferred: list[Frame] = []
        #: breaker checks waiting for a verdict: node id -> (frame, the check)
        self.breaker_checks: dict[str, tuple[Frame, BreakerCheck]] = {}
        self._work: deque[Callable[[], None]] = deque()
        self._events: list[dict[str, Any]] = []
        self._actions: list[Action] = []
        self._root: Frame | None = None

    # ------------------------------------------------------------ the runtime

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def composition_id(self) -> str:
        return self.plan.composition_id

    def env(self) -> Mapping[str, Any]:
        """The facts plus ``steps.<id>.status`` / ``.output`` (what conditions read)."""
        env = dict(self._facts)
        env["steps"] = self.steps
        return env

    def emit(self, kind: str, **fields: Any) -> None:
        self._events.append({"kind": kind, "at": self.now, **fields})

    def check_breaker(self, frame: Frame, key: str) -> None:
        params = frame.node.params
        check = BreakerCheck(
            frame.node_id,
            key,
            int(params.get("threshold", 3)),
            int(params.get("reset_after_ms", 60000)),
        )
        self.breaker_checks[frame.node_id] = (frame, check)
        self._actions.append(check)

    def update_breaker(self, frame: Frame, key: str, *, success: bool) -> None:
        params = frame.node.params
        self._actions.append(
            BreakerUpdate(
                key,
                success,
                int(params.get("threshold", 3)),
                int(params.get("reset_after_ms", 60000)),
            )
        )

    # ----------------------------------------------------------------- inputs

    def start(self, now: int) -> Turn:
        """Begin the run at ``now``."""
        if self.started_at is not None:
            raise UsageError("the run has already started")
        self.now = now
        self.started_at = now
        unsupported = self.plan.unsupported
        if unsupported:
            self.emit("operator_unsupported", nodes=list(unsupported), code=UNSUPPORTED)
            self._finish_run("failed", UNSUPPORTED)
            return self._turn()
        if self.max_duration_ms is not None:
            self._timer(now + self.max_duration_ms, "run_deadline", None)
        self._root = self._frame(self.plan.root, None, 0)
        self._work.append(lambda: self._enter(self._root))  # type: ignore[arg-type]
        return self._drain()

    def result(self, res: StepResult, now: int) -> Turn:
        """A dispatch came back."""
        self._advance(now)
        frame = self.inflight.pop(res.dispatch_id, None)
        if frame is None:
            raise UsageError(
                f"dispatch {res.dispatch_id} is not running",
                hint="Only a step handed out by `runs next` (and not yet answered) takes a result.",
            )
        self.dispatches.pop(res.dispatch_id, None)
        step: Step = frame.node
        self._settle(frame, res.tokens)
        ok = res.status == "success"
        output = res.output if ok and res.output is not None else None
        self.steps[step.step_id] = {
            "status": "succeeded" if ok else "failed",
            **({"output": output} if output is not None else {}),
        }
        if output is not None:
            self.outputs[step.step_id] = output
            self.by_primitive[step.primitive] = output
        self.history.append((res.dispatch_id, res.status))
        for anc in self._ancestors(frame):
            if anc.node.operator == "loop":
                anc.state["cur"].append((step.step_id, "succeeded" if ok else "failed", output))
        self._work.append(
            lambda: self._finish(
                frame, NodeResult("succeeded" if ok else "failed", res.status, output)
            )
        )
        return self._drain()

    def tick(self, now: int) -> Turn:
        """The time is ``now``: fire due timers (retry waits, deadlines)."""
        self._advance(now)
        return self._drain()

    def breaker(self, node_id: str, verdict: str, now: int) -> Turn:
        """The verdict of the breaker the core asked about (``closed``/``half_open``/``open``)."""
        self._advance(now)
        waiting = self.breaker_checks.pop(node_id, None)
        if waiting is None:
            raise UsageError(f"no breaker check is waiting for {node_id}")
        frame = waiting[0]
        self.emit("breaker_decision", node=node_id, verdict=verdict)
        if self._alive(frame):
            interp = INTERPRETERS["circuit_breaker"]
            self._work.append(lambda: self._apply(frame, interp.on_breaker(frame, verdict, self)))
        return self._drain()

    def resolve(self, approved: bool, now: int) -> Turn:
        """A human answered the oldest pending question."""
        self._advance(now)
        if not self.pending:
            raise UsageError("the run is not waiting for a human")
        p = self.pending.pop(0)
        node_id = p.frame.node_id
        self.emit("human_resolution", node=node_id, question=p.kind, approved=approved)
        if not approved and p.kind == "checkpoint":
            self._terminate("rejected_by_human", node_id)
            return self._drain()
        if p.kind == "escalate":
            interp = INTERPRETERS[p.frame.node.operator]
            self._work.append(lambda: self._apply(p.frame, interp.resolve(p.frame, approved, self)))
        else:
            self._renew(p)
        if not self.pending and self.status == "awaiting_human":
            self.status = "running"
            deferred, self._deferred = self._deferred, []
            for f in deferred:
                self._work.append(lambda f=f: self._dispatch(f))  # type: ignore[misc]
        return self._drain()

    # -------------------------------------------------------------- questions

    def next_wake(self) -> int | None:
        """The earliest time a timer is due (None when none is set)."""
        self._prune_timers()
        return self._timers[0][0] if self._timers else None

    def due(self, now: int) -> bool:
        wake = self.next_wake()
        return wake is not None and wake <= now and self.finished is False

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed", "terminated")

    def final_outputs(self) -> dict[str, Any]:
        """Every step's latest successful output and every vote's value, by id."""
        out: dict[str, Any] = {k: self.outputs[k] for k in sorted(self.outputs)}
        for k in sorted(self.node_values):
            out[k] = self.node_values[k]
        return out

    # ------------------------------------------------------------- machinery

    def _turn(self) -> Turn:
        events, self._events = tuple(self._events), []
        actions, self._actions = tuple(self._actions), []
        return Turn(events, actions)

    def _drain(self) -> Turn:
        while self._work:
            self._work.popleft()()
        return self._turn()

    def _frame(self, node: Node, parent: Frame | None, slot: int) -> Frame:
        self._serial += 1
        f = Frame(node, parent, slot, self._serial)
        if parent is not None:
            parent.children[slot] = f
        return f

    @staticmethod
    def _ancestors(frame: Frame) -> list[Frame]:
        out = []
        p = frame.parent
        while p is not None:
            out.append(p)
            p = p.parent
        return out

    def _alive(self, frame: Frame) -> bool:
        if self.finished:
            return False
        f: Frame | None = frame
        while f is not None:
            if f.done:
                return False
            f = f.parent
        return True

    def _timer(self, at: int, kind: str, frame: Frame | None, extra: int = 0) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (at, self._timer_seq, kind, frame, extra))
        self._actions.append(WakeAt(at))

    def _prune_timers(self) -> None:
        """Drop timers that can no longer fire (finished frames, renewed deadlines)."""
        while self._timers:
            at, _, kind, frame, _ = self._timers[0]
            if kind == "run_deadline":
                if not self.finished:
                    return
            elif frame is not None and self._alive(frame):
                if kind == "retry":
                    return
                if not frame.state.get("expired") and frame.deadline == at:
                    return
            heapq.heappop(self._timers)

    def _advance(self, now: int) -> None:
        if now < self.now:
            raise UsageError(f"time went backwards ({now} < {self.now})")
        self.now = now
        while self._timers and self._timers[0][0] <= now and not self.finished:
            at, _, kind, frame, extra = heapq.heappop(self._timers)
            if kind == "run_deadline":
                self._work.append(lambda: self._terminate("run_duration_exceeded", "run"))
            elif frame is None or not self._alive(frame):
                continue
            elif kind == "retry":
                self._work.append(lambda frame=frame, extra=extra: self._start_child(frame, extra))  # type: ignore[misc]
            elif kind == "deadline" and not frame.state.get("expired") and frame.deadline == at:
                self._work.append(lambda frame=frame: self._expire(frame))  # type: ignore[misc]

    # ------------------------------------------------------------------ nodes

    def _enter(self, frame: Frame) -> None:
        if not self._alive(frame):
            return
        node = frame.node
        if isinstance(node, Step):
            self._dispatch(frame)
            return
        self.emit("operator_start", node=node.node_id, operator=node.operator)
        if node.operator == "timebox":
            frame.deadline = self.now + int(node.params.get("duration_ms", 60000))
            self._timer(frame.deadline, "deadline", frame)
        elif node.operator == "budget_cap":
            frame.state["cap"] = _Cap(node.node_id, int(node.params.get("max_tokens", 100000)))
        self._apply(frame, INTERPRETERS[node.operator].enter(frame, self))

    def _start_child(self, frame: Frame, slot: int) -> None:
        if not self._alive(frame):
            return
        child = self._frame(frame.node.children[slot], frame, slot)
        self._enter(child)

    def _apply(self, frame: Frame, d: Decision) -> None:
        if not self._alive(frame):
            return
        node: OperatorNode = frame.node
        nid = node.node_id
        if isinstance(d, Continue):
            if d.result is not None:
                self._finish(frame, d.result)
                return
            for slot in d.run:
                self._work.append(lambda slot=slot: self._start_child(frame, slot))  # type: ignore[misc]
        elif isinstance(d, Skip):
            self.emit("skip_decision", node=nid, reason=d.reason)
            self._finish(frame, NodeResult("skipped", d.reason))
        elif isinstance(d, Branch):
            self.emit("branch_decision", node=nid, target=child_id(node, d.target), reason=d.reason)
            self._work.append(lambda: self._start_child(frame, d.target))
        elif isinstance(d, Retry):
            self.emit("retry_decision", node=nid, attempt=d.attempt, delay_ms=d.delay_ms)
            if d.delay_ms <= 0:
                self._work.append(lambda: self._start_child(frame, d.target))
            else:
                self._timer(self.now + d.delay_ms, "retry", frame, d.target)
        elif isinstance(d, Terminate):
            self._terminate(d.reason, nid)
        elif isinstance(d, Escalate):
            self.emit("escalation", node=nid, level=d.level, reason=d.reason)
            self._pause(Pending("escalate", frame, d.reason))
        elif isinstance(d, Checkpoint):  # pragma: no cover - core-raised checkpoints only
            self._pause(Pending("checkpoint", frame, d.reason))

    def _finish(self, frame: Frame, result: NodeResult) -> None:
        if not self._alive(frame):
            return
        frame.done = True
        self._cancel_under(frame, "node_finished")
        node = frame.node
        if isinstance(node, OperatorNode):
            fields: dict[str, Any] = {
                "node": node.node_id,
                "operator": node.operator,
                "status": result.status,
                "reason": result.reason,
            }
            cap = frame.state.get("cap")
            if isinstance(cap, _Cap):
                fields["tokens"] = cap.used
            self.emit("operator_result", **fields)
            if node.operator in ("quorum", "consensus") and result.value is not None:
                self.node_values[node.node_id] = result.value
        parent = frame.parent
        if parent is None:
            if result.status == "failed":
                self._finish_run("failed", result.reason or "failed")
            else:
                self._finish_run("succeeded", result.reason or "done")
            return
        interp = INTERPRETERS[parent.node.operator]
        decision = interp.child_done(parent, frame.slot, result, self)
        self._apply(parent, decision)

    def _finish_run(
        self, status: Literal["succeeded", "failed", "terminated"], reason: str
    ) -> None:
        for dispatch_id in sorted(self.inflight):
            self._cancel(dispatch_id, reason)
        self.status = status
        self.reason = reason
        self.pending.clear()
        self._work.clear()
        self.emit(
            "run_finished",
            status=status,
            reason=reason,
            tokens=self.tokens_used,
            duration_ms=self.now - (self.now if self.started_at is None else self.started_at),
        )
        self._actions.append(Finish(status, reason))

    def _terminate(self, reason: str, node_id: str) -> None:
        if self.finished:
            return
        self.emit("run_terminated", node=node_id, reason=reason)
        self._finish_run("terminated", reason)

    def _pause(self, p: Pending) -> None:
        self.pending.append(p)
        self.status = "awaiting_human"
        self._actions.append(Pause(p.kind, p.frame.node_id, p.reason))

    # ------------------------------------------------------------------ steps

    def _caps(self, frame: Frame) -> list[_Cap]:
        caps = [a.state["cap"] for a in self._ancestors(frame) if "cap" in a.state]
        if self.run_cap is not None:
            caps.append(self.run_cap)
        return caps

    def _dispatch(self, frame: Frame) -> None:
        if not self._alive(frame):
            return
        if self.pending:
            self._deferred.append(frame)
            return
        step: Step = frame.node
        info = self.plan.steps[step.step_id]
        ancestors = self._ancestors(frame)
        for anc in ancestors:
            if anc.deadline is not None and anc.deadline <= self.now:
                anc.state.setdefault("held", []).append(frame)
                self._expire(anc)
                return
        for cap in self._caps(frame):
            if cap.used + cap.reserved + info.reserve > cap.max:
                self._refuse(frame, cap, info.reserve)
                return
        for cap in self._caps(frame):
            cap.reserved += info.reserve
        frame.state["reserved"] = info.reserve
        n = self._count.get(step.step_id, 0) + 1
        self._count[step.step_id] = n
        dispatch_id = f"{step.step_id}.{n}"
        attempt = next(
            (int(a.state["attempt"]) for a in ancestors if a.node.operator == "retry"), 1
        )
        deadlines = [a.deadline for a in ancestors if a.deadline is not None]
        if self.max_duration_ms is not None and self.started_at is not None:
            deadlines.append(self.started_at + self.max_duration_ms)
        deadline = min(deadlines) if deadlines else None
        self.emit(
            "primitive_dispatch",
            step=step.step_id,
            primitive=step.primitive,
            dispatch=dispatch_id,
            executor=info.executor,
            role=info.role,
            attempt=attempt,
            reserve=info.reserve,
        )
        action = Dispatch(
            dispatch_id,
            step.step_id,
            step.primitive,
            info.executor,
            info.role,
            attempt,
            MappingProxyType({"task": self._task, **thaw(step.params)}),
            deadline,
        )
        self.inflight[dispatch_id] = frame
        self.dispatches[dispatch_id] = action
        self.dispatched_at[dispatch_id] = self.now
        self._actions.append(action)

    def _settle(self, frame: Frame, tokens: int) -> None:
        reserved = int(frame.state.pop("reserved", 0))
        for cap in self._caps(frame):
            cap.reserved -= reserved
            cap.used += tokens
        self.tokens_used += tokens

    def _cancel(self, dispatch_id: str, reason: str) -> None:
        frame = self.inflight.pop(dispatch_id, None)
        self.dispatches.pop(dispatch_id, None)
        if frame is None:
            return
        self._settle(frame, 0)
        self.emit("dispatch_cancelled", dispatch=dispatch_id, reason=reason)
        self._actions.append(Cancel(dispatch_id, reason))

    def _cancel_under(self, frame: Frame, reason: str, held: list[Frame] | None = None) -> None:
        """Cancel every running dispatch below ``frame`` (collecting their frames)."""
        for dispatch_id in sorted(self.inflight):
            f = self.inflight[dispatch_id]
            if frame in self._ancestors(f):
                if held is not None:
                    held.append(f)
                self._cancel(dispatch_id, reason)

    def _expire(self, box: Frame) -> None:
        """A timebox's deadline passed: cancel its running steps, then ``on_timeout``."""
        if box.state.get("expired") or not self._alive(box):
            return
        box.state["expired"] = True
        held: list[Frame] = list(box.state.pop("held", []))
        self._cancel_under(box, "timebox_expired", held)
        nid = box.node_id
        self.emit("timebox_expired", node=nid, deadline=box.deadline, running=len(held))
        if box.node.params.get("on_timeout", "checkpoint") == "terminate":
            self._terminate("timebox_expired", nid)
            return
        self.emit("checkpoint", node=nid, reason="timebox_expired")
        self._pause(Pending("checkpoint", box, "timebox_expired", held))

    def _refuse(self, frame: Frame, cap: _Cap, cost: int) -> None:
        step: Step = frame.node
        self.emit(
            "budget_refused",
            node=cap.node_id,
            step=step.step_id,
            used=cap.used,
            reserved=cap.reserved,
            cost=cost,
            max=cap.max,
        )
        if cap.node_id == "run":
            self._terminate("run_tokens_exceeded", "run")
            return
        box = next(a for a in self._ancestors(frame) if a.state.get("cap") is cap)
        if box.node.params.get("on_exceed", "terminate") == "terminate":
            self._terminate("budget_exceeded", cap.node_id)
            return
        self.emit("checkpoint", node=cap.node_id, reason="budget_exceeded")
        self._pause(Pending("checkpoint", box, "budget_exceeded", [frame]))

    def _renew(self, p: Pending) -> None:
        """An approved checkpoint: a new deadline or allowance, the held steps again."""
        box = p.frame
        if box.node.operator == "timebox":
            box.state["expired"] = False
            box.deadline = self.now + int(box.node.params.get("duration_ms", 60000))
            self._timer(box.deadline, "deadline", box)
        else:
            cap: _Cap = box.state["cap"]
            cap.max += int(box.node.params.get("max_tokens", 100000))
        self.emit("checkpoint_renewed", node=box.node_id, held=len(p.held))
        for f in p.held:
            self._work.append(lambda f=f: self._dispatch(f))  # type: ignore[misc]
