"""Workspace vitals: pressure, pulse and oxygen, from signals we can measure.

- **pressure**: lines changed and not committed (``+``/``-`` lines of the
  current change). ``low`` below 50, ``medium`` below 300, ``high`` from 300.
- **pulse**: save events per minute, averaged over the five minutes before
  ``as_of``, read from the events file ``librarian index --watch`` appends to
  (one JSON object per line with an epoch-seconds ``ts``/``time``/``timestamp``
  field, or a bare number). ``calm`` below 2, ``active`` below 10, ``rapid`` from 10.
- **oxygen**: the last recorded test and lint status
  (``librarian vitals record --tests pass|fail --lint pass|fail``), in
  thousandths: 1000 when nothing failed or nothing was recorded, 500 when one
  of the two failed, 0 when both did.

Adjustments are integers added to a candidate's relevance (clamped to 1000),
mirroring the seed's ``WorkspaceVitals.adjustRelevance`` with measurable
thresholds: high pressure adds 100 to candidates in recency bucket 4 or 5; a
rapid pulse adds 150 to the local lane; oxygen below 500 adds 100 to the rules
and policy lanes. The snapshot is part of the cache key and the decision record.

Reading files is the shell's job; :func:`relevance_delta` is pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .errors import UsageError
from .workspace.private import private_write

__all__ = [
    "PULSE_WINDOW_SECONDS",
    "StatusRecord",
    "VitalsSnapshot",
    "count_saves",
    "load_status",
    "measure",
    "record_status",
    "relevance_delta",
]

PULSE_WINDOW_SECONDS = 300
Status = Literal["pass", "fail", "unknown"]


@dataclass(frozen=True, slots=True)
class StatusRecord:
    """Last recorded test/lint status and when it was recorded (epoch seconds)."""

    tests: Status = "unknown"
    lint: Status = "unknown"
    recorded_at: int = 0


@dataclass(frozen=True, slots=True)
class VitalsSnapshot:
    """Measured vitals at ``as_of`` (all integers, so they hash and compare exactly)."""

    as_of: int
    changed_lines: int
    saves_in_window: int
    tests: Status
    lint: Status

    @property
    def pressure(self) -> Literal["low", "medium", "high"]:
        if self.changed_lines >= 300:
            return "high"
        return "medium" if self.changed_lines >= 50 else "low"

    @property
    def pulse_per_minute(self) -> int:
        """Saves per minute over the window, rounded down."""
        return self.saves_in_window * 60 // PULSE_WINDOW_SECONDS

    @property
    def pulse(self) -> Literal["calm", "active", "rapid"]:
        ppm = self.pulse_per_minute
        if ppm >= 10:
            return "rapid"
        return "active" if ppm >= 2 else "calm"

    @property
    def oxygen(self) -> int:
        """Thousandths: 1000 healthy or unknown, 500 one failing, 0 both failing."""
        fails = (self.tests == "fail") + (self.lint == "fail")
        return 1000 - 500 * fails

    def to_dict(self) -> dict[str, Any]:
        """JSON form; this exact dict goes into cache keys and decision records."""
        return {
            "changed_lines": self.changed_lines,
            "pressure": self.pressure,
            "saves_in_window": self.saves_in_window,
            "pulse_per_minute": self.pulse_per_minute,
            "pulse": self.pulse,
            "tests": self.tests,
            "lint": self.lint,
            "oxygen": self.oxygen,
        }


def relevance_delta(snapshot: VitalsSnapshot, *, lane: str, recency_bucket: int) -> int:
    """Relevance to add (thousandths) to a candidate of ``lane`` and ``recency_bucket``."""
    delta = 0
    if snapshot.pressure == "high" and recency_bucket >= 4:
        delta += 100
    if snapshot.pulse == "rapid" and lane == "local":
        delta += 150
    if snapshot.oxygen < 500 and lane in ("rules", "policy"):
        delta += 100
    return delta


def _event_time(line: str) -> int | None:
    line = line.strip()
    if not line:
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    value: Any = data
    if isinstance(data, dict):
        value = next((data[k] for k in ("ts", "time", "timestamp", "at") if k in data), None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def count_saves(events_path: Path, *, as_of: int, window: int = PULSE_WINDOW_SECONDS) -> int:
    """Save events with ``as_of - window < ts <= as_of`` (0 when there is no events file)."""
    try:
        with open(events_path, encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
    except FileNotFoundError:
        return 0
    except OSError:
        return 0
    count = 0
    for line in lines:
        ts = _event_time(line)
        if ts is not None and as_of - window < ts <= as_of:
            count += 1
    return count


def load_status(status_path: Path) -> StatusRecord:
    """The last recorded status (unknown when none was recorded or the file is unreadable)."""
    try:
        data = json.loads(status_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return StatusRecord()
    if not isinstance(data, dict):
        return StatusRecord()

    def _status(v: Any) -> Status:
        return v if v in ("pass", "fail") else "unknown"

    at = data.get("recorded_at", 0)
    return StatusRecord(
        tests=_status(data.get("tests")),
        lint=_status(data.get("lint")),
        recorded_at=at if isinstance(at, int) and not isinstance(at, bool) else 0,
    )


def record_status(
    status_path: Path, *, tests: str | None = None, lint: str | None = None, as_of: int
) -> StatusRecord:
    """Record test and/or lint status; a value not given keeps its previous one."""
    for name, value in (("tests", tests), ("lint", lint)):
        if value is not None and value not in ("pass", "fail"):
            raise UsageError(f"--{name} must be 'pass' or 'fail', not {value!r}")
    if tests is None and lint is None:
        raise UsageError(
            "nothing to record", hint="Pass --tests pass|fail and/or --lint pass|fail."
        )
    old = load_status(status_path)
    new = StatusRecord(
        tests=tests if tests in ("pass", "fail") else old.tests,  # type: ignore[arg-type]
        lint=lint if lint in ("pass", "fail") else old.lint,  # type: ignore[arg-type]
        recorded_at=as_of,
    )
    private_write(
        status_path,
        json.dumps({"tests": new.tests, "lint": new.lint, "recorded_at": new.recorded_at}) + "\n",
    )
    return new


def measure(
    *, changed_lines: int, events_path: Path, status_path: Path, as_of: int
) -> VitalsSnapshot:
    """Vitals at ``as_of`` from the change size, the events file and the status file."""
    status = load_status(status_path)
    return VitalsSnapshot(
        as_of=as_of,
        changed_lines=max(0, changed_lines),
        saves_in_window=count_saves(events_path, as_of=as_of),
        tests=status.tests,
        lint=status.lint,
    )
