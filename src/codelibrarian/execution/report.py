"""What a run looks like to its readers: status, the trace tree, the chain check.

All built from the run's plan and ledger entries, so ``runs status`` and ``runs
show`` read nothing else (and never need the private files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..techniques.tree import Node, OperatorNode, Step
from .plan import RunPlan

__all__ = ["RunVerification", "RunView", "trace_tree"]


@dataclass(frozen=True, slots=True)
class RunView:
    """Where a workflow run stands (what ``runs status`` and ``run_status`` print)."""

    run_id: str
    composition: str
    status: str
    reason: str
    mode: str
    provider: str | None
    stratum: str
    started_at: int | None
    finished_at: int | None
    tokens: int
    dispatched: int
    results: int
    pending: tuple[Mapping[str, Any], ...] = ()
    awaiting: Mapping[str, Any] | None = None
    wait_until: int | None = None
    outputs: Mapping[str, Any] = field(default_factory=dict)
    already_recorded: bool = False

    @property
    def next_command(self) -> str:
        if self.status == "awaiting_human":
            return f"librarian runs approve {self.run_id} [--note ...] (or runs reject)"
        if self.pending:
            return f"librarian runs next {self.run_id}"
        if self.status == "running":
            return f"librarian runs resume {self.run_id}"
        return f"librarian runs show {self.run_id}"

    def to_dict(self, *, outputs: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "run_id": self.run_id,
            "composition": self.composition,
            "status": self.status,
            "reason": self.reason,
            "mode": self.mode,
            "provider": self.provider,
            "stratum": self.stratum,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "tokens": self.tokens,
            "dispatched": self.dispatched,
            "results": self.results,
            "pending": [dict(p) for p in self.pending],
            "awaiting": None if self.awaiting is None else dict(self.awaiting),
            "wait_until": self.wait_until,
            "next": self.next_command,
        }
        if self.already_recorded:
            data["already_recorded"] = True
        if outputs:
            data["outputs"] = dict(self.outputs)
        return data


@dataclass(frozen=True, slots=True)
class RunVerification:
    run_id: str
    ok: bool
    entries: int
    broken_at: int | None
    reason: str
    torn_bytes: int
    outputs_checked: int
    outputs_bad: tuple[str, ...] = ()
    head: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "ok": self.ok,
            "entries": self.entries,
            "broken_at": self.broken_at,
            "reason": self.reason,
            "torn_bytes": self.torn_bytes,
            "outputs_checked": self.outputs_checked,
            "outputs_bad": list(self.outputs_bad),
            "head": self.head,
        }


def _node_id(node: Node) -> str:
    return node.step_id if isinstance(node, Step) else node.node_id


def trace_tree(plan: RunPlan, entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The composition tree with what happened at each node: starts, outcome, timing,
    tokens, and every dispatch of every step (with its attempt and status)."""
    ops: dict[str, dict[str, Any]] = {}
    dispatches: dict[str, list[dict[str, Any]]] = {}
    by_dispatch: dict[str, dict[str, Any]] = {}
    decisions: dict[str, list[str]] = {}
    for e in entries:
        kind = e.get("kind")
        node = str(e.get("node", ""))
        if kind == "operator_start":
            rec = ops.setdefault(node, {"starts": 0, "first_at": e["at"]})
            rec["starts"] += 1
        elif kind == "operator_result":
            rec = ops.setdefault(node, {"starts": 0, "first_at": e["at"]})
            rec.update(status=e["status"], reason=e["reason"], last_at=e["at"])
        elif kind == "primitive_dispatch":
            d = {
                "dispatch": e["dispatch"],
                "attempt": e.get("attempt", 1),
                "at": e["at"],
                "status": "running",
                "duration_ms": None,
                "tokens": 0,
            }
            dispatches.setdefault(str(e["step"]), []).append(d)
            by_dispatch[str(e["dispatch"])] = d
        elif kind == "step_result" and str(e.get("dispatch")) in by_dispatch:
            by_dispatch[str(e["dispatch"])].update(
                status=e["status"], duration_ms=e.get("duration_ms"), tokens=e.get("tokens", 0)
            )
        elif kind == "dispatch_cancelled" and str(e.get("dispatch")) in by_dispatch:
            by_dispatch[str(e["dispatch"])].update(status="cancelled", reason=e.get("reason"))
        elif kind in ("branch_decision", "loop_decision", "retry_decision", "skip_decision"):
            text = {
                "branch_decision": f"branch → {e.get('target')} ({e.get('reason')})",
                "loop_decision": f"iteration {e.get('iteration')}: {e.get('decision')} "
                f"({e.get('reason')})",
                "retry_decision": f"retry: attempt {e.get('attempt')} after {e.get('delay_ms')} ms",
                "skip_decision": f"skipped ({e.get('reason')})",
            }[str(kind)]
            decisions.setdefault(node, []).append(text)
        elif kind in (
            "vote_result",
            "escalation",
            "checkpoint",
            "timebox_expired",
            "budget_refused",
        ):
            decisions.setdefault(node, []).append(f"{kind}: {_summary(e)}")

    def walk(node: Node) -> dict[str, Any]:
        nid = _node_id(node)
        if isinstance(node, Step):
            runs = dispatches.get(nid, [])
            info = plan.steps.get(nid)
            last = runs[-1]["status"] if runs else "not_run"
            return {
                "id": nid,
                "kind": "step",
                "primitive": node.primitive,
                "executor": info.executor if info else "",
                "role": info.role if info else "",
                "status": last,
                "dispatches": runs,
                "tokens": sum(int(r.get("tokens") or 0) for r in runs),
                "duration_ms": sum(int(r.get("duration_ms") or 0) for r in runs),
            }
        assert isinstance(node, OperatorNode)
        rec = ops.get(nid, {})
        first, last = rec.get("first_at"), rec.get("last_at")
        return {
            "id": nid,
            "kind": "operator",
            "operator": node.operator,
            "status": rec.get("status", "running" if rec else "not_run"),
            "reason": rec.get("reason", ""),
            "starts": rec.get("starts", 0),
            "duration_ms": (last - first) if first is not None and last is not None else None,
            "decisions": decisions.get(nid, []),
            "children": [walk(c) for c in node.children],
        }

    return walk(plan.root)


def _summary(e: Mapping[str, Any]) -> str:
    skip = {"seq", "at", "kind", "prev", "hash", "node"}
    return ", ".join(f"{k}={e[k]}" for k in sorted(e) if k not in skip)
