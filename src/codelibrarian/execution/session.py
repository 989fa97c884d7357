"""The journal around the core: every input recorded before it is fed, every event after.

A :class:`RunSession` owns one run's engine and ledger. Each ``feed_*`` method
appends the input entry (``run_started``, ``step_result``, ``tick``,
``breaker_state``, ``human_decision``), feeds the core, and appends the events the
core emitted. So the ledger is both the evidence and the event history:
:meth:`RunSession.load` rebuilds a run by replaying its inputs through a fresh core
and checks, entry by entry, that the core emits exactly the events it recorded
(the way Temporal's replayer proves a workflow deterministic). Events the core
emitted but a crash kept from being written are appended then; a step whose
result was never recorded is still running (or still waiting for its agent).

Other entries (``contract_check``, ``capability_*``, ``context_composed``,
``handoff``, ``step_handed_out``, ``ledger_repaired``, ``run_resumed``) are the
shell's evidence: replay passes over them.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RunStateError
from .core import Engine, Turn
from .ledger import Ledger, check_chain
from .plan import RunPlan
from .rules import canonical, digest_value
from .store import RunMeta, WorkflowStore
from .values import Action, BreakerUpdate, StepResult

__all__ = ["INPUT_KINDS", "RunDiverged", "RunSession"]

INPUT_KINDS = frozenset({"run_started", "step_result", "tick", "breaker_state", "human_decision"})
SHELL_KINDS = frozenset(
    {
        "contract_check",
        "capability_required",
        "capability_matched",
        "capability_mismatch",
        "context_composed",
        "handoff",
        "step_handed_out",
        "ledger_repaired",
        "run_resumed",
        "breaker_update",
    }
)


class RunDiverged(RunStateError):
    """Replaying a run's inputs did not reproduce its recorded events."""

    code = "run_diverged"


