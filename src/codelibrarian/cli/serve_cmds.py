"""``librarian serve``: the MCP server, or a resident server for the CLI.

* ``librarian serve`` runs the MCP server for one repository: stdio by default
  (the client starts ``librarian serve`` and talks over its stdin/stdout);
  ``--transport http`` serves streamable HTTP at ``http://HOST:PORT/mcp`` on a
  loopback address. stdout carries protocol messages only; logs (tool names,
  codes, counts — no paths or content) go to stderr. See ``docs/mcp.md``. While
  it runs it also answers CLI calls on the repository's resident socket.
* ``librarian serve --daemon`` starts a resident server in the background and
  returns: later ``compose``, ``query``, ``map``, ``explain`` and ``window`` calls
  are answered by it, warm (``resident.py``, ``resident_server.py``). In the default
  ``auto`` mode the first such call starts one by itself. ``--status`` shows it,
  ``--stop`` ends it; it also ends after ``--idle-timeout`` seconds without a call.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import UsageError, WorkspaceError
from ._common import JSON_OPTION, REPO_OPTION, print_json, resolve_repo

if TYPE_CHECKING:
    from .resident_server import ResidentServer

__all__ = ["register"]

#: a loaded machine: imports, then a first compose that builds the per-index tables
_START_WAIT_S = 120.0


def register(app: typer.Typer) -> None:
    """Register ``librarian serve`` on ``app``."""

    @app.command("serve")
    def serve_cmd(
        *,
        transport: str = typer.Option(
            "stdio", "--transport", "-t", help="stdio (default) or http (streamable HTTP)."
        ),
        host: str = typer.Option(
            "127.0.0.1", "--host", help="HTTP: loopback address to listen on."
        ),
        port: int = typer.Option(8765, "--port", "-p", help="HTTP: port to listen on."),
        daemon: bool = typer.Option(
            False, "--daemon", help="Start a resident server for CLI calls in the background."
        ),
        stop: bool = typer.Option(False, "--stop", help="Stop the repository's resident server."),
        status: bool = typer.Option(
            False, "--status", help="Show the repository's resident server, if one runs."
        ),
        idle_timeout: int = typer.Option(
            1800,
            "--idle-timeout",
            min=1,
            help="Resident server: exit after this many seconds idle.",
        ),
        resident: bool = typer.Option(
            False, "--resident", hidden=True, help="Run the resident server in the foreground."
        ),
        auto: bool = typer.Option(
            False, "--auto", hidden=True, help="Resident server: started by a call (auto mode)."
        ),
        as_json: bool = JSON_OPTION,
        repo: Path = REPO_OPTION,
    ) -> None:
        """Serve the MCP tools and run resources for the repository (see docs/mcp.md)."""
        root = resolve_repo(repo)
        if sum((stop, status, daemon, resident)) > 1:
            raise UsageError(
                "--daemon, --status and --stop exclude each other", hint="Give one of them."
            )
        if stop:
            _stop(root, as_json=as_json)
            return
        if status:
            _status(root, as_json=as_json)
            return
        if resident:
            _run_resident(root, idle_timeout, auto=auto)
            return
        if daemon:
            _start_daemon(root, idle_timeout, as_json=as_json)
            return
        from ..mcp.server import serve

        if transport not in ("stdio", "http"):
            raise UsageError(
                f"unknown transport {transport!r}", hint="Use --transport stdio or http."
            )
        resident_server = _resident_thread(root, idle_timeout=float("inf"))

        def _terminate(signum: int, _frame: object) -> None:
            # the SDK's worker threads would keep a plain exit waiting on a tool call:
            # end now, as a kill would (the index is crash-safe), minus the stale socket
            if resident_server is not None:
                resident_server.close()
            os._exit(128 + signum)

        signal.signal(signal.SIGTERM, _terminate)
        serve(root, transport="http" if transport == "http" else "stdio", host=host, port=port)


def _state(root: Path) -> dict[str, object] | None:
    """The running server's state (``ping``), or None when none answers."""
    from .resident import request

    try:
        answer = request(root, {"op": "ping"}, timeout=2.0)
    except OSError:
        return None
    return answer if isinstance(answer.get("pid"), int) else None


def _ping(root: Path) -> int | None:
    state = _state(root)
    return None if state is None else int(str(state["pid"]))


def _report(data: dict[str, object], text: str, *, as_json: bool) -> None:
    if as_json:
        print_json({"ok": True, **data})
    else:
        typer.echo(text)


def _start_daemon(root: Path, idle_timeout: int, *, as_json: bool) -> None:
    from .resident import socket_path, spawn_resident

    pid = _ping(root)
    if pid is not None:
        _report({"pid": pid, "started": False}, f"resident server already running (pid {pid})",
                as_json=as_json)  # fmt: skip
        return
    state = root / ".librarian"
    proc = spawn_resident(root, idle_timeout)
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        pid = _ping(root)
        if pid is not None:
            _report(
                {"pid": pid, "started": True, "socket": str(socket_path(root))},
                f"resident server started (pid {pid}); CLI calls in {root} now use it",
                as_json=as_json,
            )
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise WorkspaceError(
        "the resident server did not start.",
        hint=f"See {state / 'resident.log'}; CLI calls keep working without it.",
    )


def _stop(root: Path, *, as_json: bool) -> None:
    from .resident import request

    try:
        answer = request(root, {"op": "stop"}, timeout=5.0)
    except OSError:
        _report({"stopped": False}, "no resident server is running", as_json=as_json)
        return
    _report({"stopped": True, "pid": answer.get("pid")}, "resident server stopped",
            as_json=as_json)  # fmt: skip


def _status(root: Path, *, as_json: bool) -> None:
    from .resident import env_mode, socket_path

    mode = env_mode()
    if mode is None:
        from ..api import resident_settings

        mode = resident_settings(root)[0]
    state = _state(root)
    if state is None:
        _report({"running": False, "mode": mode},
                f"no resident server is running (mode {mode})", as_json=as_json)  # fmt: skip
        return
    how = "started by a call" if state.get("auto") else "started by serve"
    _report(
        {"running": True, "mode": mode, "socket": str(socket_path(root)), **state},
        f"resident server running (pid {state['pid']}, {how}, mode {mode}): "
        f"{state.get('served')} calls answered, idle {state.get('idle_for')} s "
        f"of {state.get('idle_timeout')} s",
        as_json=as_json,
    )


def _run_resident(root: Path, idle_timeout: int, *, auto: bool) -> None:
    from .resident_server import start_resident

    server = start_resident(root, idle_timeout=float(idle_timeout), auto=auto, warm=True)
    if server is None:
        if auto:
            return  # calls raced to start one: the other one serves
        raise WorkspaceError(
            f"a resident server already runs for {root}.", hint="Stop it with `serve --stop`."
        )
    server.serve()


def _resident_thread(root: Path, *, idle_timeout: float) -> ResidentServer | None:
    """Answer CLI calls on the resident socket while the MCP server runs (if free)."""
    from .resident_server import start_resident

    try:
        server = start_resident(root, idle_timeout=idle_timeout)
    except OSError:
        return None
    if server is not None:
        threading.Thread(target=server.serve, name="codelibrarian-resident", daemon=True).start()
    return server
