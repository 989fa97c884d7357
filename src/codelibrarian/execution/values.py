"""The values that cross the engine core's boundary.

**In** (the shell tells the core): a :class:`StepResult` for every dispatch that
came back, the current time, the verdict of a circuit breaker it asked about, a
human's decision on an escalation or checkpoint.

**Out** (the core tells the shell): :data:`Action` values — dispatch a step,
cancel one, wake me at a time, check or update a breaker, pause for a human,
the run is finished — and ledger events (plain dicts of ids, kinds and counts).

**Inside**, each operator's interpreter answers with one of seed 004 P1's seven
result kinds (:data:`Decision`): :class:`Continue` (start these children, or the
node is done with this result), :class:`Skip`, :class:`Branch`, :class:`Retry`,
:class:`Terminate`, :class:`Escalate` and :class:`Checkpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Action",
    "Branch",
    "BreakerCheck",
    "BreakerUpdate",
    "Cancel",
    "Checkpoint",
    "Continue",
    "Decision",
    "Dispatch",
    "DispatchStatus",
    "Escalate",
    "Finish",
    "NodeResult",
    "NodeStatus",
    "Pause",
    "Retry",
    "Skip",
    "StepResult",
    "Terminate",
    "WakeAt",
]

#: how one dispatch of a step ended
DispatchStatus = Literal["success", "failure", "violated", "timeout", "cancelled"]
#: how a node (step or operator) ended
NodeStatus = Literal["succeeded", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class StepResult:
    """What came back from one dispatch (``output`` only for ``success``)."""

    dispatch_id: str
    status: DispatchStatus
    output: Mapping[str, Any] | None = None
    #: context tokens plus model usage, charged to every enclosing budget
    tokens: int = 0
    duration_ms: int = 0
    #: ledger-safe codes (contract condition ids, error kinds)
    codes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeResult:
    """A finished node: its status, a reason code and the value it passes up.

    ``value`` is a step's output, a sequence's last value, a vote's conclusion...
    (what a voting parent counts); ``None`` when there is nothing to pass up.
    """

    status: NodeStatus
    reason: str = ""
    value: Mapping[str, Any] | None = None


# ------------------------------------------------------------------ decisions (P1)


@dataclass(frozen=True, slots=True)
class Continue:
    """Start the children at ``run`` (indexes), or, with ``result``, the node is done."""

    run: tuple[int, ...] = ()
    result: NodeResult | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    reason: str


@dataclass(frozen=True, slots=True)
class Branch:
    """Run child ``target`` next (a conditional's branch, a fallback alternative,
    a loop's next iteration)."""

    target: int
    reason: str


@dataclass(frozen=True, slots=True)
class Retry:
    """Run child ``target`` again after ``delay_ms`` (``attempt`` counts from 1)."""

    target: int
    delay_ms: int
    attempt: int


@dataclass(frozen=True, slots=True)
class Terminate:
    reason: str
    graceful: bool = True


@dataclass(frozen=True, slots=True)
class Escalate:
    reason: str
    level: Literal["agent", "team", "human"] = "human"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    reason: str


Decision = Continue | Skip | Branch | Retry | Terminate | Escalate | Checkpoint

# ----------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Run one step (``dispatch_id`` = ``<step id>.<n>``, the step's n-th dispatch)."""

    dispatch_id: str
    step_id: str
    primitive: str
    executor: str
    role: str
    #: the attempt of the innermost enclosing retry (1 without one)
    attempt: int
    input: Mapping[str, Any]
    #: epoch ms by which the step must end (enclosing timeboxes, the run's limit)
    deadline_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    dispatch_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class WakeAt:
    """Tell the core the time again at (or after) ``at_ms``."""

    at_ms: int


@dataclass(frozen=True, slots=True)
class BreakerCheck:
    """Ask the persisted breaker ``key`` whether the body may run now."""

    node_id: str
    key: str
    threshold: int
    reset_after_ms: int


@dataclass(frozen=True, slots=True)
class BreakerUpdate:
    key: str
    success: bool
    threshold: int
    reset_after_ms: int


@dataclass(frozen=True, slots=True)
class Pause:
    """The run waits for a human (``kind``: escalate or checkpoint)."""

    kind: Literal["escalate", "checkpoint"]
    node_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Finish:
    status: Literal["succeeded", "failed", "terminated"]
    reason: str


Action = Dispatch | Cancel | WakeAt | BreakerCheck | BreakerUpdate | Pause | Finish


@dataclass(slots=True)
class Frame:
    """One activation of a node: its operator state and where it sits.

    Frames are the core's working memory (mutable, never shared outside it). A
    loop's body gets a fresh frame per iteration, so a nested loop's counter
    starts at zero in every outer iteration.
    """

    node: Any
    parent: Frame | None
    slot: int
    serial: int
    state: dict[str, Any] = field(default_factory=dict)
    children: dict[int, Frame] = field(default_factory=dict)
    done: bool = False
    #: epoch ms, for timeboxes
    deadline: int | None = None

    @property
    def node_id(self) -> str:
        node = self.node
        return str(getattr(node, "node_id", "") or getattr(node, "step_id", ""))
