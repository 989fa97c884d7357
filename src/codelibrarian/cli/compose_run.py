"""``librarian compose`` without typer: the command's work, and a quick path to it.

Agents call ``librarian compose TASK --budget N`` in a loop, each call a fresh
process. Going through typer costs that process the import of typer and click and,
when the options are parsed, one pydantic ``TypeAdapter`` per option (about a third
of a second on a 2-core machine). ``run_compose`` is the command itself (the typer
command in ``compose_cmds`` calls it), and ``quick_compose`` runs it on a command
line it fully understands: the task and the command's options, each given as
``--opt VALUE``, ``--opt=VALUE`` or ``-o VALUE``, with well-formed numbers. Anything
else (``--help``, an unknown or repeated option, a missing or bad value, ``--``)
returns None and the caller goes through typer, which prints its usual messages.
Both paths run the same code on the same values, so they print the same bytes.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LibrarianError, UsageError
from ._output import (
    err_console,
    open_librarian,
    progress,
    read_input,
    release_librarian,
    report,
    resolve_repo,
    run_reporting,
)

if TYPE_CHECKING:  # the facade pulls in the index and composer: import it on use
    from ..api import ComposeResult, Librarian

__all__ = ["parse_compose", "quick_compose", "run_compose"]

#: options that take a value: spelling -> parameter of ``run_compose``
_VALUED = {
    "--budget": "budget",
    "-b": "budget",
    "--model": "model",
    "-m": "model",
    "--base": "base",
    "--diff": "diff",
    "--files": "files",
    "-f": "files",
    "--format": "fmt",
    "--output": "output",
    "-o": "output",
    "--as-of": "as_of",
    "--event": "event",
    "--role": "role",
    "--repo": "repo",
    "-C": "repo",
}
#: flags: spelling -> parameter
_FLAGS = {
    "--explain": "explain",
    "--verbose": "verbose",
    "-v": "verbose",
    "--dry-run": "dry_run",
    "--reveal": "reveal",
    "--json": "as_json",
    "--no-cache": "no_cache",
}
_INTS = frozenset({"budget", "as_of"})
_PATHS = frozenset({"diff", "output", "repo"})


def _int(text: str) -> int | None:
    """``text`` as click reads an int option, or None when it is not plainly one."""
    body = text[1:] if text[:1] in "+-" else text
    return int(text) if body.isascii() and body.isdigit() else None


def parse_compose(argv: Sequence[str]) -> dict[str, Any] | None:
    """``run_compose``'s arguments for ``argv`` (``["compose", TASK, ...]``), or None
    when the command line is not one this parser is sure to read as typer would."""
    if len(argv) < 2 or argv[0] != "compose":
        return None
    args: dict[str, Any] = {}
    files: list[str] = []
    task: str | None = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            if task is not None or arg == "-":
                return None  # a second positional: typer reports it
            task = arg
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FLAGS and not eq:
            key = _FLAGS[name]
            if key in args:
                return None
            args[key] = True
            continue
        key = _VALUED.get(name, "")
        if not key:
            return None  # --help, an unknown option, -b8000 and the like
        if not eq:
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        if key == "files":
            files.append(value)
            continue
        if key in args:
            return None
        if key in _INTS:
            number = _int(value)
            if number is None:
                return None
            args[key] = number
        else:
            args[key] = Path(value) if key in _PATHS else value
    if task is None:
        return None
    if files:
        args["files"] = tuple(files)
    return {"task": task, **args}


def quick_compose(argv: list[str]) -> int | None:
    """Run ``librarian compose`` here without typer; None when ``argv`` needs typer."""
    parsed = parse_compose(argv)
    if parsed is None:
        return None
    return run_reporting(argv, lambda: run_compose(**parsed))


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


def run_compose(
    task: str,
    *,
    budget: int | None = None,
    model: str | None = None,
    base: str | None = None,
    diff: Path | None = None,
    files: Sequence[str] = (),
    fmt: str | None = None,
    explain: bool = False,
    verbose: bool = False,
    dry_run: bool = False,
    reveal: bool = False,
    output: Path | None = None,
    as_json: bool = False,
    as_of: int | None = None,
    event: str = "manual",
    role: str | None = None,
    no_cache: bool = False,
    repo: Path = Path(),
) -> int:
    """``librarian compose`` after its options are parsed; returns the exit code
    (library errors are reported here, on stdout as JSON or on stderr)."""
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
        lib: Librarian = open_librarian(resolve_repo(repo))
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
        from ..api import after_reply

        after_reply(lambda: release_librarian(lib))  # a resident server: after its reply
    except LibrarianError as exc:
        return report(exc, as_json=as_json)
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
        return 0
    if result.format == "json":
        import json

        payload = json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    else:
        payload = result.text if result.text.endswith("\n") else result.text + "\n"
    if output is not None:
        try:
            output.write_text(payload, encoding="utf-8")
        except OSError as exc:
            return report(
                UsageError(f"cannot write {output}: {exc.strerror or exc}"), as_json=as_json
            )
        err.print(
            f"wrote {result.tokens}/{result.budget} tokens to {output} "
            f"(decision {result.decision_id}{', cache hit' if result.cache_hit else ''})",
            markup=False,
            highlight=False,
        )
    else:
        sys.stdout.write(payload)
    return 0


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
