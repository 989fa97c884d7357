"""Workflow runs in the one run store, and the traces planning reads from their ledgers.

A workflow run is a run of :class:`~codelibrarian.packs.runs.RunStore` with a
ledger. Beside the ledger it keeps, each written atomically:

* ``run.json`` (mode 0600) — :class:`RunMeta`: the task, the composition as a
  table, the facts the run was started with and how it is worked (agent or
  provider). Private: it holds the task text;
* ``workflow.json`` — a small public summary for ``runs list`` (composition id,
  status, counts), derived from the ledger after every change;
* ``steps/<dispatch>/`` (mode 0600) — ``context.md`` (the step's context pack),
  ``handout.json`` (what an agent is given), ``output.json`` (what came back; the
  ledger records its digest) and ``verdict.json`` (contract reasons, which may
  quote values and so never enter the ledger);
* ``notes/<n>.txt`` (mode 0600) — notes given with an approval or rejection.

:func:`load_traces` turns every run's ledger into a
:class:`~.traces.RunTrace` (sorted by ``(started_at, run_id)``); a run whose
chain does not verify is skipped and counted, never half-read. Times in traces
are epoch milliseconds, as in the ledger.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import NotFound, RunStateError, UsageError
from ..packs.runs import RunStore
from ..workspace.state import State
from .ledger import read_entries, verify
from .rules import canonical, digest_value
from .traces import RunStatus, RunTrace, StepOutcome, StepTrace

__all__ = [
    "RUN_SCHEMA",
    "RunMeta",
    "TraceLoad",
    "WorkflowStore",
    "load_traces",
    "trace_from_entries",
    "write_private",
]

RUN_SCHEMA = "codelibrarian.workflow-run/1"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically with mode 0600 (the file never exists world-readable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        tmp.replace(path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass(frozen=True, slots=True)
class RunMeta:
    """The private record of how a workflow run was started (``run.json``)."""

    run_id: str
    task: str
    composition: Mapping[str, Any]
    facts: Mapping[str, Any]
    created_at: int
    #: "agent": agent steps are handed to the caller; "provider": a model works them
    mode: str = "agent"
    provider: str | None = None
    approved: bool = False
    source: str = ""
    pattern_id: str | None = None
    intent_action: str | None = None
    intent_domain: str | None = None
    lcp: bool = True

    def to_json(self) -> str:
        data = {
            "schema": RUN_SCHEMA,
            "run_id": self.run_id,
            "task": self.task,
            "source": self.source,
            "mode": self.mode,
            "provider": self.provider,
            "approved": self.approved,
            "created_at": self.created_at,
            "pattern_id": self.pattern_id,
            "intent_action": self.intent_action,
            "intent_domain": self.intent_domain,
            "lcp": self.lcp,
            "composition": self.composition,
            "facts": self.facts,
        }
        return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> RunMeta:
        try:
            data = json.loads(text)
            if data.get("schema") != RUN_SCHEMA:
                raise ValueError(f"schema {data.get('schema')!r}")
            return cls(
                run_id=str(data["run_id"]),
                task=str(data["task"]),
                composition=data["composition"],
                facts=data["facts"],
                created_at=int(data["created_at"]),
                mode=str(data.get("mode", "agent")),
                provider=data.get("provider"),
                approved=bool(data.get("approved", False)),
                source=str(data.get("source", "")),
                pattern_id=data.get("pattern_id"),
                intent_action=data.get("intent_action"),
                intent_domain=data.get("intent_domain"),
                lcp=bool(data.get("lcp", True)),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UsageError(
                f"{where} is not a workflow run record: {exc}",
                hint="The run folder was edited or written by another version.",
            ) from None


class WorkflowStore:
    """The workflow files of runs (see the module docstring)."""

    def __init__(self, state: State) -> None:
        self.runs = RunStore(state)

    def require(self, run_id: str) -> None:
        if not self.runs.is_workflow(run_id):
            known = ", ".join(self.workflow_ids()[-5:]) or "none"
            raise NotFound(
                f"no workflow run {run_id!r}",
                hint=f"Recent workflow runs: {known}. Start one with `librarian runs start`.",
            )

    def workflow_ids(self) -> tuple[str, ...]:
        return tuple(r for r in self.runs.run_ids() if self.runs.is_workflow(r))

    # ---------------------------------------------------------------- meta

    def write_meta(self, meta: RunMeta) -> None:
        write_private(self.runs.meta_path(meta.run_id), meta.to_json())

    def read_meta(self, run_id: str) -> RunMeta:
        path = self.runs.meta_path(run_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFound(f"workflow run {run_id} has no run.json") from None
        return RunMeta.from_json(text, f"runs/{run_id}/run.json")

    def write_summary(self, run_id: str, summary: Mapping[str, Any]) -> None:
        text = json.dumps(dict(summary), indent=2, ensure_ascii=False) + "\n"
        path = self.runs.workflow_path(run_id)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)

    # --------------------------------------------------------------- steps

    def step_file(self, run_id: str, dispatch_id: str, name: str) -> Path:
        return self.runs.step_dir(run_id, dispatch_id) / name

    def write_step(self, run_id: str, dispatch_id: str, name: str, text: str) -> Path:
        path = self.step_file(run_id, dispatch_id, name)
        write_private(path, text)
        return path

    def write_output(self, run_id: str, dispatch_id: str, output: Mapping[str, Any]) -> str:
        """Store a step's output (mode 0600); returns the digest the ledger records."""
        self.write_step(run_id, dispatch_id, "output.json", canonical(dict(output)) + "\n")
        return digest_value(dict(output))

    def read_output(self, run_id: str, dispatch_id: str, digest: str | None) -> dict[str, Any]:
        """A stored output, checked against the digest the ledger recorded."""
        path = self.step_file(run_id, dispatch_id, "output.json")
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise RunStateError(
                f"run {run_id}: the output of {dispatch_id} is missing or unreadable",
                hint="The run folder was damaged; `librarian runs verify` shows what is wrong.",
            ) from None
        if digest is not None and digest_value(value) != digest:
            raise RunStateError(
                f"run {run_id}: the output of {dispatch_id} does not match its ledger digest",
                hint="It was changed after it was recorded; the run cannot be trusted.",
            )
        if not isinstance(value, dict):
            raise RunStateError(f"run {run_id}: the output of {dispatch_id} is not an object")
        return value

    def read_json(self, run_id: str, dispatch_id: str, name: str) -> dict[str, Any] | None:
        try:
            value = json.loads(self.step_file(run_id, dispatch_id, name).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def write_note(self, run_id: str, seq: int, note: str) -> str:
        write_private(self.runs.run_dir(run_id) / "notes" / f"{seq}.txt", note + "\n")
        return digest_value(note)


# -------------------------------------------------------------------- traces

_OUTCOMES: Mapping[str, StepOutcome] = {
    "success": "success",
    "failure": "failure",
    "violated": "violated",
    "timeout": "timeout",
    "cancelled": "failure",
}


def _status(entries: Sequence[Mapping[str, Any]]) -> tuple[RunStatus, int | None]:
    asked = answered = 0
    for e in entries:
        kind = e.get("kind")
        if kind == "run_finished":
            return e["status"], int(e["at"])
        if kind in ("escalation", "checkpoint"):
            asked += 1
        elif kind == "human_resolution":
            answered += 1
    return ("awaiting_human" if asked > answered else "running"), None


def trace_from_entries(run_id: str, entries: Sequence[Mapping[str, Any]]) -> RunTrace:
    """The trace of one run from its (verified) ledger entries."""
    started = next((e for e in entries if e.get("kind") == "run_started"), None)
    if started is None:
        raise UsageError(f"run {run_id}: the ledger has no run_started entry")
    steps: list[dict[str, Any]] = []  # StepTrace fields, filled as the ledger is read
    by_dispatch: dict[str, dict[str, Any]] = {}
    latest: dict[str, dict[str, Any]] = {}
    for e in entries:
        kind = e.get("kind")
        if kind == "primitive_dispatch":
            sid, attempt = str(e["step"]), int(e.get("attempt", 1))
            cur = latest.get(sid)
            if cur is not None and attempt > 1 and cur["attempts"] < attempt:
                cur["attempts"] = attempt
                cur["outcome"] = "failure"
                cur["ended"] = False  # its outcome is the new attempt's
                by_dispatch[str(e["dispatch"])] = cur
                continue
            row: dict[str, Any] = {
                "ended": False,
                "step_id": sid,
                "primitive_id": str(e["primitive"]),
                "outcome": "failure",
                "attempts": attempt,
                "started_at": int(e["at"]),
                "duration_ms": 0,
                "tokens": 0,
            }
            steps.append(row)
            latest[sid] = row
            by_dispatch[str(e["dispatch"])] = row
        elif kind == "step_result" and str(e.get("dispatch")) in by_dispatch:
            row = by_dispatch[str(e["dispatch"])]
            row["ended"] = True
            row["outcome"] = _OUTCOMES.get(str(e.get("status")), "failure")
            row["duration_ms"] += int(e.get("duration_ms", 0))
            row["tokens"] += int(e.get("tokens", 0))
        elif kind == "dispatch_cancelled" and str(e.get("dispatch")) in by_dispatch:
            row = by_dispatch[str(e["dispatch"])]
            row["ended"] = True
            row["outcome"] = "timeout" if e.get("reason") == "timebox_expired" else "failure"
    status, finished_at = _status(entries)
    return RunTrace(
        run_id=run_id,
        composition_id=str(started.get("composition", "")),
        pattern_id=started.get("pattern"),
        intent_action=started.get("intent_action"),
        intent_domain=started.get("intent_domain"),
        status=status,
        started_at=int(started["at"]),
        finished_at=finished_at,
        # a step still in flight (an unfinished run) has no outcome yet: left out
        steps=tuple(
            StepTrace(**{k: v for k, v in row.items() if k != "ended"})
            for row in steps
            if row["ended"]
        ),
    )


@dataclass(frozen=True, slots=True)
class TraceLoad:
    """Every readable run's trace, and how many runs were skipped (broken chains)."""

    traces: tuple[RunTrace, ...]
    skipped: int = 0
    skipped_runs: tuple[str, ...] = field(default=())


def load_traces(state: State) -> TraceLoad:
    """Traces of every workflow run under ``state``, sorted by ``(started_at, run_id)``.

    A run whose ledger does not verify (or cannot be read) is skipped and counted:
    planning must never learn from evidence that was tampered with.
    """
    store = WorkflowStore(state)
    traces: list[RunTrace] = []
    skipped: list[str] = []
    for run_id in store.workflow_ids():
        path = store.runs.ledger_path(run_id)
        check = verify(path)
        if not check.ok:
            skipped.append(run_id)
            continue
        try:
            entries, _ = read_entries(path)
            traces.append(trace_from_entries(run_id, entries))
        except (UsageError, KeyError, ValueError, TypeError):
            skipped.append(run_id)
    traces.sort(key=lambda t: (t.started_at, t.run_id))
    return TraceLoad(tuple(traces), len(skipped), tuple(skipped))
