"""Real ``librarian`` processes without paying the interpreter's start-up in each.

A ``librarian`` process spends its first second or more (several on a loaded
machine) importing typer, rich, pydantic, the MCP SDK and the library. Tests that
start one per round (the kill tests start hundreds) spend most of their time
there. ``ForkServer`` starts one parent that imports all of that once, then forks
a child per request; each child runs exactly what the ``librarian`` console
script runs (``codelibrarian.cli.app:main`` with the argv asked for), with the
environment, working directory and standard streams asked for, the default
signal dispositions (the CLI installs its own SIGTERM handler, as it does in a
fresh process), optionally in a new session. It ends like a fresh interpreter
does (``SystemExit`` from ``main``, atexit handlers, then exit), so a child is a
real process that a test signals, waits on and whose children (parse pool
workers, a background index run) are its own.

What differs from a fresh process: the modules are already imported (so a kill
never lands during imports; tests that care about start-up keep using the real
executable), the hash seed is the parent's, and numpy's BLAS was loaded with
one thread (a forked child must not inherit a BLAS thread pool). The parent must
be single-threaded when it forks; it checks that before every fork.

Protocol (a ``SOCK_SEQPACKET`` socket pair, one JSON message per packet): the
client sends ``{"argv", "cwd", "env", "session"}`` with three file descriptors
(the child's stdin, stdout and stderr) attached; the server answers
``{"pid": N}`` once forked and ``{"exit": N, "code": C}`` when the child ended
(``C`` negative: the signal that ended it). Closing the socket ends the server,
which SIGKILLs children still running.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
#: the console script's path: a child's ``sys.argv[0]``, and the real executable
LIBRARIAN = str(Path(sys.executable).parent / "librarian")
#: how long the server may take to import everything (a loaded machine is slow)
READY_S = 180.0
_POLL_S = 0.005


# ---------------------------------------------------------------- the server side


def _preload() -> None:
    """Import what ``index``, ``compose``, ``serve`` and the other commands import."""
    import importlib

    # numpy's BLAS starts a thread pool when loaded unless told not to; the server
    # must stay single-threaded to fork safely (children read os.environ afresh)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    from codelibrarian.cli.app import build_app
    from codelibrarian.cli.commands import MODULES

    build_app(MODULES)
    for name in (
        "codelibrarian.api",
        "codelibrarian.index.indexer",
        "codelibrarian.mcp.server",
        "codelibrarian.query.embed",
        "codelibrarian.query.pipeline",
        "codelibrarian.service.compose",
        "codelibrarian.service.inspect",
        "codelibrarian.service.query",
        "codelibrarian.execution.service",
        "mcp.server.stdio",
        "concurrent.futures.process",
        "multiprocessing.connection",
    ):
        importlib.import_module(name)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _send(sock: socket.socket, message: Mapping[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def _serve(fd: int) -> dict[str, Any] | None:
    """The server loop; returns the request in a forked child, None when done."""
    sock = socket.socket(fileno=fd)
    server = os.getpid()
    try:
        _preload()
        if _threads() != 1:
            raise RuntimeError(f"the fork server runs {_threads()} threads after its imports")
    except BaseException as exc:
        _send(sock, {"error": f"{type(exc).__name__}: {exc}"})
        raise
    sys.stdout.flush()
    sys.stderr.flush()
    # the imported objects never change: keep the collector (and the copy-on-write
    # faults its scans would cause in every child) off them
    gc.freeze()
    _send(sock, {"ready": True})
    children: set[int] = set()
    try:
        while True:
            readable, _, _ = select.select([sock], [], [], _POLL_S if children else None)
            if readable:
                data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
                if not data:
                    return None
                request = json.loads(data)
                if _threads() != 1:  # nothing here starts one; a fork must never copy one
                    raise RuntimeError("the fork server is no longer single-threaded")
                pid = os.fork()
                if pid == 0:
                    sock.close()
                    for target, fd_in in enumerate(fds):
                        os.dup2(fd_in, target)
                        os.close(fd_in)
                    return dict(request)
                for fd_in in fds:
                    os.close(fd_in)
                children.add(pid)
                _send(sock, {"pid": pid})
            for pid in sorted(children):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    children.discard(pid)
                    _send(sock, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})
    finally:
        if os.getpid() == server:  # not in a child on its way out of this loop
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def _child(request: dict[str, Any]) -> None:
    """Become the ``librarian`` process the request asked for, run it, and end."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if request["session"]:
        os.setsid()
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = [LIBRARIAN, *request["argv"]]
    code: int = 0
    interrupted = False
    try:
        from codelibrarian.cli.app import main

        main()
    except SystemExit as exc:  # what the interpreter makes of it at the top level
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:
        traceback.print_exc()
        code = 1
    _finalize(code, interrupted=interrupted)


def _finalize(code: int, *, interrupted: bool) -> None:
    """End as the interpreter does, up to its module teardown: wait for non-daemon
    threads, run atexit callbacks (multiprocessing's, weakref finalizers), flush the
    standard streams, exit. The teardown itself is skipped: in a child holding
    every module it takes a second or more (each object it frees is a copy-on-write
    fault) and only runs ``__del__`` methods a crash-safe command cannot rely on."""
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    if interrupted:  # like CPython: die of SIGINT, so the parent sees the signal
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


