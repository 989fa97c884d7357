"""Resident mode, the client half: later CLI calls reach a warm server over a local socket.

An agent that calls ``librarian compose`` in a loop pays, on every call, the
interpreter start, the imports (typer, pydantic, numpy, the tokenizer) and the
per-index caches a fresh process rebuilds. A resident server
(``resident_server.py``) keeps all of that warm for one repository; the CLI's
``main`` asks it first for the commands in ``commands.DAEMON_COMMANDS`` and runs
them itself when there is none (no socket, a stale socket, a server that dies
mid-call, a server that declines).

The mode (``LIBRARIAN_RESIDENT``, else ``[resident] mode`` in the config):

* ``auto`` (the default): use the repository's server; when there is none, start one
  in the background (``auto_start``) and answer this call here. The server ends
  after ``[resident] idle_timeout`` seconds without a call (default 600).
* ``manual``: use a server someone started (``librarian serve --daemon``, a running
  MCP server); never start one.
* ``off``: never use or start one (``LIBRARIAN_NO_RESIDENT=1`` says the same).

The protocol, on ``.librarian/resident.sock`` (created under umask 077: only its
owner can connect; longer paths than a socket address allows are reached by
changing into ``.librarian/`` first): one request per connection, a 4-byte
big-endian length and a ``marshal``-ed dict (strings, ints, lists, dicts only):
``{"argv": [...], "cwd": "...", "env": {...}}``, answered by ``{"code": int,
"stdout": str, "stderr": str}`` or ``{"declined": True}``; ``{"op": "ping"}`` and
``{"op": "stop"}`` as ``resident_server.py`` says. ``marshal`` rather than JSON:
it is built into the interpreter, where ``json`` costs a fresh process ``re`` and
its friends; only processes of the socket's owner can send it anything.

This module is the client: it imports only modules the interpreter has loaded at
start-up (``os``, ``sys``, ``marshal``) and ``_socket``; it runs before anything
heavy is loaded, on every call.
"""

# os.path rather than pathlib throughout: pathlib costs every call its import (and re)
# ruff: noqa: PTH103, PTH108, PTH109, PTH110, PTH111, PTH112, PTH116, PTH118, PTH119, PTH120
from __future__ import annotations

import marshal
import os
import sys

#: ``typing`` costs a fresh process milliseconds this module exists to save
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from _socket import socket as _Socket
    from collections.abc import Callable
    from pathlib import Path

__all__ = [
    "MODES",
    "SOCKET_NAME",
    "at_address",
    "auto_start",
    "call_resident",
    "client_id",
    "env_mode",
    "recv_message",
    "repo_of",
    "request",
    "send_message",
    "socket_path",
    "spawn_resident",
]

SOCKET_NAME = "resident.sock"
#: the values of ``LIBRARIAN_RESIDENT`` and ``[resident] mode``
MODES = ("auto", "manual", "off")
_MAX_MESSAGE = 256 * 1024 * 1024
#: variables a call passes to the server (with every ``LIBRARIAN_*``)
PASSED_ENV = ("COLUMNS", "NO_COLOR", "TERM")
#: how long a client waits for its answer (a cold compose may index first)
CALL_TIMEOUT_S = 600.0
#: an auto-start younger than this is left to finish starting (no second spawn)
_STARTING_S = 30.0
_STARTING = "resident.starting"
_MARSHAL_VERSION = 4


def socket_path(root: str | os.PathLike[str]) -> Path:
    from pathlib import Path

    return Path(_socket_file(os.fspath(root)))


def _socket_file(root: str) -> str:
    return os.path.join(root, ".librarian", SOCKET_NAME)


def env_mode() -> str | None:
    """The mode the environment asks for (None: not said; the config decides)."""
    if os.environ.get("LIBRARIAN_NO_RESIDENT"):
        return "off"
    value = os.environ.get("LIBRARIAN_RESIDENT", "").strip().lower()
    return value if value in MODES else None


def repo_of(argv: list[str]) -> str:
    """The repository a CLI call is about: ``-C/--repo PATH``, else the working folder."""
    given = None
    for i, arg in enumerate(argv):
        if arg in ("-C", "--repo") and i + 1 < len(argv):
            given = argv[i + 1]
            break
        if arg.startswith("--repo="):
            given = arg.split("=", 1)[1]
            break
    return os.path.realpath(os.path.expanduser(given) if given is not None else os.getcwd())


def send_message(sock: _Socket, doc: dict[str, object]) -> None:
    data = marshal.dumps(doc, _MARSHAL_VERSION)
    sock.sendall(len(data).to_bytes(4, "big") + data)


def _recv_exact(sock: _Socket, n: int) -> bytes:
    chunks: list[bytes] = []
    while n:
        got = sock.recv(min(n, 1 << 20))
        if not got:
            raise ConnectionError("the other side closed the connection")
        chunks.append(got)
        n -= len(got)
    return b"".join(chunks)


