"""``librarian compose | explain | replay | violations | vitals``: the main job.

* ``compose``    writes a context pack for a task to stdout (or ``-o FILE``); the
                 explanation goes to stderr with ``--explain``.
* ``explain``    shows a recorded decision (ids, kinds, lanes, reasons; no paths).
* ``replay``     re-runs a recorded decision and says whether it is reproduced.
* ``violations`` records and lists violations the policy lane brings back.
* ``vitals``     shows workspace vitals and records test/lint status.

Exit codes are those of ``errors.EXIT_CODES``; ``replay`` also exits 1 when the
decision is not reproduced (``inputs_changed`` or ``diverged``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import LibrarianError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    fail,
    json_mode,
    open_librarian,
    print_json,
    resolve_repo,
)
from .compose_run import COMPOSE_CLI, run_compose
from .options import typer_command

if TYPE_CHECKING:  # the facade pulls in the index and composer: import it on use
    from ..api import Librarian

violations_app = typer.Typer(help="Record and list violations (the policy lane brings them back).")
vitals_app = typer.Typer(help="Workspace vitals: pressure, pulse, oxygen.")


def register(app: typer.Typer) -> None:
    """Register this module's commands on ``app``."""
    app.command("compose")(compose_cmd)
    app.command("explain")(explain_cmd)
    app.command("replay")(replay_cmd)
    app.add_typer(violations_app, name="violations")
    app.add_typer(vitals_app, name="vitals")


def _open(repo: Path) -> Librarian:
    lib: Librarian = open_librarian(resolve_repo(repo))
    return lib


compose_cmd = typer_command(
    COMPOSE_CLI,
    run_compose,
    name="compose_cmd",
    doc="Compose a context pack for TASK under a hard token budget.",
)


def explain_cmd(
    decision_id: str = typer.Argument(..., help="A decision id (from compose --format json)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Explain a recorded decision: lanes, verdicts with reasons, redactions, locate stages."""
    as_json = json_mode(as_json, fmt)
    try:
        data = _open(repo).explain(decision_id)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(data)
        return
    out = [
        f"decision {data['decision_id']} ({data['trigger']}, as_of {data['as_of']})",
        f"{data['tokens']}/{data['budget']} tokens, {data['format']}, {data['tokenizer']}"
        + (", cache hit" if data["cache_hit"] else ""),
        "lanes: " + ", ".join(f"{k} {v}" for k, v in data["lane_tokens"].items()),
        "selected:",
    ]
    out += [_verdict_line(v) for v in data["selected"]]
    out.append("rejected:")
    out += [_verdict_line(v) for v in data["rejected"]]
    for r in data["redactions"]:
        rules = ", ".join(f"{k}={n}" for k, n in sorted(r["rules"].items()))
        out.append(f"secret_redacted: {r['id']} {r['lane']}/{r['kind']} {r['spans']} ({rules})")
    out += [f"locate {st['stage']}: {st['summary']}" for st in data["locate"]]
    sys.stdout.write("\n".join(out) + "\n")


def _verdict_line(v: dict[str, Any]) -> str:
    detail = f" ({v['detail']})" if v.get("detail") else ""
    return (
        f"  #{v['rank']} {v['id']} {v['lane']}/{v['kind']} score {v['score']} "
        f"~{v['token_estimate']} tok {v['reason']}{detail}"
    )


def replay_cmd(
    decision_id: str = typer.Argument(..., help="A decision id."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Re-run a recorded decision without cache: identical, inputs changed, or diverged."""
    as_json = json_mode(as_json, fmt)
    try:
        lib = _open(repo)
        report = lib.replay(decision_id)
        lib.close()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(report.to_dict())
    else:
        label = {
            "identical": "identical",
            "inputs_changed": "inputs changed",
            "diverged": "DETERMINISM FAILURE (diverged)",
        }[report.status]
        lines = [f"{decision_id}: {label}"] + [f"  {d}" for d in report.differences]
        sys.stdout.write("\n".join(lines) + "\n")
    if not report.ok:
        raise typer.Exit(1)


@violations_app.command("add")
def violations_add_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
    rule: str = typer.Option(..., "--rule", help="Name of the rule that was broken."),
    message: str = typer.Option("", "--message", "-m", help="What happened."),
    file: str | None = typer.Option(None, "--file", help="File concerned (relative path)."),
    line: int | None = typer.Option(None, "--line", help="Line concerned."),
    severity: str = typer.Option("medium", "--severity", help="low, medium or high."),
    as_of: int | None = typer.Option(None, "--as-of", help="Epoch seconds (default: now)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Record a violation."""
    as_json = json_mode(as_json, fmt)
    try:
        v = _open(repo).add_violation(
            rule, message, file=file, line=line, severity=severity, as_of=as_of
        )
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(v.to_dict())
    else:
        sys.stdout.write(f"recorded {v.id}: {v.render()}\n")


@violations_app.command("list")
def violations_list_cmd(
    as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION, repo: Path = REPO_OPTION
) -> None:
    """List recorded violations, oldest first."""
    as_json = json_mode(as_json, fmt)
    try:
        items = _open(repo).violations()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json([v.to_dict() for v in items])
        return
    if not items:
        sys.stdout.write("no violations recorded\n")
    for v in items:
        sys.stdout.write(f"{v.id} {v.render()} (recorded_at {v.recorded_at})\n")


@vitals_app.command("show")
def vitals_show_cmd(
    as_of: int | None = typer.Option(None, "--as-of", help="Epoch seconds (default: now)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Show pressure, pulse and oxygen."""
    as_json = json_mode(as_json, fmt)
    try:
        snap = _open(repo).vitals(as_of=as_of)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    data = snap.to_dict()
    if as_json:
        print_json(data)
        return
    sys.stdout.write(
        f"pressure {data['pressure']} ({data['changed_lines']} uncommitted lines)\n"
        f"pulse    {data['pulse']} ({data['pulse_per_minute']} saves/min)\n"
        f"oxygen   {data['oxygen']}/1000 (tests {data['tests']}, lint {data['lint']})\n"
    )


@vitals_app.command("record")
def vitals_record_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
    tests: str | None = typer.Option(None, "--tests", help="pass or fail"),
    lint: str | None = typer.Option(None, "--lint", help="pass or fail"),
    as_of: int | None = typer.Option(None, "--as-of", help="Epoch seconds (default: now)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Record the last test and/or lint status (feeds oxygen)."""
    as_json = json_mode(as_json, fmt)
    try:
        rec = _open(repo).record_vitals(tests=tests, lint=lint, as_of=as_of)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    data = {"tests": rec.tests, "lint": rec.lint, "recorded_at": rec.recorded_at}
    if as_json:
        print_json(data)
    else:
        sys.stdout.write(f"tests {rec.tests}, lint {rec.lint}\n")
