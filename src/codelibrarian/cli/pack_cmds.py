"""``librarian pack | handoff | runs``: Local Context Packs for agent teams.

* ``pack``     builds (or reuses, or ``--refresh``-es) one agent's pack in a run and
               prints its URI, or the whole result with ``--json``.
* ``handoff``  writes the handoff package from one agent to another.
* ``runs``     ``list`` the runs of the workspace, ``show`` one of them.

Exit codes are those of ``errors.EXIT_CODES`` (9 for an invalid pack or handoff
file, 10 for an unknown run).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import LibrarianError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    fail,
    json_mode,
    out_console,
    print_json,
    resolve_repo,
)

if TYPE_CHECKING:  # the facade pulls in the index and composer: import it on use
    from ..api import Librarian

runs_app = typer.Typer(help="Runs: their packs, handoffs and journal.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Register this module's commands on ``app``."""
    app.command("pack")(pack_cmd)
    app.command("handoff")(handoff_cmd)
    app.add_typer(runs_app, name="runs")


def _open(repo: Path) -> Librarian:
    from ..api import Librarian

    return Librarian(resolve_repo(repo))


def _say(text: str) -> None:
    out_console().print(text, markup=False, highlight=False)


def pack_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
    agent: str = typer.Option(..., "--agent", "-a", help="Planner, Thinker, Implementer, ..."),
    task: str = typer.Option(..., "--task", "-t", help="The goal of the task."),
    acceptance: list[str] = typer.Option(
        [], "--acceptance", help="An acceptance criterion (repeatable)."
    ),
    constraint: list[str] = typer.Option([], "--constraint", help="A constraint (repeatable)."),
    scope: str | None = typer.Option(
        None, "--scope", help="Tiny, Small, Medium or Large (default: from the change)."
    ),
    capability: str | None = typer.Option(
        None,
        "--capability",
        help="fast_code, reasoning_high (default), reasoning_ultra, long_context, cheap_batch.",
    ),
    run: str | None = typer.Option(None, "--run", help="Run id (default: start a new run)."),
    task_id: str | None = typer.Option(None, "--task-id", help="Task id (default: derived)."),
    refresh: bool = typer.Option(
        False, "--refresh", help="Re-fetch the anchors whose file changed."
    ),
    model: str | None = typer.Option(None, "--model", "-m", help="Target model (tokenizer)."),
    files: list[str] = typer.Option([], "--files", "-f", help="Files the task is about."),
    as_of: int | None = typer.Option(None, "--as-of", help="Time, epoch seconds (default: now)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Build an agent's Local Context Pack under its scope and capability budget."""
    as_json = json_mode(as_json, fmt)
    try:
        lib = _open(repo)
        with lib:
            result = lib.pack(
                agent,
                task,
                acceptance=acceptance,
                constraints=constraint,
                scope=scope,
                capability=capability,
                run_id=run,
                task_id=task_id,
                refresh=refresh,
                model=model,
                files=files,
                as_of=int(time.time()) if as_of is None else as_of,
            )
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(result.to_dict())
        return
    p = result.pack
    state = "reused" if result.reused else "refreshed" if refresh else "written"
    _say(result.uri)
    _say(
        f"{state}: {p.agent} {p.scope_class}/{p.model_capability}, "
        f"{p.token_estimate}/{p.budget_tokens} tokens, {len(p.anchors)} anchors, "
        f"ladder stopped after rung {p.ladder.stopped_after} ({p.ladder.stop_reason})"
    )
    if refresh:
        _say(f"refreshed: {', '.join(result.refreshed) or 'none'}")
        if result.missing:
            _say(f"missing: {', '.join(result.missing)}")


def handoff_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
    run: str = typer.Option(..., "--run", help="Run id."),
    source: str = typer.Option(..., "--from", help="The agent handing off."),
    target: str = typer.Option(..., "--to", help="The agent taking over."),
    note: list[str] = typer.Option([], "--note", help="A note (repeatable)."),
    risk: list[str] = typer.Option([], "--risk", help="A risk (repeatable)."),
    evidence: list[str] = typer.Option(
        [], "--evidence", help="Evidence: a URI, a test run, ... (repeatable)."
    ),
    as_of: int | None = typer.Option(None, "--as-of", help="Time, epoch seconds (default: now)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Write a handoff package from one agent to another in a run."""
    as_json = json_mode(as_json, fmt)
    try:
        lib = _open(repo)
        with lib:
            result = lib.handoff(
                run,
                source,
                target,
                notes=note,
                risks=risk,
                evidence=evidence,
                as_of=int(time.time()) if as_of is None else as_of,
            )
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(result.to_dict())
        return
    h = result.package
    _say(result.uri)
    _say(
        f"{h.from_agent} → {h.to_agent}: {len(h.diff_refs)} diff ref(s), "
        f"{len(h.evidence)} evidence, {len(h.risks)} risk(s), {len(h.notes)} note(s)"
    )


@runs_app.command("list")
def runs_list_cmd(
    as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION, repo: Path = REPO_OPTION
) -> None:
    """List the runs of this workspace."""
    as_json = json_mode(as_json, fmt)
    try:
        runs = _open(repo).runs()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json({"runs": [r.model_dump() for r in runs]})
        return
    if not runs:
        _say("no runs yet (start one with `librarian pack --agent A --task ...`)")
    for r in runs:
        _say(f"{r.run_id}  packs: {', '.join(r.agents) or '-'}  handoffs: {len(r.handoffs)}")


@runs_app.command("show")
def runs_show_cmd(
    run: str = typer.Argument(..., help="Run id."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Show one run: packs, handoffs and the journal."""
    as_json = json_mode(as_json, fmt)
    try:
        detail = _open(repo).run(run)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(detail.to_dict())
        return
    _say(f"run {run}")
    for p in detail.packs:
        _say(
            f"  {p.agent}: {detail.summary.context_pack_uri.get(p.agent, '-')} "
            f"({p.scope_class}/{p.model_capability}, {p.token_estimate}/{p.budget_tokens} tokens, "
            f"{len(p.anchors)} anchors)"
        )
    for h in detail.handoffs:
        _say(f"  handoff {h.from_agent} → {h.to_agent}: {len(h.diff_refs)} diff ref(s)")
    if detail.journal:
        _say("")
        _say(detail.journal.rstrip("\n"))
