"""Recording into the workspace: session history, learnings, violations, vitals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..boundary import guard_methods
from . import FacadePart

if TYPE_CHECKING:
    from ..sources.sessions import Learning, SessionEntry
    from ..sources.violations import Violation
    from ..vitals import StatusRecord, VitalsSnapshot


@guard_methods
class RecordsPart(FacadePart):
    def record_session(
        self, session: str, text: str, *, role: str = "agent", as_of: int | None = None
    ) -> SessionEntry:
        """Record a session history entry (offered by the history lane)."""
        from ..service.records import record_session

        return record_session(self._ws, session, text, role=role, as_of=as_of)

    def record_learning(
        self,
        trigger: str,
        action: str,
        *,
        tags: Sequence[str] = (),
        as_of: int | None = None,
    ) -> Learning:
        """Record a learning ("when ``trigger``, ``action``") for the history lane."""
        from ..service.records import record_learning

        return record_learning(self._ws, trigger, action, tags=tags, as_of=as_of)

    def add_violation(
        self,
        rule: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        severity: str = "medium",
        as_of: int | None = None,
    ) -> Violation:
        """Record a violation (the policy lane must-includes recent ones)."""
        from ..service.records import record_violation

        return record_violation(
            self._ws, rule, message, file=file, line=line, severity=severity, as_of=as_of
        )

    def violations(self) -> tuple[Violation, ...]:
        """All recorded violations, oldest first."""
        from ..sources.violations import load_violations

        return load_violations(self._ws.state.violations_path)

    def vitals(self, *, as_of: int | None = None) -> VitalsSnapshot:
        """Current vitals: pressure (uncommitted lines), pulse (saves/min), oxygen."""
        from ..service.records import current_vitals

        return current_vitals(self._ws, as_of=as_of)

    def record_vitals(
        self, *, tests: str | None = None, lint: str | None = None, as_of: int | None = None
    ) -> StatusRecord:
        """Record the last test and/or lint status ("pass" or "fail")."""
        from ..service.records import record_check_status

        return record_check_status(self._ws, tests=tests, lint=lint, as_of=as_of)