def recv_message(sock: _Socket) -> dict[str, object]:
    size = int.from_bytes(_recv_exact(sock, 4), "big")
    if size > _MAX_MESSAGE:
        raise ConnectionError("message too large")
    try:
        doc = marshal.loads(_recv_exact(sock, size))
    except (EOFError, ValueError, TypeError) as exc:
        raise ConnectionError(f"malformed message: {exc}") from None
    if not isinstance(doc, dict):
        raise ConnectionError("malformed message")
    return doc


def at_address(path: str, use: Callable[[str], None]) -> None:
    """``use(path)`` (a socket's connect or bind), from inside the path's folder when the
    path is too long for a socket address (``sockaddr_un`` holds about 100 bytes)."""
    if len(os.fsencode(path)) < 100:
        use(path)
        return
    here = os.getcwd()
    os.chdir(os.path.dirname(path))
    try:
        use(os.path.basename(path))
    finally:
        os.chdir(here)


def request(
    root: str | os.PathLike[str], doc: dict[str, object], *, timeout: float = CALL_TIMEOUT_S
) -> dict[str, object]:
    """Send one request to the resident server of ``root``; raises ``OSError`` if none
    answers (no socket, nobody listening, a connection closed without an answer)."""
    import _socket

    path = _socket_file(os.fspath(root))
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        at_address(path, sock.connect)
        send_message(sock, doc)
        return recv_message(sock)
    finally:
        sock.close()


def client_id() -> str:
    """Which codelibrarian this is (version and package folder): a server running other
    code (an upgrade, another checkout or venv) declines, and the call runs here."""
    from .. import __file__ as package_file
    from .. import __version__

    return f"{__version__} {os.path.dirname(os.path.realpath(package_file or ''))}"


def call_resident(argv: list[str]) -> int | None:
    """Run a CLI call on the repository's resident server; None when there is none
    (or it declined, or died before answering): the caller runs it here."""
    root = repo_of(argv)
    if not os.path.exists(_socket_file(root)):
        return None
    env = {k: v for k, v in os.environ.items() if k.startswith("LIBRARIAN_") or k in PASSED_ENV}
    try:
        doc: dict[str, object] = {
            "argv": list(argv),
            "cwd": os.getcwd(),
            "env": env,
            "client": client_id(),
        }
        answer = request(root, doc)
        if answer.get("declined"):
            return None
        code = answer["code"]
        out, err = answer["stdout"], answer["stderr"]
    except (OSError, KeyError):
        return None  # no server, a stale socket or a server that died: run it here
    if not isinstance(code, int) or not isinstance(out, str) or not isinstance(err, str):
        return None
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return code


def spawn_resident(
    root: str | os.PathLike[str], idle_timeout: int, *, auto: bool = False
) -> subprocess.Popen[bytes]:
    """Start ``librarian serve --resident`` for ``root`` in a new session (it outlives
    the caller; its stderr goes to ``.librarian/resident.log``)."""
    import subprocess

    root = os.fspath(root)
    state = os.path.join(root, ".librarian")
    os.makedirs(state, exist_ok=True)
    # -P: the repository is the working folder; its modules must not shadow ours
    cmd = [sys.executable, "-P", "-m", "codelibrarian", "serve", "--resident",
           "--idle-timeout", str(idle_timeout), "--repo", root]  # fmt: skip
    if auto:
        cmd.append("--auto")
    with open(os.path.join(state, "resident.log"), "ab") as log:
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            cwd=root,
        )


#: servers this process started (kept: a dropped handle of a running child warns)
_CHILDREN: list[subprocess.Popen[bytes]] = []


def _claim_start(state: str) -> bool:
    """Whether this call may start the server: it created the start marker, or the
    marker it found is older than ``_STARTING_S`` (that start failed) and it replaced it.
    Calls racing here start one server; the server's lock settles any that slip by."""
    import time

    marker = os.path.join(state, _STARTING)
    for _ in range(2):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return True
        except FileExistsError:
            try:
                if time.time() - os.stat(marker).st_mtime < _STARTING_S:
                    return False
                os.unlink(marker)
            except OSError:
                return False
        except OSError:
            return False
    return False


def auto_start(argv: list[str]) -> bool:
    """In ``auto`` mode, start a resident server for the repository of ``argv`` in the
    background (not waiting for it); True when one was started.

    Only in a folder that already has ``.librarian/`` (an indexed repository), and at
    most once per ``_STARTING_S`` seconds (calls in parallel start one server). The
    config is read here only (``[resident]``), on the call that would start a server:
    the calls a server answers never read it.
    """
    mode = env_mode()
    if mode is not None and mode != "auto":
        return False
    root = repo_of(argv)
    state = os.path.join(root, ".librarian")
    if not os.path.isdir(state):
        return False
    try:
        from ..api import resident_settings

        configured, idle = resident_settings(root)
    except Exception:  # a broken config: this call reports it; start nothing
        return False
    if mode is None and configured != "auto":
        return False
    if os.environ.get("LIBRARIAN_RESIDENT_IDLE"):
        try:
            idle = max(1, int(os.environ["LIBRARIAN_RESIDENT_IDLE"]))
        except ValueError:
            return False
    if not _claim_start(state):
        return False
    try:
        _CHILDREN.append(spawn_resident(root, idle, auto=True))
    except OSError:
        return False  # an optimisation only: this call runs here regardless
    return True
