"""The imperative shell of Local Context Packs, called by ``Librarian.pack/handoff/runs``.

It reads the clock (only when no ``as_of`` is given), git and the index through
the workspace session it is handed, gathers the candidates exactly as
``compose`` does (the same :class:`~codelibrarian.service.compose.ComposeService`:
the same sources, the same policy engine), and hands them to the pure-ish
assembly in :mod:`.assemble`.

Reuse: a pack already remembered for the agent in the run's ``memory.json``
is returned as it is (``reused=True``) when the goal, the criteria, the
constraints and any explicitly given scope, capability and model match; it
is rebuilt otherwise. ``refresh=True`` re-fetches only the anchors whose file
hash changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..composer.determinism import digest
from ..errors import NotFound
from ..service.workspace import check_text, now_or
from ..tokens import get_tokenizer
from ..workspace.git import head_commit, is_git_repo, working_diff
from .assemble import PackEnv, PackRequest, assemble_pack, refresh_pack
from .budgets import (
    DEFAULT_CAPABILITY,
    ROLE_SCOPE,
    budget_for,
    check_agent,
    check_capability,
    check_scope,
    classify_scope,
)
from .handoff import HandoffPackage, build_handoff, diff_refs, dump_handoff, read_handoff
from .lcp import LocalContextPack
from .runs import ARROW, RunStore, RunSummary, _atomic_write, new_run_id, stamp

if TYPE_CHECKING:
    from ..service.compose import ComposeService
    from ..service.workspace import WorkspaceSession
    from ..workspace.state import State

__all__ = [
    "HandoffResult",
    "PackResult",
    "RunDetail",
    "list_runs",
    "make_handoff",
    "make_pack",
    "show_run",
]


@dataclass(frozen=True, slots=True)
class PackResult:
    """A pack as written (or reused), where it lives and what a refresh changed."""

    pack: LocalContextPack
    text: str
    path: Path
    uri: str
    reused: bool
    refreshed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def run_id(self) -> str:
        return self.pack.run_id

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "agent": self.pack.agent,
            "uri": self.uri,
            "path": str(self.path),
            "reused": self.reused,
            "refreshed": list(self.refreshed),
            "missing": list(self.missing),
            "pack": self.pack.model_dump(mode="json", by_alias=True),
        }


@dataclass(frozen=True, slots=True)
class HandoffResult:
    package: HandoffPackage
    path: Path
    uri: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "path": str(self.path),
            "handoff": self.package.model_dump(mode="json", by_alias=True),
        }


@dataclass(frozen=True, slots=True)
class RunDetail:
    summary: RunSummary
    packs: tuple[LocalContextPack, ...]
    handoffs: tuple[HandoffPackage, ...]
    journal: str

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.summary.model_dump(),
            "packs": [
                {
                    "agent": p.agent,
                    "uri": self.summary.context_pack_uri.get(p.agent),
                    "scope_class": p.scope_class,
                    "model_capability": p.model_capability,
                    "token_estimate": p.token_estimate,
                    "budget_tokens": p.budget_tokens,
                    "anchors": len(p.anchors),
                    "stop_reason": p.ladder.stop_reason,
                    "stopped_after": p.ladder.stopped_after,
                }
                for p in self.packs
            ],
            "handoff_packages": [h.model_dump(mode="json", by_alias=True) for h in self.handoffs],
            "journal": self.journal,
        }


def _norm(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(" ".join(i.split()) for i in items if i and i.strip())


def _reusable(
    pack: LocalContextPack,
    *,
    goal: str,
    acceptance: Sequence[str],
    constraints: Sequence[str],
    scope: str | None,
    capability: str | None,
    model: str | None,
) -> bool:
    return (
        pack.goal == goal
        and tuple(pack.acceptance_criteria) == tuple(acceptance)
        and tuple(pack.constraints) == tuple(constraints)
        and scope in (None, pack.scope_class)
        and capability in (None, pack.model_capability)
        and model in (None, pack.model)
    )


def _journal_pack(store: RunStore, result: PackResult, verb: str) -> None:
    p = result.pack
    extra = ""
    if result.refreshed or result.missing:
        extra = f"; refreshed {len(result.refreshed)} anchor(s), {len(result.missing)} missing"
    store.journal_append(
        p.run_id,
        f"{stamp(p.as_of)} · **{p.agent}** {verb} pack `{result.uri}` ({p.scope_class}/"
        f"{p.model_capability}, {p.token_estimate}/{p.budget_tokens} tokens, "
        f"{len(p.anchors)} anchors; ladder stopped after rung {p.ladder.stopped_after}: "
        f"{p.ladder.stop_reason}{extra})",
        goal=p.goal,
    )


def _decisions(store: RunStore, run_id: str, agent: str) -> tuple[tuple[str, str], ...]:
    folder = store.run_dir(run_id)
    out: list[tuple[str, str]] = []
    for path in sorted(folder.glob(f"handoff/*{ARROW}{agent}.json")):
        out.append((store.rel(path), store.uri(path)))
    # the other agents' packs (the journal is not anchored: packing appends to it,
    # so its hash would be stale the moment the pack is written)
    for path in sorted(folder.glob("context/*.lcp.json")):
        if path.name != f"{agent}.lcp.json":
            out.append((store.rel(path), store.uri(path)))
    return tuple(out)


def make_pack(
    composer: ComposeService,
    agent: str,
    goal: str,
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
    """Build, reuse or refresh ``agent``'s pack in a run (see the module docstring)."""
    check_agent(agent)
    if scope is not None:
        check_scope(scope)
    if capability is not None:
        check_capability(capability)
    lib = composer.ws
    gate = lib.gate
    # what the caller wrote is stored (the pack, the journal) and shown to agents
    goal = gate.clean(" ".join(check_text(goal, "task").split()), surface="lcp", kind="goal")
    acceptance = gate.clean_many(_norm(acceptance), surface="lcp", kind="acceptance")
    constraints = gate.clean_many(_norm(constraints), surface="lcp", kind="constraint")
    now = now_or(as_of)
    files = lib.resolve_files(files)
    store = RunStore(lib.state)
    run = run_id or new_run_id(now, f"{agent}\n{goal}")
    lib.state.ensure()
    if store.has_pack(run, agent):
        existing = store.read_pack(run, agent)
        if refresh:
            lib.ensure_index(refresh=True)
            new, text, refreshed, missing = refresh_pack(
                existing,
                root=lib.root,
                store=lib.open_store(),
                tokenizer=get_tokenizer(existing.model),
                is_sensitive=lib.is_sensitive,
                gate=lib.gate,
            )
            path = store.write_pack(new)
            result = PackResult(new, text, path, store.uri(path), False, refreshed, missing)
            _journal_pack(store, result, "refreshed")
            return result
        if _reusable(
            existing,
            goal=goal,
            acceptance=acceptance,
            constraints=constraints,
            scope=scope,
            capability=capability,
            model=model,
        ):
            path = store.pack_path(run, agent)
            result = PackResult(existing, existing.to_json(), path, store.uri(path), True)
            _journal_pack(store, result, "reused")
            return result
    model = model or lib.config.compose.model
    tokenizer = get_tokenizer(model)
    lib.ensure_index(refresh=True)
    trigger = lib.trigger(
        " ".join((goal, *acceptance)),
        as_of=now,
        event="agent_request",
        files=files,
        model=model,
        agent_role=agent,
    )
    changes = lib.changes(trigger)
    scope = scope or classify_scope(changes) or ROLE_SCOPE[agent]
    capability = capability or DEFAULT_CAPABILITY
    budget = budget_for(scope, capability)
    # a pack carries pointers, not bodies: gather as a full composition would (the
    # sources size their offer by the budget and leave tests out of small ones)
    gather = max(budget, lib.config.budget.total_tokens)
    prep = composer.prepare(trigger, gather)
    index = prep.store
    env = PackEnv(
        root=lib.root,
        tokenizer=tokenizer,
        store=index,
        candidates=prep.candidates,
        excluded=frozenset(ident for ident, _ in prep.outcome.excluded_rules),
        changes=tuple(changes),
        explicit_files=trigger.files,
        files=tuple(sorted(r.path for r in index.files())),
        decisions=_decisions(store, run, agent),
        redacted_artifacts=len(prep.outcome.redactions),
        is_sensitive=lib.is_sensitive,
        gate=lib.gate,
    )
    request = PackRequest(
        agent=agent,
        goal=goal,
        task_id=task_id or f"T-{digest(goal)[:8]}",
        acceptance=acceptance,
        constraints=constraints,
        scope=scope,
        capability=capability,
        budget=budget,
        model=model,
        run_id=run,
        as_of=now,
        keywords=trigger.keywords,
    )
    pack, text = assemble_pack(request, env)
    path = store.write_pack(pack)
    result = PackResult(pack, text, path, store.uri(path), False)
    _journal_pack(store, result, "received")
    return result