# ---------------------------------------------------------------- the client side


class ForkedProcess:
    """A forked ``librarian``: the parts of ``subprocess.Popen`` the tests use."""

    def __init__(
        self,
        server: ForkServer,
        args: list[str],
        pid: int,
        stdin: IO[str] | None,
        stderr: IO[str] | None,
    ) -> None:
        self.args = args
        self.pid = pid
        self.stdin = stdin
        self.stdout: IO[str] | None = None
        self.stderr = stderr
        self.returncode: int | None = None
        self._server = server

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        # the server reaps an ended child; until it said so, the pid is still ours
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ForkServer:
    """One pre-imported parent per test session (per xdist worker); see the module doc."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # the server's own stderr, shown if it fails
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.forkserver", str(theirs.fileno())],
            cwd=ROOT,
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        theirs.close()
        self._sock = ours
        self._lock = threading.Lock()  # one request at a time
        self._cond = threading.Condition()
        self._codes: dict[int, int] = {}
        self._replies: list[dict[str, Any]] = []
        self._closed = False
        threading.Thread(target=self._read, name="fork-server-reader", daemon=True).start()
        ready = self._reply(READY_S)
        if not ready.get("ready"):
            raise RuntimeError(f"the fork server did not start: {ready}; {self._stderr()}")

    def _stderr(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-4000:]

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            with self._cond:
                if not data:
                    self._closed = True
                    self._cond.notify_all()
                    return
                message = json.loads(data)
                if "exit" in message:
                    self._codes[message["exit"]] = message["code"]
                else:
                    if "pid" in message:
                        # the system may reuse an ended child's pid (pid_max is 32,768
                        # here): an exit code kept for it belongs to that earlier child,
                        # and would make this one look finished before it wrote a byte
                        self._codes.pop(message["pid"], None)
                    self._replies.append(message)
                self._cond.notify_all()

    def _reply(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._replies:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise RuntimeError(f"the fork server did not answer: {self._stderr()}")
                self._cond.wait(left)
            return self._replies.pop(0)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """``pid``'s exit code, waiting up to ``timeout`` (None: for ever) for it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while pid not in self._codes:
                if self._closed:
                    raise RuntimeError(f"the fork server ended: {self._stderr()}")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._cond.wait(left)
            return self._codes[pid]

    def spawn(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        fds: tuple[int, int, int],
        new_session: bool = False,
    ) -> int:
        """Fork a child running ``librarian ARGV`` on ``fds`` (stdin, stdout, stderr)."""
        request = {"argv": argv, "cwd": str(cwd), "env": dict(env), "session": new_session}
        with self._lock:
            socket.send_fds(self._sock, [json.dumps(request).encode()], list(fds))
            reply = self._reply(60.0)
        if "pid" not in reply:
            raise RuntimeError(f"the fork server refused: {reply}")
        return int(reply["pid"])

    def start(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bool = True,
        stderr: bool = True,
        new_session: bool = False,
    ) -> ForkedProcess:
        """A running child: stdin and stderr are pipes (text) if asked, stdout /dev/null."""
        null = os.open(os.devnull, os.O_RDWR)
        in_r, in_w = os.pipe() if stdin else (null, -1)
        err_r, err_w = os.pipe() if stderr else (-1, null)
        try:
            pid = self.spawn(
                argv, cwd=cwd, env=env, fds=(in_r, null, err_w), new_session=new_session
            )
        except BaseException:
            for fd in {in_w, err_r} - {-1}:
                os.close(fd)
            raise
        finally:
            for fd in {null, in_r, err_w}:  # the child's ends: it has its own copies
                os.close(fd)
        return ForkedProcess(
            self,
            argv,
            pid,
            open(in_w, "w", encoding="utf-8") if stdin else None,
            open(err_r, encoding="utf-8") if stderr else None,
        )

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        input: str | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Like ``subprocess.run(capture_output=True, text=True)``; kills on timeout."""
        with (
            tempfile.TemporaryFile() as stdin,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
        ):
            if input is not None:
                stdin.write(input.encode())
                stdin.seek(0)
            source = stdin.fileno() if input is not None else os.open(os.devnull, os.O_RDONLY)
            try:
                pid = self.spawn(argv, cwd=cwd, env=env, fds=(source, out.fileno(), err.fileno()))
            finally:
                if input is None:
                    os.close(source)
            code = self.exit_code(pid, timeout)
            if code is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                self.exit_code(pid, None)
                raise subprocess.TimeoutExpired(argv, timeout or 0)
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(
                argv,
                code,
                out.read().decode("utf-8", errors="replace"),
                err.read().decode("utf-8", errors="replace"),
            )

    def close(self) -> None:
        """End the server (it SIGKILLs children still running) and wait for it."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()


_shared: list[ForkServer] = []
_shared_lock = threading.Lock()


def shared() -> ForkServer:
    """This process's fork server (one per xdist worker), started on first use. It
    ends with this process: closed at exit, or on its own when its socket closes."""
    with _shared_lock:
        if not _shared:
            server = ForkServer()
            atexit.register(server.close)
            _shared.append(server)
        return _shared[0]


if __name__ == "__main__":
    child_request = _serve(int(sys.argv[1]))
    if child_request is not None:
        _child(child_request)
