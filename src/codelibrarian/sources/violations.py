"""Recorded violations: what an agent or a check got wrong, kept under ``.librarian/``.

One JSON object per line in ``State.violations_path``. A violation has a rule
name, a message, an optional file and line, a severity and the time it was
recorded (given by the caller: the library never reads the clock). Ids are
``v`` + the 1-based line number, so they are stable and short.

"Recent" means recorded at most :data:`RECENT_SECONDS` before ``as_of`` (and not
after it): the policy engine must-includes those.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..workspace.private import private_append

__all__ = ["RECENT_SECONDS", "SEVERITIES", "Violation", "add_violation", "load_violations"]

RECENT_SECONDS = 7 * 86400
SEVERITIES = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Violation:
    id: str
    rule: str
    message: str
    recorded_at: int
    severity: str = "medium"
    path: str | None = None
    line: int | None = None

    def is_recent(self, as_of: int) -> bool:
        return 0 <= as_of - self.recorded_at <= RECENT_SECONDS

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "recorded_at": self.recorded_at,
        }

    def render(self) -> str:
        where = ""
        if self.path:
            where = f" at {self.path}" + (f":{self.line}" if self.line else "")
        return f"[{self.severity}] {self.rule}{where}: {self.message}"


def load_violations(path: Path) -> tuple[Violation, ...]:
    """All recorded violations in file order (unreadable lines are skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ()
    out: list[Violation] = []
    for number, line in enumerate(lines, start=1):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict) or not data.get("rule"):
            continue
        line_no = data.get("line")
        out.append(
            Violation(
                id=f"v{number}",
                rule=str(data["rule"]),
                message=str(data.get("message", "")),
                recorded_at=int(data.get("recorded_at", 0)),
                severity=str(data.get("severity", "medium")),
                path=data.get("path") or None,
                line=int(line_no) if isinstance(line_no, int) else None,
            )
        )
    return tuple(out)


def add_violation(
    path: Path,
    *,
    rule: str,
    message: str,
    recorded_at: int,
    severity: str = "medium",
    file: str | None = None,
    line: int | None = None,
) -> Violation:
    """Append a violation and return it with its id."""
    if not rule.strip():
        raise UsageError("a violation needs a rule name", hint="Pass --rule NAME.")
    if severity not in SEVERITIES:
        raise UsageError(
            f"unknown severity {severity!r}", hint=f"Use one of: {', '.join(SEVERITIES)}."
        )
    if line is not None and line < 1:
        raise UsageError("--line must be 1 or more")
    record: dict[str, Any] = {
        "rule": rule.strip(),
        "message": message,
        "severity": severity,
        "path": file.replace("\\", "/") if file else None,
        "line": line,
        "recorded_at": recorded_at,
    }
    existing = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    private_append(path, json.dumps(record, sort_keys=True) + "\n", sync=True)
    return Violation(
        id=f"v{len(existing) + 1}",
        rule=rule.strip(),
        message=message,
        recorded_at=recorded_at,
        severity=severity,
        path=file.replace("\\", "/") if file else None,
        line=line,
    )
