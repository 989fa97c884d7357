"""CLI helpers that need no typer: output, errors, progress, the facade.

Split from ``_common`` so the quick compose path (``quick.py``) can use them
without importing typer and pydantic's parameter coercers; ``_common``
re-exports every name.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich loads when something is drawn: a piped compose never draws
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn

from ..errors import LibrarianError, UsageError, exit_code_for

__all__ = [
    "INTERNAL_ERROR",
    "err_console",
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
    "run_reporting",
    "wants_json",
]


def wants_json(argv: list[str]) -> bool:
    """Whether a command line asks for JSON output (for errors raised before parsing)."""
    for i, arg in enumerate(argv):
        if arg in {"--json", "--format=json"}:
            return True
        if arg == "--format" and i + 1 < len(argv) and argv[i + 1] == "json":
            return True
    return False


def json_mode(as_json: bool, fmt: str | None) -> bool:
    """Whether a command prints JSON: ``--json`` or ``--format json`` (``text`` is the default)."""
    if fmt is None:
        return as_json
    choice = fmt.strip().lower()
    if choice not in ("json", "text"):
        raise UsageError(f"unknown --format {fmt!r}", hint="Use --format text or --format json.")
    if as_json and choice == "text":
        raise UsageError("--json and --format text exclude each other", hint="Give one of them.")
    return as_json or choice == "json"


def read_input(path: Path, what: str, *, lenient: bool = False, stdin: bool = True) -> str:
    """The text of a file the user named (``-`` is stdin when ``stdin``). A file that
    cannot be read, or (unless ``lenient``: bad bytes become U+FFFD) is not UTF-8, is
    a usage error."""
    try:
        if stdin and str(path) == "-":
            return sys.stdin.read()
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read the {what} {path}: {exc.strerror or exc}", hint="Check the path."
        ) from None
    try:
        return data.decode("utf-8", errors="replace" if lenient else "strict")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"the {what} {path} is not UTF-8 text (byte {exc.start})", hint="Pass a text file."
        ) from None


def out_console() -> Console:
    from rich.console import Console

    return Console(file=sys.stdout, soft_wrap=True, highlight=False)


def err_console() -> Console:
    from rich.console import Console

    return Console(file=sys.stderr, soft_wrap=True, highlight=False)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def resolve_repo(repo: Path) -> Path:
    root = repo.expanduser().resolve()
    if not root.is_dir():
        raise LibrarianError(
            f"{repo} is not a directory.", hint="Pass an existing folder to --repo."
        )
    return root


#: exit code of an error the library did not expect (a bug): EX_SOFTWARE
INTERNAL_ERROR = 70


def _gated(text: str) -> str:
    """An error text through the secret gate (a config value echoed back may be a key)."""
    from ..gate import SecretGate

    return SecretGate().clean(text, surface="error", kind="message")


class _Kept:
    """``root -> Librarian``, kept between calls by a resident server."""

    libraries: dict[Path, Any] | None = None


def keep_librarians() -> None:
    """Keep one warm ``Librarian`` per repository between calls (resident servers)."""
    if _Kept.libraries is None:
        _Kept.libraries = {}


def open_librarian(root: Path) -> Any:
    """The facade for ``root``: a new one, or a resident server's warm one.

    A kept instance is replaced when the repository's config file changed.
    """
    from ..api import Librarian

    kept_all = _Kept.libraries
    if kept_all is None:
        return Librarian(root).for_one_call()
    kept = kept_all.get(root)
    if kept is not None and not kept.config_changed():
        return kept
    if kept is not None:
        kept.close()
    lib = Librarian(root)
    kept_all[root] = lib
    return lib


def run_reporting(argv: list[str], work: Callable[[], int]) -> int:
    """``work()``'s exit code, for a command run without typer: library errors are
    reported as the CLI promises, Ctrl-C ends with 130, anything else is an internal
    error (JSON on stdout when ``argv`` asks for JSON)."""
    try:
        return work()
    except LibrarianError as exc:
        return report(exc, as_json=wants_json(argv))
    except KeyboardInterrupt:
        sys.stderr.write("\naborted\n")  # as click and ``app.run`` say it
        return 130
    except Exception as exc:
        return internal_error(exc, as_json=wants_json(argv))


def release_librarian(lib: Any) -> None:
    """Done with ``lib`` for this call: a resident server's kept instance releases its
    index connection but keeps its freshness watch for the next call; any other
    instance is closed."""
    kept_all = _Kept.libraries
    if kept_all is not None and any(kept is lib for kept in kept_all.values()):
        lib.release()
    else:
        lib.close()


def report(error: LibrarianError, *, as_json: bool = False) -> int:
    """Report a library error the way the CLI promises; returns its exit code."""
    code = exit_code_for(error)
    message = _gated(error.message)
    hint = _gated(error.hint) if error.hint else error.hint
    if as_json:
        print_json(
            {"ok": False, **error.to_dict(), "message": message, "hint": hint, "exit_code": code}
        )
    else:
        from rich.markup import escape

        console = err_console()
        # escape: messages carry "[budget.total_tokens]"-style keys that rich would eat
        console.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)
        if hint:
            console.print(hint, markup=False, highlight=False)
    return code


def internal_error(exc: BaseException, *, as_json: bool = False) -> int:
    """Report an unexpected exception in one line (the traceback with LIBRARIAN_DEBUG=1)."""
    if os.environ.get("LIBRARIAN_DEBUG"):
        import traceback

        traceback.print_exception(exc)
    message = _gated(f"internal error: {type(exc).__name__}: {exc}")
    hint = "This is a bug: run again with LIBRARIAN_DEBUG=1 and report the traceback."
    if as_json:
        print_json(
            {
                "ok": False,
                "error": "internal_error",
                "message": message,
                "hint": hint,
                "exit_code": INTERNAL_ERROR,
            }
        )
    else:
        sys.stderr.write(f"error: {message}\n{hint}\n")
    return INTERNAL_ERROR


@contextmanager
def progress(description: str, total: int | None, *, enabled: bool = True) -> Iterator[Any]:
    """A rich progress bar on a TTY (rate + ETA); a silent stand-in otherwise.

    Yields an object with ``advance(n=1)`` and ``update(total=...)``.
    """
    if not enabled or not sys.stderr.isatty():
        yield _Silent()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        _rate_column(),
        TimeRemainingColumn(),
        console=err_console(),
        transient=True,
    )
    with bar:
        task = bar.add_task(description, total=total)
        yield _Live(bar, task)


def _rate_column(unit: str = "files") -> ProgressColumn:
    """A column of items per second, e.g. ``212 files/s``."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f} {unit}/s", style="cyan")

    return RateColumn()


class _Silent:
    def advance(self, n: int = 1) -> None:
        return None

    def update(self, **_: Any) -> None:
        return None


class _Live:
    def __init__(self, bar: Progress, task: Any) -> None:
        self._bar = bar
        self._task = task

    def advance(self, n: int = 1) -> None:
        self._bar.advance(self._task, n)

    def update(self, **kwargs: Any) -> None:
        self._bar.update(self._task, **kwargs)
