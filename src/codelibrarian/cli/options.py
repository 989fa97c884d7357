"""CLI commands and the quick parser, derived from option rows (``options.py``).

A command's options are the rows of its request (``requests.py``) that
have CLI spellings, followed by the rows only the CLI has (``--output``,
``--json``, ``--repo``...). From those rows:

* :func:`typer_command` makes the typer command: one parameter per row, with the
  row's spellings, help text (its choices appended) and default, in row order.
  It carries no checks of its own: values are checked where the request is made,
  so the CLI, the API and MCP give the same message for the same mistake.
* :func:`quick_table` makes the spelling tables of a parser that reads a command
  line without typer (``compose_run.parse_compose``).

Importing this module imports no typer (the quick path runs without it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..options import Option, OptionTable

__all__ = ["REPO", "QuickTable", "cli_rows", "quick_table", "typer_command"]

#: every command's ``-C/--repo``
REPO = Option(
    "repo",
    "path",
    "Repository root (default: the current directory).",
    Path(),
    flags=("--repo", "-C"),
)


def cli_rows(request: OptionTable, shell: Iterable[Option]) -> tuple[Option, ...]:
    """A command's rows: the request's rows the CLI spells, then the CLI's own."""
    return (*(row for row in request if row.flags or row.argument), *shell)


def _help(row: Option) -> str:
    if row.choices:
        return f"{row.help} One of: {', '.join(row.choices)}."
    return row.help


def _annotation(row: Option) -> Any:
    base: Any = {"text": str, "int": int, "flag": bool, "texts": list[str], "path": Path}[row.kind]
    if row.kind in ("flag", "texts") or row.default is not None or row.required:
        return base
    return base | None


def _parameter(row: Option) -> inspect.Parameter:
    import typer

    help_text = _help(row)
    default: Any
    if row.argument:
        default = typer.Argument(... if row.required else row.default, help=help_text)
    else:
        value = list(row.default) if row.kind == "texts" else row.default
        default = typer.Option(value, *row.flags, help=help_text)
    return inspect.Parameter(
        row.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=_annotation(row),
    )


def typer_command(
    rows: Sequence[Option], run: Callable[..., int | None], *, name: str, doc: str
) -> Callable[..., None]:
    """A typer command of ``rows`` that calls ``run(**values)`` and exits with the
    code it returns (``doc`` is its help; the first line its summary)."""

    def command(**values: Any) -> None:
        code = run(**values)
        if code:
            import typer

            raise typer.Exit(code)

    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_parameter(row) for row in rows]
    )
    command.__name__ = command.__qualname__ = name
    command.__doc__ = doc
    return command


@dataclass(frozen=True, slots=True)
class QuickTable:
    """The spellings a quick parser reads: ``valued`` and ``flags`` map a spelling to
    its row's name; ``ints`` and ``paths`` name rows read as numbers and paths;
    ``repeated`` rows gather every value given; ``argument`` is the positional row."""

    valued: dict[str, str]
    flags: dict[str, str]
    ints: frozenset[str]
    paths: frozenset[str]
    repeated: frozenset[str]
    argument: str


def quick_table(rows: Sequence[Option]) -> QuickTable:
    """The :class:`QuickTable` of a command's rows (a ``--x/--no-x`` flag is left to
    typer: the quick parser then steps aside)."""
    valued: dict[str, str] = {}
    flags: dict[str, str] = {}
    for row in rows:
        simple = tuple(f for f in row.flags if "/" not in f)
        target = flags if row.kind == "flag" else valued
        target.update(dict.fromkeys(simple, row.name))
    (argument,) = (row.name for row in rows if row.argument)
    return QuickTable(
        valued=valued,
        flags=flags,
        ints=frozenset(row.name for row in rows if row.kind == "int"),
        paths=frozenset(row.name for row in rows if row.kind == "path"),
        repeated=frozenset(row.name for row in rows if row.kind == "texts"),
        argument=argument,
    )
