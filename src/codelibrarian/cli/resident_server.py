"""Resident mode, the server half: answer CLI calls for one repository, warm.

``librarian serve --daemon`` (or the first call in ``auto`` mode, see
``resident.py``) starts one in the background; a running MCP server answers on
the same socket. It keeps what every answer needs loaded once: the full command
set, the facade, the tokenizer and one ``Librarian`` per repository (whose index
connection, per-generation tables and tree stamp make a warm call cheap).

* One server per repository: it holds an exclusive lock on
  ``.librarian/resident.lock`` for its lifetime and binds the socket only while
  holding it, so calls racing to start one end with one (the others exit
  quietly), and a socket left by a killed server is replaced safely.
* One request at a time. A CLI call runs the very same typer commands, in the
  caller's working folder with the caller's ``LIBRARIAN_*``, ``COLUMNS``,
  ``NO_COLOR`` and ``TERM``, its standard streams routed (for that thread only)
  into the answer ``{"code", "stdout", "stderr"}``.
* A call from other code than the server's (``resident.client_id``: another version,
  checkout or venv) is declined; an auto-started server then ends, so the next call
  starts one running the caller's code.
* A call whose mode is ``off`` (the caller's ``LIBRARIAN_RESIDENT``, else the
  config's ``[resident] mode``) is declined (``{"declined": True}``): the caller
  runs it itself. An auto-started server ends when the config no longer says
  ``auto``.
* ``{"op": "ping"}`` answers the server's state (``pid``, ``served``, ``auto``,
  ``idle_timeout``, ``idle_for``, ``started``, ``last_ms``: how long the last call
  took in the server); ``{"op": "stop"}`` ends it. It also
  ends after ``idle_timeout`` seconds without a request, on SIGTERM, and when its
  socket is removed (the repository deleted); it removes its socket when it ends.
* Idle-time warming (servers started by ``serve --daemon`` or a call, when the
  repository's config sets ``[resident] warm_files = true``): when no call
  is waiting, it builds what a first-time task needs of each file
  (``service/warm.py``), one file per step, and restarts after each answer (resuming
  where it stopped, or on the new index generation). A call that arrives waits for
  the one step under way at most. Warming fills caches with what a call would
  compute itself, so it never changes an answer; ``ping`` reports ``warmed``
  (files done, files in all) and ``warming``.
* What a call writes that does not change its answer (the decision record and
  sidecar, the eviction walks of the decisions folder, the secret spans found, the
  index connection's release) is queued while it runs and done once the reply is
  sent, before the next call is accepted (``service/later.py``).
* The cycle collector is off while a call runs; the young objects a call left are
  collected in one pass after its reply.
* A compose line the quick parser reads (``compose_run.parse_compose``) runs as a
  fresh process runs it, without click; any other line goes through the command set.
* Freshness is the facade's: every call checks the workspace (``git status`` or
  the tree stamp, ``service/treestamp.py``), reopens the index connection and
  replaces the kept ``Librarian`` when the config changed, so an index rebuilt or
  changed under the server is what the next answer reads.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from .resident import (
    CALL_TIMEOUT_S,
    MODES,
    PASSED_ENV,
    at_address,
    client_id,
    recv_message,
    request,
    send_message,
    socket_path,
)

__all__ = ["ResidentServer", "start_resident"]

_LOCK = "resident.lock"


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
    import sys

    out, err = sys.stdout, sys.stderr
    if not isinstance(out, _Router):
        out = sys.stdout = _Router(sys.stdout)
    if not isinstance(err, _Router):
        err = sys.stderr = _Router(sys.stderr)
    return out, err


class _ConfigMode:
    """The config's ``[resident] mode`` of one repository, re-read when a config file
    (``librarian.toml``, ``pyproject.toml``) changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._stamp: object = ()
        self._mode = "auto"

    def _files(self) -> tuple[tuple[int, int] | None, ...]:
        out: list[tuple[int, int] | None] = []
        for name in ("librarian.toml", "pyproject.toml"):
            try:
                st = (self.root / name).stat()
                out.append((st.st_size, st.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    def get(self) -> str:
        stamp = self._files()
        if stamp != self._stamp:
            from ..api import resident_settings
            from ..errors import LibrarianError

            try:
                self._mode = resident_settings(self.root)[0]
            except LibrarianError:
                self._mode = "auto"  # a broken config: the call runs and reports it
            self._stamp = stamp
        return self._mode


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
        auto: bool = False,
        warm: Callable[[], Iterator[tuple[int, int]]] | None = None,
    ) -> None:
        self.root = root
        self.handle = handle
        self.idle_timeout = idle_timeout
        self.after = after
        #: started by a call in ``auto`` mode (ends when the config stops saying so)
        self.auto = auto
        self.path = socket_path(root)
        self._sock: socket.socket | None = None
        self._lock_fd: int | None = None
        self._stop = threading.Event()
        self._run_lock = threading.Lock()
        self._config = _ConfigMode(root)
        self._client = client_id()
        self._started = int(time.time())
        self._last = time.monotonic()
        #: CLI calls answered so far, and how long the last one took here (ms)
        self.served = 0
        self.last_ms = 0
        #: idle-time warming: a new run after each answer (it resumes where it stopped)
        self.warm = warm
        self._warming: Iterator[tuple[int, int]] | None = None
        #: files warmed so far and how many there are (of the current index generation)
        self.warmed = (0, 0)
        #: the answered call's work for after its reply (``service/later.py``)
        self._queued: list[Callable[[], None]] = []
        #: the collector is off while a call runs, and collects once after its reply
        self._collect_after = False

    def bind(self) -> bool:
        """Take the repository's server lock and listen on the socket; False when
        another server holds the lock (it runs, or is starting)."""
        import fcntl

        state = self.path.parent
        state.mkdir(parents=True, exist_ok=True)
        fd = os.open(state / _LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        # the lock is ours: a socket here is a dead server's (or one that predates it)
        with contextlib.suppress(OSError):
            request(self.root, {"op": "stop"}, timeout=2.0)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            at_address(str(self.path), sock.bind)
        except OSError:
            sock.close()
            os.close(fd)
            raise
        finally:
            os.umask(old)
        sock.listen(8)
        sock.settimeout(0.5)
        self._sock = sock
        self._lock_fd = fd
        with contextlib.suppress(FileNotFoundError):
            (state / "resident.starting").unlink()  # started: the next auto-start may go
        return True

    def serve(self) -> None:
        """Answer requests until stopped, idle too long, or the socket is removed."""
        sock = self._sock
        if sock is None:
            raise RuntimeError("bind() first")
        self._last = time.monotonic()
        self._restart_warming()
        try:
            while not self._stop.is_set():
                if self._warm_step(sock):
                    if time.monotonic() - self._last > self.idle_timeout:
                        return
                    continue
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    idle = time.monotonic() - self._last > self.idle_timeout
                    if idle or not self.path.exists():
                        return
                    continue
                self._last = time.monotonic()
                served = self.served
                with conn:
                    conn.settimeout(CALL_TIMEOUT_S)
                    self._answer(conn)
                self._finish_call()
                if self.after is not None and not self._stop.is_set():
                    self.after()
                self._last = time.monotonic()
                if self.served != served:  # a call ran (not a ping): the index may have moved
                    self._restart_warming()
                    if self.served % _RESETTLE_EVERY == 0 and not _waiting(sock):
                        _resettle()  # what calls kept (per-file tables) leaves the walks too
        finally:
            self._end_warming()
            self.close()

    def _finish_call(self) -> None:
        """The answered call's records (``service/later.py``) and its collector work,
        now that the caller has its reply; before the next call, so that call sees them."""
        queue, self._queued = self._queued, []
        if queue:
            from ..api import run_queued

            with self._run_lock:
                errors = run_queued(queue)
            for exc in errors:  # the answer is given: say it in the server's log (no path)
                import sys

                sys.stderr.write(f"error: recording a call failed: {type(exc).__name__}\n")
        if self._collect_after:
            import gc

            self._collect_after = False
            gc.collect(1)  # the call's young objects, in one pass instead of several
            gc.enable()

    def _restart_warming(self) -> None:
        """A new warming run (after a call: the index may have moved on)."""
        self._end_warming()
        if self.warm is not None and not self._stop.is_set():
            with contextlib.suppress(Exception):  # warming is an optimisation only
                self._warming = self.warm()

    def _end_warming(self) -> None:
        if self._warming is not None:
            close = getattr(self._warming, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
            self._warming = None

    def _warm_step(self, sock: socket.socket) -> bool:
        """One step of warming when no call is waiting; False when there is a call
        to answer or nothing (more) to warm. A call never waits for more than the
        one step under way (one file's layout and scan)."""
        if self._warming is None or self._stop.is_set():
            return False
        if _waiting(sock):
            return False  # a call is waiting: it goes first
        with self._run_lock:
            try:
                self.warmed = next(self._warming)
            except StopIteration:
                self._warming = None
                _settle()
                return False
            except Exception:  # warming is an optimisation only: stop it, keep serving
                self._warming = None
                return False
        return True

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    def status(self) -> dict[str, object]:
        return {
            "pid": os.getpid(),
            "served": self.served,
            "auto": self.auto,
            "idle_timeout": int(min(self.idle_timeout, 2**31)),
            "idle_for": int(time.monotonic() - self._last),
            "started": self._started,
            "last_ms": self.last_ms,
            "warmed": list(self.warmed),
            "warming": self._warming is not None,
        }

    def _answer(self, conn: socket.socket) -> None:
        try:
            doc = recv_message(conn)
        except (OSError, ValueError):
            return
        op = doc.get("op")
        with contextlib.suppress(OSError):
            if op == "ping":
                send_message(conn, self.status())
            elif op == "stop":
                self._stop.set()
                send_message(conn, {"pid": os.getpid(), "stopping": True})
            else:
                send_message(conn, self._run(doc))

    def _mode(self, env: dict[str, str]) -> str:
        """The caller's mode: its environment's, else the repository's config's."""
        if env.get("LIBRARIAN_NO_RESIDENT"):
            return "off"
        said = env.get("LIBRARIAN_RESIDENT", "").strip().lower()
        return said if said in MODES else self._config.get()

    def _run(self, doc: dict[str, Any]) -> dict[str, Any]:
        argv = [str(a) for a in doc.get("argv", [])]
        env = {str(k): str(v) for k, v in dict(doc.get("env", {})).items()}
        if doc.get("client") != self._client:
            if self.auto:
                self._stop.set()  # other code than the caller's: the next call starts its own
            return {"declined": True}
        if self.auto and "LIBRARIAN_RESIDENT" not in env and self._config.get() != "auto":
            self._stop.set()  # the config turned auto-start off: end, and let the caller run
            return {"declined": True}
        if self._mode(env) == "off":
            return {"declined": True}
        import gc

        from ..api import replying

        out, err = _routers()
        began = time.perf_counter()
        with self._run_lock, _environment(env, str(doc.get("cwd") or self.root)):
            # the cycle collector waits for the reply too (``_finish_call``): a compose
            # allocates hundreds of thousands of containers, and its garbage is
            # freed by reference counting; what little forms cycles waits milliseconds
            if gc.isenabled():
                gc.disable()
                self._collect_after = True
            with out.capture() as stdout, err.capture() as stderr, replying() as queue:
                self._queued = queue
                try:
                    code = self.handle(argv)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except Exception as exc:  # report, never kill the server
                    stderr.write(f"error: {type(exc).__name__}: {exc}\n")
                    code = 1
            self.served += 1
            self.last_ms = round((time.perf_counter() - began) * 1000)
            return {"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


#: container allocations between two young-generation collections in a server (the
#: interpreter's default is 700): a compose allocates hundreds of thousands of short-lived
#: containers, and each collection walks the young objects still alive
_GC_YOUNG = 20_000


#: calls between two idle-time collections that re-freeze what is kept (``_resettle``)
_RESETTLE_EVERY = 16


def _waiting(sock: socket.socket) -> bool:
    """Whether a call is waiting on ``sock``."""
    import select

    return bool(select.select([sock], [], [], 0)[0])


def _resettle() -> None:
    """Between calls: collect everything (frozen objects too, so garbage frozen with
    them is freed) and freeze what is left, as :func:`_settle` does at start-up."""
    import gc

    gc.unfreeze()
    _settle()


def _settle() -> None:
    """After start-up and after warming: collect once, then leave what is kept (the
    command set, the facade, the warm tables: long lived) out of the cycle collector's
    later passes, which would otherwise walk all of it again and again while a call
    composes; and collect the young generation less often. Only when garbage is
    collected changes, never what a call answers."""
    import gc

    gc.collect()
    gc.freeze()
    first, *older = gc.get_threshold()
    gc.set_threshold(max(first, _GC_YOUNG), *older)


@contextlib.contextmanager
def _environment(env: dict[str, str], cwd: str) -> Iterator[None]:
    """The caller's variables and working folder for the length of one request."""
    keep = {k: v for k, v in os.environ.items() if k.startswith("LIBRARIAN_") or k in PASSED_ENV}
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
            if (k.startswith("LIBRARIAN_") or k in PASSED_ENV) and k not in keep:
                del os.environ[k]
        os.environ.update(keep)


def start_resident(
    root: Path, *, idle_timeout: float = 1800.0, auto: bool = False, warm: bool = False
) -> ResidentServer | None:
    """Bind and warm a resident server for ``root`` (None when one already runs).

    Loads what every answer needs once: the full command set, the facade, the
    tokenizer. With ``warm``, also composes once (recording nothing, no cache) after
    binding, so the per-index tables are built before the first call is answered: a
    call arriving meanwhile waits in the socket's backlog for no longer than it would
    have spent building them itself. When the repository's config turns on
    ``[resident] warm_files``, it then builds, in idle time (``Librarian.warm``), every
    file's span layout (most imported first, within a memory bound) and secret scan,
    one file at a time, checking for a waiting call between files. The caller
    runs ``serve()`` (in a thread, inside the MCP server, which does not warm).
    """
    import typer.main

    from . import _common
    from .app import build_app, run
    from .compose_run import quick_compose

    # the click command once, not per call: typer rebuilds it (every command of every
    # group) on each call of the app, and its parameters keep the coercers they build
    command = typer.main.get_command(build_app())
    _common.keep_librarians()

    def handle(argv: list[str]) -> int:
        # a compose line the quick parser reads runs as a fresh process runs it: no
        # click parsing and value coercion per call
        code = quick_compose(argv) if argv[:1] == ["compose"] else None
        if code is not None:
            return code
        run(command, argv)
        return 0

    def warm_tables() -> Iterator[tuple[int, int]]:
        return iter(_common.open_librarian(root).warm())

    warm_files = False
    if warm:
        from ..api import resident_warms_files

        with contextlib.suppress(Exception):  # a broken config: calls report it
            warm_files = resident_warms_files(root)
    server = ResidentServer(
        root, handle, idle_timeout=idle_timeout, auto=auto, warm=warm_tables if warm_files else None
    )
    if not server.bind():
        return None
    with contextlib.suppress(Exception):  # warming is an optimisation only
        from ..api import Librarian  # noqa: F401
        from ..tokens import get_tokenizer

        get_tokenizer("gpt-4o").count("warm")
    if warm:
        with contextlib.suppress(Exception):
            lib = _common.open_librarian(root)
            lib.compose("warm up", as_of=int(time.time()), use_cache=False, record=False)
            _common.release_librarian(lib)
    _settle()
    return server
