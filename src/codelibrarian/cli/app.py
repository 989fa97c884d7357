"""Entry point of the ``librarian`` console script.

Each command group lives in its own module with a ``register(app)`` function;
``_COMMAND_MODULES`` lists them in the order ``--help`` shows them.
"""

from __future__ import annotations

import importlib
import sys

import typer

from .. import __version__
from ..errors import LibrarianError
from ._common import fail

_COMMAND_MODULES: tuple[str, ...] = (
    "workspace_cmds",  # init, doctor, scan, tokens
    "window_cmds",  # window
    "providers_cmds",  # providers list | check | qualify
    "compose_cmds",  # compose, explain, replay, violations, vitals
    "query_cmds",  # query
    "index_cmds",  # index, map
    "pack_cmds",  # pack, handoff, runs list | show
    "techniques_cmds",  # techniques list | show, patterns list | show
    "lcl_cmds",  # lcl check | compile | facts, presets list | show | save
    "planning_cmds",  # plan, advise, evolve [approve | reject]
    "serve_cmds",  # serve (MCP server)
)

app = typer.Typer(
    name="librarian",
    help="The right context for AI coding agents, under a hard token budget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"codelibrarian {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """codelibrarian: deterministic, explainable, private context for coding agents."""


for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_name}").register(app)


def main() -> None:
    """Run the CLI, turning library errors into documented exit codes."""
    try:
        # In non-standalone mode click *returns* the code of a typer.Exit instead of
        # raising it, so `raise fail(...)` inside a command would otherwise exit 0.
        code = app(standalone_mode=False)
    except LibrarianError as exc:
        as_json = "--json" in sys.argv
        raise SystemExit(fail(exc, as_json=as_json).exit_code) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        sys.stderr.write("aborted\n")
        raise SystemExit(130) from None
    except Exception as exc:
        # usage errors (unknown option, missing argument): typer vendors its own click,
        # so recognise either flavour by its interface rather than its class
        show = getattr(exc, "show", None)
        exit_code = getattr(exc, "exit_code", None)
        if callable(show) and isinstance(exit_code, int):
            show()
            raise SystemExit(exit_code) from None
        raise
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)
