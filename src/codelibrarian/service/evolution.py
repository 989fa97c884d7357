"""Workspace side of the advisor and of evolution: reading the index, keeping decisions.

* :func:`advise_workspace` builds the advisor's view of the index (paths and
  languages, library imports, definition names) and runs ``planning.advisor``.
* :func:`evolve_workspace` runs ``planning.evolution`` over the workspace's runs
  (or traces given explicitly), remembers the report it showed in
  ``.librarian/evolution/report.json`` and marks each item with its decision.
* :func:`decide_item` approves or rejects one item *of that report*: approving a
  proposal or a mutation writes a preset (``.librarian/presets/<name>.toml``),
  approving a deprecation records it (the planner then stops choosing that
  composition); rejecting records it. ``.librarian/evolution/decisions.json``
  holds ids, kinds, decisions and preset names only. Nothing is ever applied
  without this explicit step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import NotFound, UnverifiedByTrace, UsageError
from ..planning.advisor import Advice, IndexView, advise
from ..planning.evolution import (
    Deprecation,
    EvolutionReport,
    Mutation,
    Proposal,
    evolve,
    preset_table,
)
from .workspace import WorkspaceSession, now_or

if TYPE_CHECKING:
    from ..execution.traces import RunTrace

__all__ = [
    "Decision",
    "EvolutionResult",
    "advise_workspace",
    "decide_item",
    "deprecated_compositions",
    "evolve_workspace",
]

_DIR = "evolution"


def advise_workspace(ws: WorkspaceSession, *, refresh: bool = True) -> Advice:
    """Features and suggested compositions for this workspace's index."""
    from ..techniques.registry import default_library

    ws.ensure_index(refresh=refresh)
    store = ws.open_store()
    files = tuple((f.path, f.language) for f in store.files())
    imports = tuple(
        sorted({(p, spec) for p, spec, _l, resolved in store.import_specs() if not resolved})
    )
    symbols = tuple(sorted({(s.path, s.name) for s in store.symbols()}))
    lib = default_library()
    comps = {cid: (c.name, c.primitives) for cid, c in lib.compositions.items()}
    return advise(IndexView(files, imports, symbols), comps)


@dataclass(frozen=True, slots=True)
class Decision:
    id: str
    kind: str
    decision: Literal["approved", "rejected"]
    preset: str | None = None
    path: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "decision": self.decision, "preset": self.preset}


@dataclass(frozen=True, slots=True)
class EvolutionResult:
    report: EvolutionReport
    status: Mapping[str, str]
    degradations: tuple[UnverifiedByTrace, ...] = field(default=())
    source: str = "run store"

    def to_dict(self) -> dict[str, Any]:
        doc = self.report.to_dict()
        for group in ("proposals", "mutations", "deprecations"):
            for item in doc[group]:
                item["status"] = self.status.get(item["id"], "pending")
        doc["source"] = self.source
        doc["degradations"] = [d.to_dict() for d in self.degradations]
        return doc


def _dir(ws: WorkspaceSession) -> Path:
    return ws.state.dir / _DIR


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.chmod(0o600)
    tmp.replace(path)


def _decisions(ws: WorkspaceSession) -> dict[str, dict[str, Any]]:
    path = _dir(ws) / "decisions.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"cannot read {path.relative_to(ws.root)} ({exc})",
            hint="Fix or delete the file; it only records approvals and rejections.",
        ) from None
    return data if isinstance(data, dict) else {}


def deprecated_compositions(ws: WorkspaceSession) -> tuple[str, ...]:
    """Compositions whose deprecation was approved (the planner leaves them out)."""
    return tuple(
        sorted(
            str(d["composition"])
            for d in _decisions(ws).values()
            if d.get("kind") == "deprecation" and d.get("decision") == "approved"
            and isinstance(d.get("composition"), str)
        )
    )  # fmt: skip


def evolve_workspace(
    ws: WorkspaceSession,
    *,
    as_of: int | None = None,
    traces: Sequence[RunTrace] | None = None,
) -> EvolutionResult:
    """The evolution report over this workspace's runs (or ``traces``), remembered."""
    from ..techniques.registry import default_library
    from .planning import run_traces

    degradations: tuple[UnverifiedByTrace, ...] = ()
    source = "given traces"
    if traces is None:
        traces, degradations = run_traces(ws)
        source = "run store"
    lib = default_library()
    comps = {cid: c.primitives for cid, c in lib.compositions.items()}
    report = evolve(traces, comps, as_of=now_or(as_of))
    ws.state.ensure()
    _write_json(_dir(ws) / "report.json", report.to_dict())
    decided = _decisions(ws)
    status = {i: str(decided[i]["decision"]) for i in report.ids if i in decided}
    return EvolutionResult(report, status, degradations, source)


def _item(data: Mapping[str, Any]) -> Proposal | Mutation | Deprecation:
    kind = data.get("kind")
    if kind == "proposal":
        return Proposal(
            data["id"], data["name"], data["description"], tuple(data["primitives"]),
            tuple(data["retry"]), data["evidence"]["runs"], data["evidence"]["success_per_mille"],
            data["score_per_mille"],
        )  # fmt: skip
    if kind == "mutation":
        return Mutation(
            data["id"], data["composition"], data["mutation"], data["primitive"],
            data["description"], data["evidence"], data["runs"], data["success_per_mille"],
        )  # fmt: skip
    return Deprecation(
        data["id"], data["composition"], data["runs"], data["success_per_mille"],
        data["last_used"], data["reason"],
    )  # fmt: skip


def _shown(ws: WorkspaceSession, item_id: str) -> Proposal | Mutation | Deprecation:
    path = _dir(ws) / "report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(
            "there is no evolution report to decide on",
            hint="Run `librarian evolve` first; approve or reject the ids it shows.",
        ) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path.relative_to(ws.root)} ({exc})") from None
    items = [x for g in ("proposals", "mutations", "deprecations") for x in report.get(g, [])]
    for data in items:
        if data.get("id") == item_id:
            return _item(data)
    ids = ", ".join(str(x.get("id")) for x in items) or "none"
    raise NotFound(
        f"no item {item_id!r} in the last evolution report",
        hint=f"Its ids: {ids}. Run `librarian evolve` again if the runs changed.",
    )


def decide_item(
    ws: WorkspaceSession,
    item_id: str,
    decision: Literal["approved", "rejected"],
    *,
    name: str | None = None,
    force: bool = False,
) -> Decision:
    """Approve (writing a preset) or reject one item of the last report."""
    from .techniques import preset_store

    item = _shown(ws, item_id)
    decided = _decisions(ws)
    kind = type(item).__name__.lower()
    record: dict[str, Any] = {"kind": kind, "decision": decision}
    preset: str | None = None
    path: Path | None = None
    if decision == "approved" and not isinstance(item, Deprecation):
        from ..techniques.lcl.presets import to_toml

        preset = name or (
            item.id if isinstance(item, Proposal) else f"{item.composition}_{item.id}"
        )
        path = preset_store(ws).save_text(preset, to_toml(preset_table(item, preset)), force=force)
        record["preset"] = preset
    if isinstance(item, Deprecation | Mutation):
        record["composition"] = item.composition
    decided[item_id] = record
    _write_json(_dir(ws) / "decisions.json", decided)
    return Decision(item_id, kind, decision, preset, path)
