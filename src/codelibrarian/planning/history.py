"""What finished runs say: success rates for the historical boost, step durations for estimates.

Pure functions over :class:`~codelibrarian.execution.traces.RunTrace` values (the
engine's run store produces them from its ledgers; tests build them by hand).
Only finished runs count (``succeeded``, ``failed``, ``terminated``); a run that
is still going or waits for a human says nothing yet.

**The boost** (seed 004 P2): ``(rate - 0.5) x 0.4`` as in the seed, on a
Laplace-smoothed rate ``(successes + 1) / (runs + 2)`` so one lucky run is not a
100% record, and bounded to ±:data:`BOOST_MAX` per mille. (The seed's ±0.2 on a
score of about one let two runs outweigh the whole domain aspect.) When at least
:data:`MIN_SAME_ACTION` runs were started for the same kind of intent (the trace's
``intent_action``), only those count: a composition that works for reviews may
not work for debugging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..execution.traces import RunTrace

__all__ = [
    "BOOST_MAX",
    "FINISHED",
    "MIN_SAME_ACTION",
    "Outcome",
    "StepTiming",
    "finished",
    "outcome_for",
    "step_timings",
]

BOOST_MAX = 100
MIN_SAME_ACTION = 3
FINISHED = frozenset({"succeeded", "failed", "terminated"})


@dataclass(frozen=True, slots=True)
class Outcome:
    """Finished runs of one composition (or pattern) and what the boost makes of them."""

    key: str
    runs: int
    successes: int
    same_action: bool

    @property
    def rate(self) -> int:
        """Laplace-smoothed success rate, per mille."""
        return (self.successes + 1) * 1000 // (self.runs + 2)

    @property
    def boost(self) -> int:
        if self.runs == 0:
            return 0
        return max(-BOOST_MAX, min(BOOST_MAX, (self.rate - 500) * 2 // 5))

    def explain(self) -> str:
        if self.runs == 0:
            return "no finished runs yet"
        scope = "for this kind of intent" if self.same_action else "in all"
        return (
            f"{self.successes} of {self.runs} finished runs {scope} succeeded "
            f"(smoothed {self.rate}‰): {self.boost:+d}‰"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "successes": self.successes,
            "same_intent_action": self.same_action,
            "smoothed_rate_per_mille": self.rate,
            "boost_per_mille": self.boost,
        }


def finished(traces: Iterable[RunTrace]) -> list[RunTrace]:
    return [t for t in traces if t.status in FINISHED]


def outcome_for(
    key: str, traces: Sequence[RunTrace], *, action: str | None, by: str = "composition"
) -> Outcome:
    """The outcome of composition (or, ``by="pattern"``, pattern) ``key``."""
    mine = [
        t
        for t in traces
        if t.status in FINISHED
        and (t.composition_id == key if by == "composition" else t.pattern_id == key)
    ]
    same = [t for t in mine if action is not None and t.intent_action == action]
    chosen, same_action = (same, True) if len(same) >= MIN_SAME_ACTION else (mine, False)
    return Outcome(key, len(chosen), sum(1 for t in chosen if t.succeeded), same_action)


@dataclass(frozen=True, slots=True)
class StepTiming:
    """How long a primitive's steps took when they succeeded: median and count."""

    primitive: str
    median_ms: int
    runs: int


def step_timings(traces: Sequence[RunTrace]) -> Mapping[str, StepTiming]:
    """Median successful duration per primitive (the lower middle value for an even count)."""
    durations: dict[str, list[int]] = {}
    for t in traces:
        for s in t.steps:
            if s.outcome == "success":
                durations.setdefault(s.primitive_id, []).append(s.duration_ms)
    out: dict[str, StepTiming] = {}
    for pid in sorted(durations):
        values = sorted(durations[pid])
        out[pid] = StepTiming(pid, values[(len(values) - 1) // 2], len(values))
    return out


_STEP_KEYS = (
    "step_id",
    "primitive_id",
    "outcome",
    "attempts",
    "started_at",
    "duration_ms",
    "tokens",
)
_RUN_KEYS = ("run_id", "composition_id", "pattern_id", "intent_action", "intent_domain", "status",
             "started_at", "finished_at")  # fmt: skip


def traces_from_jsonl(text: str, *, source: str = "traces") -> tuple[RunTrace, ...]:
    """Run traces exported one JSON object a line (the fields of ``RunTrace`` and
    ``StepTrace``); a malformed line is an error naming its line and field."""
    import json
    from typing import cast, get_args

    from ..errors import UsageError
    from ..execution.traces import RunStatus, RunTrace, StepOutcome, StepTrace

    out: list[RunTrace] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}:{n}"
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            run = {k: data.get(k) for k in _RUN_KEYS}
            if run["status"] not in get_args(RunStatus):
                raise ValueError(f"status {run['status']!r} is not one of {get_args(RunStatus)}")
            steps = []
            for i, raw in enumerate(data.get("steps", [])):
                step = {k: raw.get(k) for k in _STEP_KEYS}
                if step["outcome"] not in get_args(StepOutcome):
                    raise ValueError(f"steps[{i}].outcome {step['outcome']!r} is unknown")
                for k in ("attempts", "started_at", "duration_ms", "tokens"):
                    if not isinstance(step[k], int) or isinstance(step[k], bool):
                        raise ValueError(f"steps[{i}].{k} must be an integer")
                steps.append(StepTrace(**step))
            for k in ("run_id", "composition_id"):
                if not isinstance(run[k], str) or not run[k]:
                    raise ValueError(f"{k} must be a non-empty string")
            if not isinstance(run["started_at"], int):
                raise ValueError("started_at must be an integer (epoch seconds)")
            finished = run["finished_at"]
            if finished is not None and not isinstance(finished, int):
                raise ValueError("finished_at must be an integer or null")
            out.append(
                RunTrace(
                    run_id=str(run["run_id"]),
                    composition_id=str(run["composition_id"]),
                    pattern_id=_opt(run["pattern_id"]),
                    intent_action=_opt(run["intent_action"]),
                    intent_domain=_opt(run["intent_domain"]),
                    status=cast("RunStatus", run["status"]),
                    started_at=run["started_at"],
                    finished_at=finished,
                    steps=tuple(steps),
                )
            )
        except (ValueError, TypeError, AttributeError) as exc:
            raise UsageError(
                f"{where}: not a run trace ({exc})",
                hint="One JSON object a line with the fields of RunTrace (docs/planning.md).",
            ) from None
    return tuple(out)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def trace_to_dict(trace: RunTrace) -> dict[str, Any]:
    """The JSON form :func:`traces_from_jsonl` reads."""
    from dataclasses import asdict

    return asdict(trace)