def make_handoff(
    lib: WorkspaceSession,
    run_id: str,
    source: str,
    target: str,
    *,
    notes: Sequence[str] = (),
    risks: Sequence[str] = (),
    evidence: Sequence[str] = (),
    as_of: int | None = None,
) -> HandoffResult:
    """Write the ``source -> target`` handoff package of a run and journal it."""
    check_agent(source)
    check_agent(target)
    gate = lib.gate
    notes = gate.clean_many(_norm(notes), surface="handoff", kind="note")
    risks = gate.clean_many(_norm(risks), surface="handoff", kind="risk")
    evidence = gate.clean_many(_norm(evidence), surface="handoff", kind="evidence")
    store = RunStore(lib.state)
    if not store.exists(run_id):
        raise NotFound(
            f"no run {run_id!r}", hint="Start it with `librarian pack --agent A --task ...`."
        )
    now = now_or(as_of)
    pack = store.read_pack(run_id, source) if store.has_pack(run_id, source) else None
    is_git = is_git_repo(lib.root)
    changes = [
        d for d in (working_diff(lib.root) if is_git else ()) if not lib.is_sensitive(d.path)
    ]
    package = build_handoff(
        run_id=run_id,
        source=source,
        target=target,
        as_of=now,
        base_commit=head_commit(lib.root) if is_git else None,
        refs=diff_refs(lib.root, changes),
        pack=pack,
        pack_uri=store.context_pack_uri(run_id, source),
        notes=notes,
        risks=risks,
        evidence=evidence,
    )
    path = store.handoff_path(run_id, source, target)
    _atomic_write(path, dump_handoff(package, str(path)))
    uri = store.uri(path)
    store.journal_append(
        run_id,
        f"{stamp(now)} · **{source} → {target}** handoff `{uri}` ({len(package.diff_refs)} diff "
        f"ref(s), {len(package.evidence)} evidence, {len(package.risks)} risk(s))"
        + (f": {package.notes[0]}" if package.notes else ""),
    )
    return HandoffResult(package, path, uri)


def list_runs(state: State) -> tuple[RunSummary, ...]:
    store = RunStore(state)
    return tuple(store.summary(r) for r in store.run_ids())


def show_run(state: State, run_id: str) -> RunDetail:
    """Everything of one run, every pack and handoff validated on the way."""
    store = RunStore(state)
    summary = store.summary(run_id)
    packs = tuple(store.read_pack(run_id, a) for a in summary.agents)
    folder = store.run_dir(run_id)
    handoffs = tuple(read_handoff(p) for p in sorted(folder.glob("handoff/*.json")))
    try:
        journal = store.journal_path(run_id).read_text(encoding="utf-8")
    except FileNotFoundError:
        journal = ""
    return RunDetail(summary, packs, handoffs, journal)