def _plain(event: Mapping[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in event.items() if k not in ("seq", "prev", "hash")}
    value: dict[str, Any] = json.loads(canonical(body))
    return value


@dataclass(slots=True)
class RunSession:
    """One run's engine and ledger (see the module docstring)."""

    store: WorkflowStore
    meta: RunMeta
    plan: RunPlan
    engine: Engine
    ledger: Ledger

    @property
    def run_id(self) -> str:
        return self.meta.run_id

    # ------------------------------------------------------------ create/load

    @classmethod
    def create(
        cls,
        store: WorkflowStore,
        meta: RunMeta,
        plan: RunPlan,
        engine: Engine,
        *,
        now: int,
        started: Mapping[str, Any],
    ) -> tuple[RunSession, Turn]:
        """A new run: ``run.json`` written, ``run_started`` recorded, the core started."""
        store.write_meta(meta)
        ledger, _, _ = Ledger.open(store.runs.ledger_path(meta.run_id))
        session = cls(store, meta, plan, engine, ledger)
        ledger.append([{"kind": "run_started", "at": now, **started}])
        turn = engine.start(now)
        ledger.append(turn.events)
        return session, turn

    @classmethod
    def load(
        cls, store: WorkflowStore, meta: RunMeta, plan: RunPlan, engine: Engine, *, now: int
    ) -> tuple[RunSession, list[Action]]:
        """Replay a run's ledger into ``engine`` (fresh); returns the session and the
        breaker updates of turns whose events had not all been written."""
        ledger, entries, torn = Ledger.open(store.runs.ledger_path(meta.run_id))
        check = check_chain(entries)
        if not check.ok:
            raise RunStateError(
                f"run {meta.run_id}: the ledger's chain is broken at entry {check.broken_at} "
                f"({check.reason}); the run cannot be trusted or resumed",
                hint=f"`librarian runs verify {meta.run_id}` shows the check.",
            )
        session = cls(store, meta, plan, engine, ledger)
        expected: deque[dict[str, Any]] = deque()
        recovered: list[Action] = []
        pending_updates: list[Action] = []
        for entry in entries:
            kind = entry.get("kind")
            if kind in INPUT_KINDS:
                if expected:
                    raise RunDiverged(
                        f"run {meta.run_id}: entry {entry.get('seq')} ({kind}) was recorded "
                        f"before {len(expected)} event(s) the core emits",
                        hint="The ledger was edited, or the engine changed since the run "
                        "started; `librarian runs verify` checks the chain.",
                    )
                turn = session._replay_input(entry)
                expected.extend(_plain(e) for e in turn.events)
                pending_updates = [a for a in turn.actions if isinstance(a, BreakerUpdate)]
            elif kind in SHELL_KINDS:
                continue
            else:
                got = _plain(entry)
                want = expected.popleft() if expected else None
                if want != got:
                    raise RunDiverged(
                        f"run {meta.run_id}: entry {entry.get('seq')} ({kind}) differs from "
                        "what the engine emits on replay",
                        hint="The composition or the engine changed since the run started, or "
                        "the ledger was edited; the run cannot be resumed.",
                    )
                if not expected:
                    pending_updates = []
        if expected:
            recovered.extend(pending_updates)
            session.ledger.append(list(expected))
        if torn:
            session.record([{"kind": "ledger_repaired", "at": now, "dropped_bytes": torn}])
        return session, recovered

    def _replay_input(self, entry: Mapping[str, Any]) -> Turn:
        kind, at = entry["kind"], int(entry["at"])
        if kind == "run_started":
            return self.engine.start(at)
        if kind == "step_result":
            dispatch_id = str(entry["dispatch"])
            digest = entry.get("output")
            output = (
                self.store.read_output(self.run_id, dispatch_id, str(digest))
                if digest is not None
                else None
            )
            res = StepResult(
                dispatch_id,
                entry["status"],
                output,
                int(entry.get("tokens", 0)),
                int(entry.get("duration_ms", 0)),
                tuple(entry.get("codes", ())),
            )
            return self.engine.result(res, at)
        if kind == "tick":
            return self.engine.tick(at)
        if kind == "breaker_state":
            return self.engine.breaker(str(entry["node"]), str(entry["verdict"]), at)
        return self.engine.resolve(bool(entry["approved"]), at)

    # ----------------------------------------------------------------- inputs

    def _feed(self, entry: dict[str, Any], turn_of: Any) -> Turn:
        self.ledger.append([entry])
        turn: Turn = turn_of()
        self.ledger.append(turn.events)
        return turn

    def feed_result(self, res: StepResult, now: int, *, step_id: str) -> Turn:
        """Record and feed a dispatch's result (its output is written first)."""
        digest = None
        if res.status == "success" and res.output is not None:
            digest = self.store.write_output(self.run_id, res.dispatch_id, res.output)
        entry = {
            "kind": "step_result",
            "at": now,
            "dispatch": res.dispatch_id,
            "step": step_id,
            "status": res.status,
            "tokens": res.tokens,
            "duration_ms": res.duration_ms,
            "output": digest,
            "codes": list(res.codes),
        }
        return self._feed(entry, lambda: self.engine.result(res, now))

    def feed_tick(self, now: int) -> Turn | None:
        """Tell the core the time, recorded only when a timer is due (else nothing)."""
        if not self.engine.due(now):
            return None
        return self._feed({"kind": "tick", "at": now}, lambda: self.engine.tick(now))

    def feed_breaker(self, node_id: str, key: str, verdict: str, failures: int, now: int) -> Turn:
        entry = {
            "kind": "breaker_state",
            "at": now,
            "node": node_id,
            "breaker": digest_value(key)[:16],
            "verdict": verdict,
            "failures": failures,
        }
        return self._feed(entry, lambda: self.engine.breaker(node_id, verdict, now))

    def feed_resolve(self, approved: bool, now: int, *, note: str | None) -> Turn:
        entry: dict[str, Any] = {"kind": "human_decision", "at": now, "approved": approved}
        if note:
            entry["note"] = self.store.write_note(self.run_id, self.ledger.seq, note)
        return self._feed(entry, lambda: self.engine.resolve(approved, now))

    def record(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Append shell evidence (never replayed)."""
        self.ledger.append(list(events))
