"""What a finished (or unfinished) workflow run looks like to its readers.

Planning reads runs through these values only: the historical boost in selection
and the evolution engine take a sequence of :class:`RunTrace`, so they stay pure and
testable with traces built by hand. The engine's run store produces them from each
run's ledger (``load_traces`` lives beside the store). Like the ledger, a trace holds
ids, kinds, counts and told times: never a path, a task text or a step's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["RunStatus", "RunTrace", "StepOutcome", "StepTrace"]

#: how one step ended (after its retries): ``violated`` = its contract failed
StepOutcome = Literal["success", "failure", "violated", "skipped", "timeout", "escalated"]
#: where a run stands
RunStatus = Literal["running", "awaiting_human", "succeeded", "failed", "terminated"]


@dataclass(frozen=True, slots=True)
class StepTrace:
    """One dispatched step of a run, in dispatch order."""

    step_id: str
    primitive_id: str
    outcome: StepOutcome
    attempts: int
    started_at: int
    duration_ms: int
    tokens: int


@dataclass(frozen=True, slots=True)
class RunTrace:
    """One run: which composition ran, for what kind of intent, and how it went.

    ``intent_action``/``intent_domain`` are planning's labels for the intent the run
    was started for (``None`` when it was started without a plan). ``finished_at`` is
    ``None`` while the run is not finished.
    """

    run_id: str
    composition_id: str
    pattern_id: str | None
    intent_action: str | None
    intent_domain: str | None
    status: RunStatus
    started_at: int
    finished_at: int | None
    steps: tuple[StepTrace, ...]

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"
