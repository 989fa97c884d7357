"""``librarian compose`` without typer: the command's work, and a quick path to it.

Agents call ``librarian compose TASK --budget N`` in a loop, each call a fresh
process. Going through typer costs that process the import of typer and click and,
when the options are parsed, one pydantic ``TypeAdapter`` per option (about a third
of a second on a 2-core machine). ``run_compose`` is the command itself: it builds
the :class:`~codelibrarian.requests.ComposeRequest` (where every value is
checked) and runs it. The typer command (``compose_cmds``) and ``quick_compose``
both call it, and both are derived from one list of options, :data:`COMPOSE_CLI`
(the request's options the CLI spells, then the command's own: ``cli/options.py``).
``quick_compose`` runs it on a command line it fully understands: the task and the
command's options, each given as ``--opt VALUE``, ``--opt=VALUE`` or ``-o VALUE``,
with well-formed numbers. Anything else (``--help``, an unknown or repeated option,
a missing or bad value, ``--``) returns None and the caller goes through typer,
which prints its usual messages.
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
from ..options import Option
from ..requests import COMPOSE_OPTIONS, ComposeRequest
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
from .options import REPO, cli_rows, quick_table

if TYPE_CHECKING:  # the facade pulls in the index and composer: import it on use
    from ..api import ComposeResult, Librarian

__all__ = ["COMPOSE_CLI", "parse_compose", "quick_compose", "run_compose"]

#: ``librarian compose``'s options: the request's, then those of the command itself
COMPOSE_CLI: tuple[Option, ...] = cli_rows(
    COMPOSE_OPTIONS,
    (
        Option(
            "diff",
            "path",
            "Current change = this unified diff file (excludes --base).",
            flags=("--diff",),
        ),
        Option("explain", "flag", "Print the explanation to stderr.", False, flags=("--explain",)),
        Option(
            "verbose", "flag", "List every artifact (stderr).", False, flags=("--verbose", "-v")
        ),
        Option(
            "dry_run",
            "flag",
            "Preview the selection; no pack, no cache, nothing recorded.",
            False,
            flags=("--dry-run",),
        ),
        Option("output", "path", "Write the pack here.", flags=("--output", "-o")),
        Option(
            "as_json",
            "flag",
            "Same as --format json: the pack and its metadata as one document.",
            False,
            flags=("--json",),
        ),
        Option("no_cache", "flag", "Do not read or write the cache.", False, flags=("--no-cache",)),
        REPO,
    ),
)
_QUICK = quick_table(COMPOSE_CLI)


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
    lists: dict[str, list[str]] = {}
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
        if name in _QUICK.flags and not eq:
            key = _QUICK.flags[name]
            if key in args:
                return None
            args[key] = True
            continue
        key = _QUICK.valued.get(name, "")
        if not key:
            return None  # --help, an unknown option, -b8000 and the like
        if not eq:
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        if key in _QUICK.repeated:
            lists.setdefault(key, []).append(value)
            continue
        if key in args:
            return None
        if key in _QUICK.ints:
            number = _int(value)
            if number is None:
                return None
            args[key] = number
        else:
            args[key] = Path(value) if key in _QUICK.paths else value
    if task is None:
        return None
    args.update((key, tuple(values)) for key, values in lists.items())
    return {_QUICK.argument: task, **args}


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


def run_compose(**values: Any) -> int:
    """``librarian compose`` after its options are parsed (``values`` by the names of
    :data:`COMPOSE_CLI`, the defaults left out or not); returns the exit code
    (library errors are reported here, on stdout as JSON or on stderr)."""
    opts = {row.name: values.get(row.name, row.default) for row in COMPOSE_CLI}
    fmt: str | None = opts["fmt"]
    as_json: bool = opts["as_json"]
    output: Path | None = opts["output"]
    dry_run: bool = opts["dry_run"]
    try:
        if as_json and fmt not in (None, "json"):
            raise UsageError(f"--json and --format {fmt} exclude each other", hint="Give one.")
        fmt = "json" if as_json else fmt
        as_json = fmt == "json"
        diff_text = None
        if opts["diff"] is not None:
            # not stdin: a resident server answering this call has no terminal of its own
            diff_text = read_input(opts["diff"], "diff", lenient=True, stdin=False)
        request = ComposeRequest(
            opts["task"],
            budget=opts["budget"],
            model=opts["model"],
            base=opts["base"],
            diff_text=diff_text,
            files=opts["files"],
            fmt=fmt,
            as_of=int(time.time()) if opts["as_of"] is None else opts["as_of"],
            agent_role=opts["agent_role"],
            use_cache=not opts["no_cache"],
            event=opts["event"],
            record=not dry_run,
            reveal=opts["reveal"],
        )
        if output is not None:
            _check_output(output)
        lib: Librarian = open_librarian(resolve_repo(opts["repo"]))
        with progress("indexing", None) as bar:

            def _tick(done: int, total: int) -> None:
                bar.update(total=total, completed=done)

            result = lib.run_compose(request, progress=_tick)
        from ..api import after_reply

        after_reply(lambda: release_librarian(lib))  # a resident server: after its reply
    except LibrarianError as exc:
        return report(exc, as_json=as_json)
    err = _LazyConsole()  # rich loads only when there is something to say on stderr
    for warning in result.warnings:
        err.print(f"warning: {warning}", markup=False, highlight=False)
    for d in result.degraded:  # said once, on stderr; --format json carries "degraded"
        err.print(f"note: {d.detail}", markup=False, highlight=False)
    explain, verbose, reveal = opts["explain"], opts["verbose"], opts["reveal"]
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
