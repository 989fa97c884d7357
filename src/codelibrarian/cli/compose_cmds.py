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

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import LibrarianError, UsageError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    err_console,
    fail,
    json_mode,
    open_librarian,
    print_json,
    progress,
    read_input,
    resolve_repo,
)

if TYPE_CHECKING:  # the facade pulls in the index and composer: import it on use
    from ..api import ComposeResult, Librarian

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


def _verbose_lines(result: ComposeResult, *, reveal: bool) -> list[str]:
    lines = ["selected:"]
    for a in result.artifacts:
        where = ""
        if reveal and a.path:
            where = f" {a.path}" + (f":{a.lines[0]}-{a.lines[1]}" if a.lines else "")
        shrunk = f" shrunk({a.strategy})" if a.shrunk else ""
        lines.append(f"  {a.id} {a.lane}/{a.kind} {a.tokens} tok {a.reason}{shrunk}{where}")
    lines.append("rejected:")
    for r in result.rejected:
        where = f" {r.path}" if reveal and r.path else ""
        detail = f" ({r.detail})" if r.detail else ""
        lines.append(
            f"  {r.id} {r.lane}/{r.kind} ~{r.token_estimate} tok {r.reason}{detail}{where}"
        )
    return lines


def compose_cmd(  # noqa: PLR0917 - typer maps each option to a parameter
    task: str = typer.Argument(..., help="What the agent is about to do."),
    budget: int | None = typer.Option(None, "--budget", "-b", help="Token budget (hard cap)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Target model (tokenizer)."),
    base: str | None = typer.Option(None, "--base", help="Current change = diff from REV."),
    diff: Path | None = typer.Option(None, "--diff", help="Current change = this diff file."),
    files: list[str] = typer.Option([], "--files", "-f", help="Files the task is about."),
    fmt: str | None = typer.Option(
        None, "--format", help="Pack format: markdown, xml, json or plain."
    ),
    explain: bool = typer.Option(False, "--explain", help="Print the explanation to stderr."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every artifact (stderr)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Preview the selection; no pack, no cache, nothing recorded."
    ),
    reveal: bool = typer.Option(
        False, "--reveal", help="Show paths in --verbose / --explain output and JSON rejections."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the pack here."),
    as_json: bool = typer.Option(
        False, "--json", help="Same as --format json: the pack and its metadata as one document."
    ),
    as_of: int | None = typer.Option(
        None, "--as-of", help="Composition time, epoch seconds (default: now)."
    ),
    event: str = typer.Option("manual", "--event", help="Trigger event (manual, file_saved...)."),
    role: str | None = typer.Option(None, "--role", help="Agent role, if any."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the cache."),
    repo: Path = REPO_OPTION,
) -> None:
    """Compose a context pack for TASK under a hard token budget."""
    try:
        if as_json and fmt not in (None, "json"):
            raise UsageError(f"--json and --format {fmt} exclude each other", hint="Give one.")
        fmt = "json" if as_json else fmt
        as_json = fmt == "json"
        if base is not None and diff is not None:
            raise UsageError("--base and --diff exclude each other", hint="Give one of them.")
        from ..api import FORMATS

        if fmt is not None and fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}", hint=f"Use one of: {', '.join(FORMATS)}.")
        if output is not None:
            _check_output(output)
        diff_text = None
        if diff is not None:
            # not stdin: a resident server answering this call has no terminal of its own
            diff_text = read_input(diff, "diff", lenient=True, stdin=False)
        lib = _open(repo)
        now = int(time.time()) if as_of is None else as_of
        with progress("indexing", None) as bar:

            def _tick(done: int, total: int) -> None:
                bar.update(total=total, completed=done)

            result = lib.compose(
                task,
                budget=budget,
                model=model,
                base=base,
                diff_text=diff_text,
                files=tuple(files),
                fmt=fmt,  # type: ignore[arg-type]
                as_of=now,
                agent_role=role,
                use_cache=not no_cache,
                event=event,
                record=not dry_run,
                reveal=reveal,
                progress=_tick,
            )
        lib.close()
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    err = _LazyConsole()  # rich loads only when there is something to say on stderr
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)
    for d in result.degraded:  # said once, on stderr; --format json carries "degraded"
        err.print(f"note: {d.detail}", markup=False, highlight=False)
    if explain or dry_run:
        err.print(result.explain_text(), markup=False, highlight=False)
    if verbose or dry_run or (explain and reveal):
        err.print("\n".join(_verbose_lines(result, reveal=reveal)), markup=False, highlight=False)
    if dry_run:
        return
    if result.format == "json":
        import json

        payload = json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    else:
        payload = result.text if result.text.endswith("\n") else result.text + "\n"
    if output is not None:
        try:
            output.write_text(payload, encoding="utf-8")
        except OSError as exc:
            raise fail(
                UsageError(f"cannot write {output}: {exc.strerror or exc}"), as_json=as_json
            ) from None
        err.print(
            f"wrote {result.tokens}/{result.budget} tokens to {output} "
            f"(decision {result.decision_id}{', cache hit' if result.cache_hit else ''})",
            markup=False,
            highlight=False,
        )
    else:
        sys.stdout.write(payload)


class _LazyConsole:
    """``err_console()``, made on the first ``print``."""

    def __init__(self) -> None:
        self._console: Any = None

    def print(self, *args: Any, **kwargs: Any) -> None:
        if self._console is None:
            self._console = err_console()
        self._console.print(*args, **kwargs)


def _check_output(output: Path) -> None:
    """Refuse an output file that cannot be written, before any work is done."""
    folder = output.parent if str(output.parent) else Path()
    if output.is_dir():
        raise UsageError(f"{output} is a folder", hint="Give a file name to --output.")
    if not folder.is_dir():
        raise UsageError(
            f"cannot write {output}: the folder {folder} does not exist",
            hint="Create the folder first, or write somewhere else.",
        )
    if not os.access(folder, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        raise UsageError(f"cannot write {output}: permission denied", hint="Write elsewhere.")


def explain_cmd(
    decision_id: str = typer.Argument(..., help="A decision id (from compose --format json)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    repo: Path = REPO_OPTION,
) -> None:
    """Explain a recorded decision: lanes, every verdict with its reason, redactions and
    the locate stages."""
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
