"""``librarian index [PATH] [--json] [--watch]`` and ``librarian map [--budget N]``.

* ``index`` builds or updates ``.librarian/index.db`` (only changed files are
  parsed); a progress bar on a TTY, one summary line otherwise; ``--json`` prints
  the run's stats; ``--watch`` then keeps re-indexing saved files until Ctrl-C
  or SIGTERM (which stops it within about a second, leaving a valid index).
* ``map`` prints the ranked repository map fitted to a hard token budget.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import LibrarianError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    err_console,
    fail,
    json_mode,
    print_json,
    resolve_repo,
)
from ._signals import exit_later, exit_now
from .index_run import index_and_print

if TYPE_CHECKING:
    from ..api import Librarian
    from ..index.indexer import UpdateResult


def register(app: typer.Typer) -> None:
    """Register this module's commands on ``app``."""
    app.command("index")(index_cmd)
    app.command("map")(map_cmd)


def index_cmd(
    path: Path = typer.Argument(Path(), help="Repository root (default: the current directory)."),
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
    watch: bool = typer.Option(False, "--watch", help="Keep re-indexing files as they are saved."),
    background: bool = typer.Option(
        False, "--background", hidden=True, help="Finish a partial index quietly, at low priority."
    ),
) -> None:
    """Build or update the index (symbols, references, imports, chunks, graphs)."""
    as_json = json_mode(as_json, fmt)
    if background:
        _finish_in_background(path)
        return
    if not watch:
        _index(path, as_json=as_json)
        return
    stop = _stop_on_sigterm()
    try:
        _watch(_index(path, as_json=as_json), stop, quiet=as_json)
    finally:
        if stop.is_set():
            # SIGTERM: the index is written and unlocked by now (the unwinding above);
            # skip the interpreter's teardown, which takes a second or more with the
            # parser and tokenizer tables loaded
            exit_now(128 + signal.SIGTERM)


def _index(path: Path, *, as_json: bool) -> Librarian:
    """Index ``path`` with a progress bar (or stage traces) and print the summary."""
    try:
        return index_and_print(path, as_json=as_json)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None


def _finish_in_background(path: Path) -> None:
    """What ``compose`` starts after answering from a partial index (``index/background.py``).

    Quiet on stdout; notes and errors go to stderr, which the starter sends to
    ``.librarian/index.log``.
    """
    from ..api import Librarian

    with contextlib.suppress(OSError):
        os.nice(10)
    try:
        stats = Librarian(resolve_repo(path)).index()
    except LibrarianError as exc:
        sys.stderr.write(f"background index: {exc.code}: {exc.message}\n")
        raise typer.Exit(1) from None
    for note in stats.notes:
        sys.stderr.write(f"background index: {note}\n")


def _stop_on_sigterm() -> threading.Event:
    """Make SIGTERM stop ``index --watch`` promptly; the event is set when it arrives.

    The handler does what the CLI's own does (raise ``SystemExit`` to unwind a
    re-index in progress, and end the process a second later if that exception is
    swallowed, see ``_signals.py``), and also sets the event, which the watch loop
    polls every 50 ms: the file watcher's native wait catches the exception a
    signal raises and would otherwise report a plain end (exit 0).
    """
    stop = threading.Event()

    def on_sigterm(signum: int, _frame: object) -> None:
        stop.set()
        exit_later(128 + signum)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)
    return stop


def _watch(lib: Librarian, stop: threading.Event, *, quiet: bool) -> None:
    console = err_console()
    if not quiet:
        console.print(f"watching {lib.root} (Ctrl-C to stop)", markup=False, highlight=False)

    def show(result: UpdateResult) -> None:
        if not quiet:
            console.print(
                f"re-indexed {len(result.changed)}, removed {len(result.removed)}",
                markup=False,
                highlight=False,
            )

    try:
        lib.watch(on_update=show, stop=stop)
    except LibrarianError as exc:
        raise fail(exc, as_json=quiet) from None


def map_cmd(
    budget: int = typer.Option(1024, "--budget", min=1, help="Hard token budget of the map."),
    repo: Path = REPO_OPTION,
    as_json: bool = JSON_OPTION,
    fmt: str | None = FORMAT_OPTION,
) -> None:
    """Print the ranked repository map (top files and their signatures) under a budget."""
    as_json = json_mode(as_json, fmt)
    from ..api import Librarian

    try:
        with Librarian(resolve_repo(repo)) as lib:
            repo_map = lib.repo_map(budget)
    except LibrarianError as exc:
        raise fail(exc, as_json=as_json) from None
    if as_json:
        print_json(
            {
                "ok": True,
                "budget": budget,
                "tokens": repo_map.tokens,
                "tokenizer": repo_map.tokenizer,
                "files": list(repo_map.files),
                "redactions": repo_map.redactions,
                "text": repo_map.text,
            }
        )
    else:
        typer.echo(repo_map.text, nl=False)
