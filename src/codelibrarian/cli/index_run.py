"""``librarian index`` without typer: the command's work, and a quick path to it.

A second checkout, a branch switch or a CI step runs ``librarian index`` in a fresh
process, where typer, click and one pydantic ``TypeAdapter`` per option cost more
than re-indexing a few changed files. ``quick_index`` runs the plain forms
(``index [PATH] [--json] [--format text|json]``) here; anything else (``--watch``,
``--background``, ``--help``, an unknown or repeated option, a second path)
returns None and the caller goes through typer, which prints its usual messages.
Both paths call ``index_and_print``, so they print the same bytes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._output import json_mode, print_json, progress, resolve_repo, run_reporting

if TYPE_CHECKING:  # the facade pulls in the index: import it on use
    from ..api import Librarian

__all__ = ["index_and_print", "lock_waiter", "parse_index", "quick_index", "stage_tracer"]

_WAIT_NOTE_EVERY_S = 10.0
_STAGE_LABELS = {
    "check": "checking the index",
    "seed": "copying a sibling index",
    "files": "listing files",
    "parse": "parsing",
    "resolve": "resolving imports",
    "derived": "co-change graph",
    "layouts": "span layouts",
}


def parse_index(argv: Sequence[str]) -> dict[str, Any] | None:
    """``index_and_print``'s arguments for ``argv`` (``["index", ...]``), or None when
    the command line is not one this parser is sure to read as typer would."""
    if not argv or argv[0] != "index":
        return None
    path: str | None = None
    as_json = False
    fmt: str | None = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--json":
            if as_json:
                return None
            as_json = True
        elif arg == "--format" or arg.startswith("--format="):
            if fmt is not None:
                return None
            if arg == "--format":
                if i >= len(argv) or argv[i].startswith("-"):
                    return None
                fmt = argv[i]
                i += 1
            else:
                fmt = arg.partition("=")[2]
        elif arg.startswith("-") or path is not None:
            return None  # --watch, --help, an unknown option, a second path, ``--``
        else:
            path = arg
    return {"path": Path(path if path is not None else "."), "as_json": as_json, "fmt": fmt}


def quick_index(argv: list[str]) -> int | None:
    """Run ``librarian index`` here without typer; None when ``argv`` needs typer."""
    parsed = parse_index(argv)
    if parsed is None:
        return None

    def work() -> int:
        as_json = json_mode(parsed["as_json"], parsed["fmt"])
        index_and_print(parsed["path"], as_json=as_json).close()
        return 0

    return run_reporting(argv, work)


def index_and_print(path: Path, *, as_json: bool) -> Librarian:
    """Index ``path`` with a progress bar (or stage traces) and print the summary;
    returns the open facade (``--watch`` goes on with it). Library errors propagate."""
    from ..api import Librarian

    lib = Librarian(resolve_repo(path))
    try:
        with progress("indexing", None, enabled=not as_json) as bar:

            def report_progress(done: int, total: int) -> None:
                bar.update(total=total, completed=done)

            stats = lib.index(
                progress=report_progress,
                on_wait=lock_waiter(),
                on_stage=stage_tracer(bar),
                check=True,
            )
        data: dict[str, Any] = stats.to_dict()
        data["edges"] = lib.edge_counts()
    except BaseException:
        lib.close()
        raise
    if as_json:
        print_json({"ok": True, **data})
    else:
        sys.stdout.write(
            f"indexed {data['files']} files ({data['parsed']} parsed, {data['deleted']} removed): "
            f"{data['symbols']} symbols, {data['chunks']} chunks, "
            f"{len(data['parse_errors'])} parse errors in {data['seconds']:.2f}s\n"
        )
        sys.stdout.flush()
    return lib


def lock_waiter() -> Callable[[Any, float], None]:
    """Tell the user, on stderr, who holds the index while we wait for it."""
    said = [-1.0]

    def waiting(owner: Any, waited: float) -> None:
        if said[0] >= 0 and waited - said[0] < _WAIT_NOTE_EVERY_S:
            return
        said[0] = waited
        who = owner.describe() if owner is not None else "another process"
        sys.stderr.write(f"waiting for the index: {who} is writing it ({waited:.0f}s)\n")
        sys.stderr.flush()

    return waiting


def stage_tracer(bar: Any) -> Callable[[str], None]:
    """Name each index stage on the progress bar; with LIBRARIAN_TRACE=stages, on stderr."""
    trace = "stages" in os.environ.get("LIBRARIAN_TRACE", "").split(",")

    def stage(name: str) -> None:
        bar.update(description=_STAGE_LABELS.get(name, name))
        if trace:
            sys.stderr.write(f"stage {name}\n")
            sys.stderr.flush()

    return stage
