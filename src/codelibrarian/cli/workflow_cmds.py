"""``librarian runs start | next | submit | status | resume | approve | reject | verify``.

Workflow runs are runs of the ``runs`` group (``runs list`` and ``runs show`` are
in ``pack_cmds`` and show workflow runs too). An agent drives a run with
``start`` → ``next`` → ``submit`` → ``next`` ...; ``--provider`` lets a model work
it unattended. Every command takes ``--json``. Exit codes: those of
``errors.EXIT_CODES`` (2 bad input, 10 unknown run, 12 a ledger that cannot be
trusted), and ``verify`` exits 1 when the chain or a stored output fails.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import LibrarianError, UsageError
from ._common import JSON_OPTION, REPO_OPTION, fail, out_console, print_json, resolve_repo
from .pack_cmds import runs_app

if TYPE_CHECKING:
    from ..api import Librarian
    from ..execution.report import RunView

__all__ = ["register"]

NOTE_OPTION = typer.Option(None, "--note", help="Why (kept beside the ledger, not in it).")


def register(app: typer.Typer) -> None:
    """The commands join the ``runs`` group registered by ``pack_cmds``."""
    runs_app.command("start")(start_cmd)
    runs_app.command("next")(next_cmd)
    runs_app.command("submit")(submit_cmd)
    runs_app.command("status")(status_cmd)
    runs_app.command("resume")(resume_cmd)
    runs_app.command("approve")(approve_cmd)
    runs_app.command("reject")(reject_cmd)
    runs_app.command("verify")(verify_cmd)


def _open(repo: Path) -> Librarian:
    from ..api import Librarian

    return Librarian(resolve_repo(repo))


def _act(repo: Path, as_json: bool, call: Callable[[Librarian], RunView]) -> None:
    """Open the workspace, make one run call, print the run's view (errors: exit codes)."""
    try:
        with _open(repo) as lib:
            view = call(lib)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    print_view(view, as_json)


def _say(text: str) -> None:
    out_console().print(text, markup=False, highlight=False)


def print_view(view: RunView, as_json: bool) -> None:
    if as_json:
        print_json(view.to_dict())
        return
    _say(
        f"run {view.run_id} · {view.composition} · {view.status}"
        + (f" ({view.reason})" if view.reason else "")
    )
    _say(
        f"{view.dispatched} dispatched, {view.results} results, {view.tokens} tokens"
        + (
            f" · waiting until {view.wait_until} (epoch ms)"
            if view.wait_until and not view.pending
            else ""
        )
    )
    if view.already_recorded:
        _say("that output was already recorded; nothing changed")
    if view.awaiting:
        a = view.awaiting
        _say(f"awaiting a human: {a['kind']} at {a['node']} ({a['reason']})")
    for p in view.pending:
        _say(
            f"  waiting for the {p['role']} agent: {p['step']} ({p['primitive']}, attempt "
            f"{p['attempt']}) · context {p['context_uri']} ({p['context_tokens']} tokens)"
        )
    _say(f"next: {view.next_command}")


def start_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
    composition: str = typer.Argument(
        ..., help="A composition id, a preset name, or an LCL program file (.toml/.json)."
    ),
    task: str = typer.Argument(..., help="What the run is for."),
    agent: bool = typer.Option(
        False, "--agent", help="The calling agent works the agent steps (the default)."
    ),
    provider: str | None = typer.Option(
        None, "--provider", help="A provider (ollama, claude, ...) works them: unattended."
    ),
    approve: bool = typer.Option(
        False, "--approve", help="Approve a productive or unrestricted composition."
    ),
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Start a workflow run and work it until it needs the agent, a human, or ends."""
    if agent and provider:
        raise fail(UsageError("give --agent or --provider, not both"), as_json=as_json)
    _act(
        repo,
        as_json,
        lambda lib: lib.run_start(composition, task, provider=provider, approve=approve),
    )


def next_cmd(
    run: str = typer.Argument(..., help="Run id."),
    context: bool = typer.Option(
        False, "--context", help="Print each step's context pack too (it is long)."
    ),
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """The steps waiting for you: instructions, input, output schema, context pack."""
    try:
        with _open(repo) as lib:
            view, docs = lib.run_next(run)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json({**view.to_dict(), "steps": docs})
        return
    print_view(view, False)
    for d in docs:
        _say("")
        _say(f"## {d['step']} — {d['name']} ({d['role']}, attempt {d['attempt']})")
        _say(d["instructions"])
        _say(f"input: {json.dumps(d['input'], ensure_ascii=False)}")
        required = d["output_schema"].get("required", [])
        _say(f"output: a JSON object with {', '.join(required) or 'the schema fields'}")
        for c in d.get("postconditions", []):
            _say(
                f"  must hold: {c['when']}" + (f" ({c['description']})" if c["description"] else "")
            )
        for reason in d.get("previous_violations", []):
            _say(f"  last attempt was rejected: {reason}")
        if d.get("degraded"):
            _say(f"  (handed to you because {d['degraded']})")
        ctx = d["context"]
        _say(f"context: {ctx['uri']} ({ctx['tokens']}/{ctx['budget']} tokens)")
        if context:
            _say(ctx["text"])
        _say(f"submit: {d['submit']}")


def _read_output(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}", hint="Check the path.") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"{path} is not JSON: {exc}", hint="Write one JSON object matching the output schema."
        ) from None


def submit_cmd(
    run: str = typer.Argument(..., help="Run id."),
    step: str = typer.Argument(..., help="The step id (from `runs next`)."),
    output: str = typer.Option(..., "--output", "-o", help="A JSON file, or '-' for stdin."),
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Submit your output for a step; the run checks its contract and goes on."""
    try:
        value = _read_output(output)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    _act(repo, as_json, lambda lib: lib.run_submit(run, step, value))


def status_cmd(
    run: str = typer.Argument(..., help="Run id."),
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Where a workflow run stands (read from its ledger)."""
    _act(repo, as_json, lambda lib: lib.run_status(run))


def resume_cmd(
    run: str = typer.Argument(..., help="Run id."),
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Continue a run after a crash or restart (finished steps are never repeated)."""
    _act(repo, as_json, lambda lib: lib.run_resume(run))


def approve_cmd(
    run: str = typer.Argument(..., help="Run id."),
    note: str | None = NOTE_OPTION,
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Approve what the run waits on (an escalated vote, a checkpoint) and go on."""
    _act(repo, as_json, lambda lib: lib.run_approve(run, note))


def reject_cmd(
    run: str = typer.Argument(..., help="Run id."),
    note: str | None = NOTE_OPTION,
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Reject what the run waits on (the vote fails; a checkpoint ends the run)."""
    _act(repo, as_json, lambda lib: lib.run_reject(run, note))


def verify_cmd(
    run: str = typer.Argument(..., help="Run id."),
    as_json: bool = JSON_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Check the run's hash chain and its stored outputs; exit 1 when they fail."""
    try:
        with _open(repo) as lib:
            result = lib.run_verify(run)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(result.to_dict())
    elif result.ok:
        _say(
            f"run {run}: chain verified ({result.entries} entries, head {result.head[:16]}), "
            f"{result.outputs_checked} outputs match their digests"
        )
        if result.torn_bytes:
            _say(f"a torn last line ({result.torn_bytes} bytes, a crash) is dropped on resume")
    else:
        where = "" if result.broken_at is None else f" at entry {result.broken_at}"
        _say(f"run {run}: NOT verified{where}: {result.reason}")
        for d in result.outputs_bad:
            _say(f"  output of {d} differs from its digest")
    if not result.ok:
        raise typer.Exit(1)
