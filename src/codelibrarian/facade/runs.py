"""Runs: Local Context Packs and handoffs, and workflow runs worked with the agent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..boundary import guard_methods
from . import FacadePart

if TYPE_CHECKING:
    from ..execution.report import RunVerification, RunView
    from ..execution.service import ExecutionService
    from ..execution.store import TraceLoad
    from ..packs.runs import RunSummary
    from ..packs.service import HandoffResult, PackResult, RunDetail


@guard_methods
class RunsPart(FacadePart):
    _execution: ExecutionService | None = None

    def pack(
        self,
        agent: str,
        task: str,
        *,
        acceptance: Sequence[str] = (),
        constraints: Sequence[str] = (),
        scope: str | None = None,
        capability: str | None = None,
        run_id: str | None = None,
        task_id: str | None = None,
        refresh: bool = False,
        model: str | None = None,
        files: Iterable[str] = (),
        as_of: int | None = None,
    ) -> PackResult:
        """Build (or reuse, or ``refresh``) ``agent``'s Local Context Pack in a run.

        The pack is written to ``.librarian/runs/<run>/context/<agent>.lcp.json``
        (``resources://runs/<run>/context/<agent>.lcp.json``), remembered in the
        run's ``memory.json`` and journaled. Without ``run_id`` a new run is
        started. ``scope`` (Tiny/Small/Medium/Large) defaults to the change's
        class; ``capability`` to ``reasoning_high``. See docs/packs.md.
        """
        from ..packs.service import make_pack

        return make_pack(
            self._composer,
            agent,
            task,
            acceptance=acceptance,
            constraints=constraints,
            scope=scope,
            capability=capability,
            run_id=run_id,
            task_id=task_id,
            refresh=refresh,
            model=model,
            files=files,
            as_of=as_of,
        )

    def handoff(
        self,
        run_id: str,
        from_agent: str,
        to_agent: str,
        *,
        notes: Sequence[str] = (),
        risks: Sequence[str] = (),
        evidence: Sequence[str] = (),
        as_of: int | None = None,
    ) -> HandoffResult:
        """Write the handoff package ``from_agent -> to_agent`` of a run (diff refs,
        evidence, risks, notes, the sender's ``context_pack_uri``) and journal it."""
        from ..packs.service import make_handoff

        return make_handoff(
            self._ws,
            run_id,
            from_agent,
            to_agent,
            notes=notes,
            risks=risks,
            evidence=evidence,
            as_of=as_of,
        )

    def runs(self) -> tuple[RunSummary, ...]:
        """Every run of this workspace (id, agents with packs, handoffs), by id."""
        from ..packs.service import list_runs

        return list_runs(self._ws.state)

    def run(self, run_id: str) -> RunDetail:
        """One run: its packs and handoffs (validated) and its journal."""
        from ..packs.service import show_run

        return show_run(self._ws.state, run_id)

    def resource(self, uri: str) -> Path:
        """The file behind a ``resources://runs/<id>/...`` URI (for the MCP server)."""
        from ..packs.runs import resolve_resource

        return resolve_resource(self._ws.root, uri)

    # ---------------------------------------------------------- workflow runs

    def _runs(self) -> ExecutionService:
        if self._execution is None:
            from ..execution.service import ExecutionService

            self._execution = ExecutionService(self._ws, self._composer)
        return self._execution

    def run_start(
        self,
        source: str,
        task: str,
        *,
        provider: str | None = None,
        approve: bool = False,
        pattern_id: str | None = None,
        intent_action: str | None = None,
        intent_domain: str | None = None,
    ) -> RunView:
        """Start a workflow run of ``source`` (a program file, a composition id or a
        preset name) for ``task``, and work it until it needs the calling agent, a
        human or (with a ``provider``) until it ends. Agent steps are handed to the
        caller (``run_next``) unless a ``provider`` works them. See docs/execution.md."""
        return self._runs().start(
            source,
            task,
            provider=provider,
            agent=provider is None,
            approve=approve,
            pattern_id=pattern_id,
            intent_action=intent_action,
            intent_domain=intent_domain,
        )

    def run_next(self, run_id: str) -> tuple[RunView, list[dict[str, Any]]]:
        """The run's status and the handouts of the steps waiting for the agent
        (instructions, input, output schema and the step's own context pack)."""
        return self._runs().next(run_id)

    def run_submit(self, run_id: str, step_id: str, output: Any) -> RunView:
        """Record the agent's output (a JSON object) for a handed-out step: its
        contract is checked, the run goes on, and the new status is returned."""
        return self._runs().submit(run_id, step_id, output)

    def run_status(self, run_id: str) -> RunView:
        """Where a workflow run stands (read from its ledger; nothing is written)."""
        return self._runs().status(run_id)

    def run_show(self, run_id: str) -> dict[str, Any]:
        """The run's status and trace tree: every node's outcome, timings and decisions."""
        return self._runs().show(run_id)

    def run_resume(self, run_id: str) -> RunView:
        """Continue a run after a crash or a restart; finished steps are never repeated."""
        return self._runs().resume(run_id)

    def run_approve(self, run_id: str, note: str | None = None) -> RunView:
        """Approve what a run waits on (an escalated vote, a checkpoint) and go on."""
        return self._runs().decide(run_id, approved=True, note=note)

    def run_reject(self, run_id: str, note: str | None = None) -> RunView:
        """Reject what a run waits on (the vote fails; a checkpoint ends the run)."""
        return self._runs().decide(run_id, approved=False, note=note)

    def run_verify(self, run_id: str) -> RunVerification:
        """Check a run's hash chain and its stored outputs against their digests."""
        return self._runs().verify(run_id)

    def run_ledger(self, run_id: str) -> str:
        """The run's ledger (JSON Lines: ids, kinds, counts and told times)."""
        return self._runs().ledger_text(run_id)

    def traces(self) -> TraceLoad:
        """Every workflow run as a trace (for planning), runs with broken chains skipped."""
        return self._runs().traces()
