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
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from ..errors import UsageError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    err_console,
    json_mode,
    out_console,
    print_json,
    resolve_repo,
)

if TYPE_CHECKING:  # the pipeline pulls in the index and numpy: import it on use
    from ..query.pipeline import PipelineResult
    from ..query.report import PipelineDiagnosticReport, ProgressReporter
    from ..query.types import CancellationToken, QueryDepth

__all__ = ["register", "render_report", "render_results"]

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


def register(app: typer.Typer) -> None:
    """Register ``librarian query`` on ``app``."""

    @app.command("query")
    def query_cmd(
        intent: str = typer.Argument(..., help="What you are looking for, in words."),
        *,
        depth: str = typer.Option(
            "L1", "--depth", help="L0 retrieval only; L1..L3 graph hops of expansion."
        ),
        limit: int = typer.Option(10, "--limit", "-n", min=1, max=200, help="Files to return."),
        budget: int | None = typer.Option(
            None, "--budget", min=1, help="Cap on the summed tokens of the cited chunks."
        ),
        as_of: int | None = typer.Option(
            None, "--as-of", help="Epoch seconds recency is measured against (default: now)."
        ),
        semantic: bool = typer.Option(
            False,
            "--semantic/--no-semantic",
            help=(
                "Add dense vectors (needs the embedding model, installed on Linux x86-64;"
                " off by default)."
            ),
        ),
        llm: bool = typer.Option(
            False,
            "--llm",
            help="Discover an LLM provider for reranking (default: only when "
            "LIBRARIAN_LLM_PROVIDER is set).",
        ),
        summary: bool = typer.Option(
            False, "--summary", help="Ask the LLM provider for a short summary."
        ),
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Ranked files with citations for an intent, with per-stage diagnostics."""
        as_json = json_mode(as_json, fmt)
        from ..api import Librarian
        from ..query.report import ProgressReporter
        from ..query.types import (
            DEPTHS,
            STAGE_NAMES,
            CancellationToken,
            LibrarianQuery,
            query_id_for,
        )

        if depth not in DEPTHS:
            raise UsageError(f"unknown depth {depth!r}.", hint="Use --depth L0, L1, L2 or L3.")
        root = resolve_repo(repo)
        qdepth: QueryDepth = depth  # narrowed by the DEPTHS check above
        when = int(time.time()) if as_of is None else as_of
        lib = Librarian(root)
        # the live report echoes the intent: show it as the pipeline will see it
        shown = lib.gate.clean(intent, surface="query", kind="intent")
        query = LibrarianQuery(shown, qdepth, limit, when, budget)
        reporter = ProgressReporter(query_id_for(query), shown, STAGE_NAMES)
        cancel = CancellationToken()
        with (
            lib,
            _cancel_on_interrupt(cancel),
            _live(reporter, enabled=not as_json and sys.stderr.isatty()),
        ):
            result = lib.query(
                intent,
                depth=qdepth,
                limit=limit,
                budget=budget,
                as_of=when,
                semantic=semantic,
                llm=llm,
                summarize=summary,
                reporter=reporter,
                cancel=cancel,
            ).pipeline
        if as_json:
            print_json({"ok": result.response is not None, **result.to_dict()})
        else:
            render_results(result, out_console())
            render_report(result, err_console())
        if result.response is None:
            raise typer.Exit(8)
