"""Resident mode: later CLI calls reach a warm server over a local socket.

An agent that calls ``librarian compose`` in a loop pays, on every call, the
interpreter start, the imports (typer, pydantic, numpy, the tokenizer) and the
per-index caches a fresh process rebuilds. ``librarian serve --daemon`` starts a
resident server for one repository that keeps all of that warm; a running MCP
server (``librarian serve``) offers the same socket. The CLI's ``main`` asks it
first for the commands in ``commands.DAEMON_COMMANDS`` and runs them itself when
there is no server (no socket, a stale socket, a server that dies mid-call).

* The socket is ``.librarian/resident.sock``, created under umask 077 (only its
  owner can connect). Paths longer than a socket address allows are reached by
  changing into ``.librarian/`` first.
* One request at a time: a 4-byte big-endian length and a JSON document,
  ``{"argv": [...], "cwd": "...", "env": {...}}``; the answer is
  ``{"code": int, "stdout": str, "stderr": str}`` in the same framing. The
  server runs the very same typer commands, in its working copy of ``cwd``
  with the caller's ``LIBRARIAN_*``, ``COLUMNS`` and ``NO_COLOR`` variables, its
  standard streams routed (for that thread only) into the answer.
* ``{"op": "ping"}`` answers ``{"pid": ..., "served": <calls answered>}``;
  ``{"op": "stop"}`` ends the server. The server also ends after ``idle_timeout``
  seconds without a request, and on SIGTERM; it removes its socket when it ends.

Opt-in auto-start: with ``LIBRARIAN_RESIDENT=auto`` a CLI call that finds no server
starts one in the background (``spawn_resident``; idle timeout
``LIBRARIAN_RESIDENT_IDLE`` seconds, default 600) and answers this call itself; the
calls after it are answered warm. Off by default: nothing keeps running unless asked.

The client half (``call_resident``, ``request``, ``auto_start``) imports only the
standard library: it runs before anything heavy is loaded.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "SOCKET_NAME",
    "ResidentServer",
    "auto_start",
    "call_resident",
    "repo_of",
    "request",
    "socket_path",
    "spawn_resident",
]

SOCKET_NAME = "resident.sock"
_HEADER = struct.Struct(">I")
_MAX_MESSAGE = 256 * 1024 * 1024
_PASSED_ENV = ("COLUMNS", "NO_COLOR", "TERM")
#: how long a client waits for its answer (a cold compose may index first)
CALL_TIMEOUT_S = 600.0
#: ``LIBRARIAN_RESIDENT=auto``: idle seconds before an auto-started server ends
AUTO_IDLE_S = 600
#: an auto-start younger than this is left to finish starting (no second spawn)
_STARTING_S = 30.0
_STARTING = "resident.starting"


def socket_path(root: Path) -> Path:
    return root / ".librarian" / SOCKET_NAME


def repo_of(argv: list[str]) -> Path:
    """The repository a CLI call is about: ``-C/--repo PATH``, else the working folder."""
    for i, arg in enumerate(argv):
        if arg in ("-C", "--repo") and i + 1 < len(argv):
            return Path(argv[i + 1]).expanduser().resolve()
        if arg.startswith("--repo="):
            return Path(arg.split("=", 1)[1]).expanduser().resolve()
    return Path.cwd().resolve()


@contextlib.contextmanager
def _short_address(path: Path) -> Iterator[str]:
    """An address for ``path`` that fits ``sockaddr_un`` (changing folder if needed)."""
    full = str(path)
    if len(full.encode()) < 100:
        yield full
        return
    here = Path.cwd()
    os.chdir(path.parent)
    try:
        yield path.name
    finally:
        os.chdir(here)


def _send(sock: socket.socket, doc: dict[str, Any]) -> None:
    data = json.dumps(doc).encode("utf-8")
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks: list[bytes] = []
    while n:
        got = sock.recv(min(n, 1 << 20))
        if not got:
            raise ConnectionError("the other side closed the connection")
        chunks.append(got)
        n -= len(got)
    return b"".join(chunks)


def _recv(sock: socket.socket) -> dict[str, Any]:
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if size > _MAX_MESSAGE:
        raise ConnectionError("message too large")
    doc = json.loads(_recv_exact(sock, size).decode("utf-8"))
    if not isinstance(doc, dict):
        raise ConnectionError("malformed message")
    return doc


def request(root: Path, doc: dict[str, Any], *, timeout: float = CALL_TIMEOUT_S) -> dict[str, Any]:
    """Send one request to the resident server of ``root``; raises ``OSError`` if none."""
    path = socket_path(root)
    if not path.exists():
        raise FileNotFoundError(str(path))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        with _short_address(path) as address:
            sock.connect(address)
        _send(sock, doc)
        return _recv(sock)
    finally:
        sock.close()


def call_resident(argv: list[str]) -> int | None:
    """Run a CLI call on the repository's resident server; None when there is none."""
    root = repo_of(argv)
    if not socket_path(root).exists():
        return None
    env = {k: v for k, v in os.environ.items() if k.startswith("LIBRARIAN_") or k in _PASSED_ENV}
    try:
        answer = request(root, {"argv": argv, "cwd": str(Path.cwd()), "env": env})
        code = int(answer["code"])
        out, err = str(answer["stdout"]), str(answer["stderr"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no server, a stale socket or a server that died: run it here
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return code


def spawn_resident(root: Path, idle_timeout: int) -> subprocess.Popen[bytes]:
    """Start ``librarian serve --resident`` for ``root`` in a new session (it outlives
    the caller; its stderr goes to ``.librarian/resident.log``)."""
    state = root / ".librarian"
    state.mkdir(exist_ok=True)
    with open(state / "resident.log", "ab") as log:
        return subprocess.Popen(
            # -P: the repository is the working folder; its modules must not shadow ours
            [sys.executable, "-P", "-m", "codelibrarian", "serve", "--resident",
             "--idle-timeout", str(idle_timeout), "--repo", str(root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            cwd=root,
        )  # fmt: skip


def auto_start(argv: list[str]) -> bool:
    """With ``LIBRARIAN_RESIDENT=auto``, start a resident server for the repository of
    ``argv`` in the background (not waiting for it); True when one was started.

    Only in a folder that already has ``.librarian/`` (an indexed repository), and at
    most once per ``_STARTING_S`` seconds (calls in parallel start one server; a
    server that is still binding is not doubled). A server already running wins the
    socket and the newcomer exits.
    """
    if os.environ.get("LIBRARIAN_RESIDENT", "").strip().lower() != "auto":
        return False
    root = repo_of(argv)
    state = root / ".librarian"
    if not state.is_dir():
        return False
    marker = state / _STARTING
    try:
        if time.time() - marker.stat().st_mtime < _STARTING_S:
            return False
    except OSError:
        pass
    try:
        marker.touch()
        idle = int(os.environ.get("LIBRARIAN_RESIDENT_IDLE") or AUTO_IDLE_S)
        spawn_resident(root, max(1, idle))
    except (OSError, ValueError):
        return False  # an optimisation only: this call runs here regardless
    return True


# ---------------------------------------------------------------- the server


class _Router(io.TextIOBase):
    """A standard stream that writes, per thread, to a capture buffer or the real stream."""

    def __init__(self, real: TextIO) -> None:
        self.real = real
        self._targets: dict[int, io.StringIO] = {}

    def _target(self) -> TextIO:
        return self._targets.get(threading.get_ident(), self.real)

    @contextlib.contextmanager
    def capture(self) -> Iterator[io.StringIO]:
        buf = io.StringIO()
        self._targets[threading.get_ident()] = buf
        try:
            yield buf
        finally:
            self._targets.pop(threading.get_ident(), None)

    def write(self, s: str) -> int:
        return self._target().write(s)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        target = self._target()
        return target is self.real and self.real.isatty()

    def fileno(self) -> int:
        target = self._target()
        if target is not self.real:
            raise io.UnsupportedOperation("fileno")
        return self.real.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True


def _routers() -> tuple[_Router, _Router]:
    out, err = sys.stdout, sys.stderr
    if not isinstance(out, _Router):
        out = sys.stdout = _Router(sys.stdout)
    if not isinstance(err, _Router):
        err = sys.stderr = _Router(sys.stderr)
    return out, err


class ResidentServer:
    """Serve CLI calls for one repository on its socket (see the module docstring).

    ``handle(argv) -> exit code`` runs a command with the streams already routed;
    ``after`` runs after each answer is sent (e.g. to continue indexing).
    """

    def __init__(
        self,
        root: Path,
        handle: Callable[[list[str]], int],
        *,
        idle_timeout: float = 1800.0,
        after: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.handle = handle
        self.idle_timeout = idle_timeout
        self.after = after
        self.path = socket_path(root)
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        #: CLI calls answered so far
        self.served = 0

    def bind(self) -> bool:
        """Listen on the socket; False when a live server already holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            try:
                request(self.root, {"op": "ping"}, timeout=2.0)
                return False
            except OSError:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()  # stale: its server is gone
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            with _short_address(self.path) as address:
                sock.bind(address)
        finally:
            os.umask(old)
        sock.listen(8)
        sock.settimeout(0.5)
        self._sock = sock
        return True

    def serve(self) -> None:
        """Answer requests until stopped, idle too long, or the socket is removed."""
        sock = self._sock
        if sock is None:
            raise RuntimeError("bind() first")
        last = time.monotonic()
        try:
            while not self._stop.is_set():
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    if time.monotonic() - last > self.idle_timeout or not self.path.exists():
                        return
                    continue
                last = time.monotonic()
                with conn:
                    conn.settimeout(CALL_TIMEOUT_S)
                    self._answer(conn)
                if self.after is not None and not self._stop.is_set():
                    self.after()
                last = time.monotonic()
        finally:
            self.close()

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def _answer(self, conn: socket.socket) -> None:
        try:
            doc = _recv(conn)
        except (OSError, ValueError):
            return
        op = doc.get("op")
        with contextlib.suppress(OSError):
            if op == "ping":
                _send(conn, {"pid": os.getpid(), "served": self.served})
            elif op == "stop":
                self._stop.set()
                _send(conn, {"pid": os.getpid(), "stopping": True})
            else:
                _send(conn, self._run(doc))

    def _run(self, doc: dict[str, Any]) -> dict[str, Any]:
        argv = [str(a) for a in doc.get("argv", [])]
        env = {str(k): str(v) for k, v in dict(doc.get("env", {})).items()}
        out, err = _routers()
        with self._lock, _environment(env, str(doc.get("cwd") or self.root)):
            with out.capture() as stdout, err.capture() as stderr:
                try:
                    code = self.handle(argv)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except Exception as exc:  # report, never kill the server
                    stderr.write(f"error: {type(exc).__name__}: {exc}\n")
                    code = 1
            self.served += 1
            return {"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


@contextlib.contextmanager
def _environment(env: dict[str, str], cwd: str) -> Iterator[None]:
    """The caller's variables and working folder for the length of one request."""
    keep = {k: v for k, v in os.environ.items() if k.startswith("LIBRARIAN_") or k in _PASSED_ENV}
    here = Path.cwd()
    for k in keep:
        if k not in env:
            del os.environ[k]
    os.environ.update(env)
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir(here)
    try:
        yield
    finally:
        os.chdir(here)
        for k in list(os.environ):
            if (k.startswith("LIBRARIAN_") or k in _PASSED_ENV) and k not in keep:
                del os.environ[k]
        os.environ.update(keep)


def start_resident(root: Path, *, idle_timeout: float = 1800.0) -> ResidentServer | None:
    """Bind and warm a resident server for ``root`` (None when one already runs).

    Loads what every answer needs once: the full command set, the facade, the
    tokenizer. The caller runs ``serve()`` (in a thread, inside the MCP server).
    """
    import typer.main

    from . import _common
    from .app import build_app, run

    # the click command once, not per call: typer rebuilds it (every command of every
    # group) on each call of the app, and its parameters keep the coercers they build
    command = typer.main.get_command(build_app())
    _common.keep_librarians()

    def handle(argv: list[str]) -> int:
        run(command, argv)
        return 0

    server = ResidentServer(root, handle, idle_timeout=idle_timeout)
    if not server.bind():
        return None
    with contextlib.suppress(Exception):  # warming is an optimisation only
        from ..api import Librarian  # noqa: F401
        from ..tokens import get_tokenizer

        get_tokenizer("gpt-4o").count("warm")
    return server
