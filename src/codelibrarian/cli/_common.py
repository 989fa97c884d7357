"""Helpers every command module shares: output, errors, progress, options.

Commands print results on stdout (``--json`` prints exactly one JSON document),
diagnostics and explanations on stderr. Progress bars draw only on a TTY. The
helpers that need no typer live in ``_output`` (re-exported here).
"""

from __future__ import annotations

import typer

from ..errors import LibrarianError
from ._output import (
    INTERNAL_ERROR,
    err_console,
    internal_error,
    json_mode,
    keep_librarians,
    open_librarian,
    out_console,
    print_json,
    progress,
    read_input,
    release_librarian,
    report,
    resolve_repo,
    wants_json,
)
from .options import REPO

__all__ = [
    "FORMAT_OPTION",
    "INTERNAL_ERROR",
    "JSON_OPTION",
    "REPO_OPTION",
    "err_console",
    "fail",
    "internal_error",
    "json_mode",
    "keep_librarians",
    "open_librarian",
    "out_console",
    "print_json",
    "progress",
    "read_input",
    "release_librarian",
    "report",
    "resolve_repo",
    "wants_json",
]

REPO_OPTION = typer.Option(REPO.default, *REPO.flags, help=REPO.help)
JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document on stdout.")
FORMAT_OPTION = typer.Option(
    None, "--format", metavar="text|json", help="Output format; `--format json` is `--json`."
)


def fail(error: LibrarianError, *, as_json: bool = False) -> typer.Exit:
    """Report a library error the way the CLI promises and return the Exit to raise."""
    return typer.Exit(report(error, as_json=as_json))
