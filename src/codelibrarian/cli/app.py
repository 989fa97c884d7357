"""Entry point of the ``librarian`` console script: at interpreter speed.

Agents call the CLI in a loop, so start-up is paid on every call. ``main``:

* answers ``librarian``, ``--help`` and ``--version`` from ``commands.py``'s table
  without importing typer, rich, pydantic or anything heavy;
* hands ``compose``, ``query``, ``map``, ``explain`` and ``window`` to a resident
  server when one runs for the repository (``librarian serve --daemon``; see
  ``resident.py``), falling back to running them here when there is none;
* runs ``compose`` and ``index`` itself without typer when it can read the command
  line (``compose_run.quick_compose``, ``index_run.quick_index``: typer and its
  pydantic coercers cost a fresh process about a third of a second);
* otherwise builds a typer app holding only the command group asked for, so
  ``librarian compose`` never imports the modules of ``pack`` or ``providers``.

``app`` (the full typer app, every command) is built on first access, for the
reference generator and tests. Each command module has a ``register(app)``
function; ``commands.py`` says which module defines which command.
"""

from __future__ import annotations

import os
import sys

from .. import __version__
from .commands import COMMANDS, DAEMON_COMMANDS, MODULES, module_for

#: not ``typing``'s: a call answered by the resident server imports nothing it need not
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    import typer

__all__ = ["build_app", "entry", "main", "root_help"]

_HELP = "The right context for AI coding agents, under a hard token budget."


def root_help() -> str:
    """``librarian --help``: usage, options and every command with its summary."""
    width = max(len(name) for name, _, _ in COMMANDS) + 2
    lines = [
        "Usage: librarian [OPTIONS] COMMAND [ARGS]...",
        "",
        f"  {_HELP}",
        "",
        "Options:",
        "  --version   Show the version and exit.",
        "  -h, --help  Show this message and exit.",
        "",
        "Commands:",
        *(f"  {name.ljust(width)}{summary}" for name, _, summary in COMMANDS),
        "",
        "Run `librarian COMMAND --help` for a command's options (docs/cli.md explains them).",
    ]
    return "\n".join(lines) + "\n"


def build_app(modules: tuple[str, ...] = MODULES) -> typer.Typer:
    """A typer app with the commands of ``modules`` (default: all of them)."""
    import importlib

    import typer

    app = typer.Typer(
        name="librarian",
        help=_HELP,
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

    for name in modules:
        importlib.import_module(f"{__package__}.{name}").register(app)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return build_app()
    raise AttributeError(name)


def _command_name(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def _on_sigterm(signum: int, _frame: object) -> None:
    # unwind like Ctrl-C: transactions roll back, pool workers are killed, the index
    # lock is released as "clean" (the database is consistent), then exit 143; if the
    # exception is swallowed (see _signals.py), the process ends a second later anyway
    from ._signals import exit_later

    exit_later(128 + signum)
    raise SystemExit(128 + signum)


def main() -> None:
    """Run the CLI, turning library errors into documented exit codes."""
    argv = sys.argv[1:]
    if argv in ([], ["--help"], ["-h"]):
        sys.stdout.write(root_help())
        return
    if argv == ["--version"]:
        sys.stdout.write(f"codelibrarian {__version__}\n")
        return
    name = _command_name(argv)
    start_after = False
    if name in DAEMON_COMMANDS:
        from .resident import auto_start, call_resident, env_mode, repo_of

        if env_mode() != "off":
            code = call_resident(argv)
            if code is not None:
                raise SystemExit(code)
            # auto mode: start a server for the next calls; this one runs here. In a
            # repository without .librarian/ yet, once this call has made it
            state = os.path.join(repo_of(argv), ".librarian")  # noqa: PTH118 - no pathlib here
            start_after = not os.path.isdir(state)  # noqa: PTH112
            if not start_after:
                auto_start(argv)
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        _run_here(name, argv)
    except SystemExit as exc:
        if start_after and exc.code in (0, None):
            auto_start(argv)
        raise
    if start_after:
        auto_start(argv)


def entry() -> None:
    """The ``librarian`` console script and ``python -m codelibrarian``: ``main``, then
    the interpreter's end without its module teardown.

    After the command, the process waits for its non-daemon threads and runs the
    ``atexit`` callbacks (multiprocessing's, logging's) as the interpreter does, flushes
    the standard streams and exits. Freeing every object of a process that loaded
    the index, the parser and the tokenizer one by one costs it 50-90 ms of CPU
    and runs only ``__del__`` methods a crash-safe command cannot rely on. Code that
    calls ``main`` itself keeps the usual ending.
    """
    try:
        main()
    except SystemExit as exc:
        status = exc.code
    else:
        status = 0
    code = status if isinstance(status, int) else (0 if status is None else 1)
    if not isinstance(status, int) and status is not None:
        sys.stderr.write(f"{status}\n")  # as the interpreter prints a non-integer exit
    import atexit

    threading = sys.modules.get("threading")  # not imported: no thread was started
    if threading is not None:
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()
    from ._signals import exit_now

    exit_now(code)


def _run_here(name: str | None, argv: list[str]) -> None:
    if name in ("compose", "index"):
        # None: a command line only typer reads rightly
        if name == "compose":
            from .compose_run import quick_compose

            code = quick_compose(argv)
        else:
            from .index_run import quick_index

            code = quick_index(argv)
        if code is not None:
            raise SystemExit(code)
    module = module_for(name) if name else None
    run(build_app((module,) if module else MODULES), argv)


def run(app: typer.Typer | Callable[..., Any], argv: list[str]) -> None:
    """Run ``app`` (a typer app, or the click command made of one) on ``argv`` in this
    process, mapping errors to exit codes."""
    import typer

    from ..errors import LibrarianError

    try:
        # In non-standalone mode click *returns* the code of a typer.Exit instead of
        # raising it, so `raise fail(...)` inside a command would otherwise exit 0.
        code = app(args=argv, prog_name="librarian", standalone_mode=False)
    except LibrarianError as exc:
        from ._common import fail, wants_json

        raise SystemExit(fail(exc, as_json=wants_json(argv)).exit_code) from None
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
        from ._common import internal_error, wants_json

        raise SystemExit(internal_error(exc, as_json=wants_json(argv))) from None
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)
