"""What the agent and the user record into a workspace: session entries, learnings,
violations and test/lint status, and the vitals measured from them.

Every recorded text passes the workspace's secret gate before it is written: the
history and policy lanes show it to a model again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..sources.local import changed_line_count
from ..sources.sessions import Learning, SessionEntry, append_learning, append_session_entry
from ..sources.violations import Violation, add_violation
from ..vitals import StatusRecord, VitalsSnapshot, measure, record_status
from .compose import STATUS_FILE
from .workspace import WorkspaceSession, now_or


def record_session(
    ws: WorkspaceSession, session: str, text: str, *, role: str, as_of: int | None
) -> SessionEntry:
    """Append a session history entry (the history lane offers it)."""
    ws.state.ensure()
    return append_session_entry(
        ws.state.sessions_dir,
        session=session,
        text=ws.gate.clean(text, surface="history", kind="session"),
        role=role,
        recorded_at=now_or(as_of),
    )


def record_learning(
    ws: WorkspaceSession, trigger: str, action: str, *, tags: Sequence[str], as_of: int | None
) -> Learning:
    """Append a learning ("when ``trigger``, ``action``") for the history lane."""
    ws.state.ensure()
    trigger, action = ws.gate.clean_many((trigger, action), surface="history", kind="learning")
    return append_learning(
        ws.state.sessions_dir,
        trigger=trigger,
        action=action,
        tags=tuple(tags),
        recorded_at=now_or(as_of),
    )


def record_violation(
    ws: WorkspaceSession,
    rule: str,
    message: str,
    *,
    file: str | None,
    line: int | None,
    severity: str,
    as_of: int | None,
) -> Violation:
    """Append a violation (the policy lane must-includes recent ones)."""
    ws.state.ensure()
    return add_violation(
        ws.state.violations_path,
        rule=rule,
        message=ws.gate.clean(message, surface="policy", kind="violation"),
        file=file,
        line=line,
        severity=severity,
        recorded_at=now_or(as_of),
    )


def current_vitals(ws: WorkspaceSession, *, as_of: int | None) -> VitalsSnapshot:
    """Pressure (uncommitted lines), pulse (saves a minute) and oxygen, now."""
    return measure(
        changed_lines=changed_line_count(ws.working_changes()),
        events_path=ws.state.events_path,
        status_path=ws.state.dir / STATUS_FILE,
        as_of=now_or(as_of),
    )


def record_check_status(
    ws: WorkspaceSession, *, tests: str | None, lint: str | None, as_of: int | None
) -> StatusRecord:
    """Record the last test and/or lint status ("pass" or "fail")."""
    ws.state.ensure()
    return record_status(ws.state.dir / STATUS_FILE, tests=tests, lint=lint, as_of=now_or(as_of))
