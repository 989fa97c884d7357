"""``librarian query INTENT``: the six-stage query pipeline from the command line.

On a TTY, stderr shows each stage live (status, time, note); then stdout gets the
ranked files with their citations and stderr the diagnostic report. ``--json``
prints one document: the response, every stage's run, the degradations, the
capabilities found and the diagnostic report.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from ..options import Option
from ..requests import QUERY_OPTIONS, QueryRequest
from ._common import (
    err_console,
    json_mode,
    out_console,
    print_json,
    resolve_repo,
)
from .options import REPO, cli_rows, typer_command

if TYPE_CHECKING:  # the pipeline pulls in the index and numpy: import it on use
    from ..query.pipeline import PipelineResult
    from ..query.report import PipelineDiagnosticReport, ProgressReporter
    from ..query.types import CancellationToken, QueryDepth

__all__ = ["QUERY_CLI", "register", "render_report", "render_results", "run_query_cmd"]

_STATUS_STYLE = {
    "pending": "dim",
    "running": "yellow",
    "completed": "green",
    "skipped": "cyan",
    "failed": "bold red",
    "cancelled": "magenta",
}


def report_table(report: PipelineDiagnosticReport) -> Table:
    table = Table(
        title=f"query {report.query_id} — {report.overall_status}, "
        f"{report.progress_percent}% — {report.total_duration_ms} ms",
        title_justify="left",
        show_edge=False,
    )
    table.add_column("stage")
    table.add_column("status")
    table.add_column("ms", justify="right")
    table.add_column("output")
    table.add_column("notes")
    for s in report.stages:
        style = _STATUS_STYLE.get(s.status, "")
        notes = [*s.warnings, *s.notes]
        if s.error is not None:
            notes.insert(0, f"{s.error.code}: {s.error.message}")
        table.add_row(
            s.stage,
            f"[{style}]{s.status}[/]" if style else s.status,
            "" if s.duration_ms is None else str(s.duration_ms),
            s.output_summary or "",
            "; ".join(notes[-3:]),
        )
    return table


def render_results(result: PipelineResult, console: Console) -> None:
    """The ranked files with citations (stdout)."""
    response = result.response
    if response is None:
        console.print(f"no result: the query was {result.status}.", markup=False)
        return
    if not response.packs:
        console.print("no matching files.", markup=False)
    for pack in response.packs:
        console.print(f"{pack.rank:>2}. {pack.path}  [{pack.score}]", markup=False)
        for cite in pack.citations:
            console.print(f"      {cite}", markup=False)
        if pack.reasons:
            console.print(f"      why: {'; '.join(pack.reasons)}", markup=False)
    console.print(f"confidence {response.confidence}/1000", markup=False)


def render_report(result: PipelineResult, console: Console) -> None:
    """The diagnostic report, degradations and dropped candidates (stderr)."""
    console.print(report_table(result.report))
    for trace in result.traces:
        console.print(f"  {trace}", markup=False, highlight=False)
    if result.response is not None:
        shown: set[str] = set()
        for d in result.response.defeated:
            if d.path not in shown:
                shown.add(d.path)
                console.print(f"  dropped {d.path}: {d.reason} ({d.detail})", markup=False)
    for run in result.runs:
        if run.error is not None and run.status == "failed":
            console.print(
                f"  {run.stage} failed: {run.error.root_cause}; "
                + "; ".join(run.error.suggestions),
                markup=False,
            )


@contextmanager
def _live(reporter: ProgressReporter, enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    console = err_console()
    with Live(
        report_table(reporter.get_status()), console=console, transient=True, refresh_per_second=12
    ) as live:
        unsubscribe = reporter.subscribe(lambda report: live.update(report_table(report)))
        try:
            yield
        finally:
            unsubscribe()


@contextmanager
def _cancel_on_interrupt(token: CancellationToken) -> Iterator[None]:
    """Ctrl-C cancels the query cooperatively, so the report shows where it stopped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda _sig, _frame: token.cancel("interrupted (Ctrl-C)"))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: ``librarian query``'s options: the request's, then those of the command itself
QUERY_CLI: tuple[Option, ...] = cli_rows(
    QUERY_OPTIONS,
    (
        REPO,
        Option("as_json", "flag", "Print one JSON document on stdout.", False, flags=("--json",)),
        Option("fmt", "text", "Output format; `--format json` is `--json`.", flags=("--format",)),
    ),
)


def register(app: typer.Typer) -> None:
    """Register ``librarian query`` on ``app``."""
    app.command("query")(
        typer_command(
            QUERY_CLI,
            run_query_cmd,
            name="query_cmd",
            doc="Ranked files with citations for an intent, with per-stage diagnostics.",
        )
    )


def run_query_cmd(**values: Any) -> int:
    """``librarian query`` after its options are parsed (``values`` by the names of
    :data:`QUERY_CLI`); returns the exit code."""
    opts = {row.name: values.get(row.name, row.default) for row in QUERY_CLI}
    as_json = json_mode(opts["as_json"], opts["fmt"])
    from ..api import Librarian
    from ..query.report import ProgressReporter
    from ..query.types import STAGE_NAMES, CancellationToken, LibrarianQuery, query_id_for

    request = QueryRequest(
        opts["intent"],
        depth=opts["depth"],
        limit=opts["limit"],
        budget=opts["budget"],
        as_of=int(time.time()) if opts["as_of"] is None else opts["as_of"],
        semantic=opts["semantic"],
        llm=opts["llm"],
        summarize=opts["summarize"],
    )
    lib = Librarian(resolve_repo(opts["repo"]))
    # the live report echoes the intent: show it as the pipeline will see it
    shown = lib.gate.clean(request.intent, surface="query", kind="intent")
    depth = cast("QueryDepth", request.depth)
    query = LibrarianQuery(shown, depth, request.limit, request.as_of or 0, request.budget)
    reporter = ProgressReporter(query_id_for(query), shown, STAGE_NAMES)
    cancel = CancellationToken()
    with (
        lib,
        _cancel_on_interrupt(cancel),
        _live(reporter, enabled=not as_json and sys.stderr.isatty()),
    ):
        result = lib.run_query(request, reporter=reporter, cancel=cancel).pipeline
    if as_json:
        print_json({"ok": result.response is not None, **result.to_dict()})
    else:
        render_results(result, out_console())
        render_report(result, err_console())
    return 0 if result.response is not None else 8
