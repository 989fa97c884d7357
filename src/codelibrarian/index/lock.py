"""The single-writer lock of an index: who holds it, bounded waits, stale takeover.

``index.db.lock`` is locked with ``flock`` by the one process that writes the
index (an index run, ``--watch``, a compose that refreshes). The kernel drops a
``flock`` when the last descriptor of the locked file closes, so a killed
writer releases it by itself, *unless* a child it forked still holds an
inherited descriptor. Three things keep that from hanging later commands:

* every lock descriptor is closed in forked children (``os.register_at_fork``),
  and pool workers die with their parent (``index.pool``);
* the lock file records its holder (pid, process start time, host, command,
  since when). A waiter that finds the lock held while the recorded holder is
  gone (dead, or its pid reused) is looking at orphans of a dead writer: it takes
  the lock over by renaming a fresh, locked file over the old one (under a
  short-lived takeover lock, so two waiters cannot both win);
* a wait is bounded: ``on_wait`` is told who holds the lock while waiting, and
  after ``timeout`` seconds ``IndexBusy`` names the holder and the way out.

The record also tells whether the previous writer finished: it says ``held``
while a writer works and ``released`` after a normal exit. A lock acquired over
a ``held`` record means the last writer was killed; the caller then checks the
database (``health.check_after_crash``) before trusting it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import IndexBusy

__all__ = [
    "GRAPHS_COMMAND",
    "LockOwner",
    "WriterLock",
    "holder",
    "lock_path",
    "read_owner",
    "writer_lock",
]

_POLL_S = 0.05
_NOTIFY_EVERY_S = 1.0
#: the lock's command while a reader stores graphs an index run left stale
#: (``graphcache.py``): it changes no content, so a caller deciding whether the
#: index is being written treats it apart from an index run
GRAPHS_COMMAND = "graphs"

#: descriptors of locks held by this process, closed in every forked child
_HELD_FDS: set[int] = set()
_FDS_LOCK = threading.Lock()


def _close_in_child() -> None:
    for fd in list(_HELD_FDS):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD_FDS.clear()


os.register_at_fork(after_in_child=_close_in_child)


def lock_path(db_path: Path) -> Path:
    """The lock file of the index at ``db_path``."""
    return Path(str(db_path) + ".lock")


def _proc_start(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (Linux), to tell a reused pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        if fields[0] == b"Z":  # a zombie holds nothing
            return -1
        return int(fields[19])
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class LockOwner:
    """What a lock file says about its holder."""

    pid: int
    host: str
    command: str
    since: int
    state: str  # "held" or "released"
    proc_start: int | None = None

    def alive(self) -> bool:
        """Whether the recorded holder still runs (assumed when it is on another host)."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        now = _proc_start(self.pid)
        if now == -1:
            return False
        return self.proc_start is None or now is None or now == self.proc_start

    def describe(self) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} ({self.command}, since {when})"

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "pid": self.pid,
                "host": self.host,
                "command": self.command,
                "since": self.since,
                "state": self.state,
                "proc_start": self.proc_start,
            },
            sort_keys=True,
        ).encode()


def _parse_owner(raw: bytes) -> LockOwner | None:
    try:
        data = json.loads(raw.decode("utf-8"))
        return LockOwner(
            pid=int(data["pid"]),
            host=str(data["host"]),
            command=str(data["command"]),
            since=int(data["since"]),
            state=str(data["state"]),
            proc_start=None if data.get("proc_start") is None else int(data["proc_start"]),
        )
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def read_owner(db_path: Path) -> LockOwner | None:
    """The holder recorded in the lock file of ``db_path`` (None when there is none)."""
    try:
        return _parse_owner(lock_path(db_path).read_bytes())
    except OSError:
        return None


def holder(db_path: Path) -> LockOwner | None:
    """Who writes the index at ``db_path`` right now (None when nobody, or only orphans).

    A non-blocking probe: readers use it to answer from the committed index instead
    of waiting for a writer (a background index run, ``--watch``) to finish.
    """
    path = lock_path(db_path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _parse_owner(os.pread(fd, 4096, 0))
            if owner is None:
                return LockOwner(-1, socket.gethostname(), "unknown", int(time.time()), "held")
            return owner if owner.alive() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _write_record(fd: int, owner: LockOwner) -> None:
    data = owner.to_json()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    fst = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)


class WriterLock:
    """Hold the writer lock of one index; use as a context manager (see the module doc).

    ``timeout`` is how long to wait for a live holder (None: forever; 0: not at
    all). After entering, ``previous`` is the record found in the file and
    ``unclean`` says whether the last writer was killed while writing.
    ``keep_unclean``: a holder that does not check the database (a reader storing
    derived graphs) puts a killed writer's record back on release, so the next
    index run still checks.
    """

    def __init__(
        self,
        db_path: Path,
        *,
        command: str = "index",
        timeout: float | None = None,
        on_wait: Callable[[LockOwner | None, float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        keep_unclean: bool = False,
    ) -> None:
        self.db_path = Path(db_path)
        self.path = lock_path(self.db_path)
        self.command = command
        self.timeout = timeout
        self.on_wait = on_wait
        self._clock = clock
        self._fd: int | None = None
        self._record: LockOwner | None = None
        self.previous: LockOwner | None = None
        self.took_over = False
        self.keep_unclean = keep_unclean

    @property
    def unclean(self) -> bool:
        return self.previous is not None and self.previous.state == "held"

    def _mine(self, state: str) -> LockOwner:
        pid = os.getpid()
        return LockOwner(
            pid=pid,
            host=socket.gethostname(),
            command=self.command,
            since=int(time.time()),
            state=state,
            proc_start=_proc_start(pid),
        )

    def acquire(self) -> WriterLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        started = self._clock()
        notified = -_NOTIFY_EVERY_S
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _parse_owner(os.pread(fd, 4096, 0))
                os.close(fd)
                if owner is not None and owner.state == "held" and not owner.alive():
                    if self._take_over(owner):
                        return self
                    continue
                waited = self._clock() - started
                if self.timeout is not None and waited >= self.timeout:
                    raise self._busy(owner, waited) from None
                if self.on_wait is not None and waited - notified >= _NOTIFY_EVERY_S:
                    notified = waited
                    self.on_wait(owner, waited)
                time.sleep(_POLL_S)
                continue
            if not _same_file(fd, self.path):  # replaced while we waited: lock the new one
                os.close(fd)
                continue
            self._hold(fd, _parse_owner(os.pread(fd, 4096, 0)))
            return self

    def _hold(self, fd: int, previous: LockOwner | None) -> None:
        self.previous = previous
        self._record = self._mine("held")
        _write_record(fd, self._record)
        self._fd = fd
        with _FDS_LOCK:
            _HELD_FDS.add(fd)

    def _take_over(self, stale: LockOwner) -> bool:
        """Replace a lock file held only by orphans of a dead writer; True when we hold it."""
        guard = os.open(str(self.path) + ".takeover", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(guard, fcntl.LOCK_EX)
            # look again under the guard: another waiter may have taken over already
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                now = _parse_owner(os.pread(fd, 4096, 0))
                os.close(fd)
                if now is None or now != stale or now.alive():
                    return False
                tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
                fresh = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                fcntl.flock(fresh, fcntl.LOCK_EX)
                tmp.replace(self.path)
                self.took_over = True
                self._hold(fresh, stale)
                return True
            # it came free meanwhile: an ordinary acquisition
            if not _same_file(fd, self.path):
                os.close(fd)
                return False
            self._hold(fd, _parse_owner(os.pread(fd, 4096, 0)))
            return True
        finally:
            os.close(guard)

    def _busy(self, owner: LockOwner | None, waited: float) -> IndexBusy:
        who = owner.describe() if owner is not None else "another process"
        hint = (
            f"Wait for it to finish, or stop it (kill {owner.pid}) and run the command again."
            if owner is not None
            else "Wait for the other librarian command to finish, then run this one again."
        )
        return IndexBusy(
            f"the index at {self.db_path} is being written by {who}; "
            f"gave up after waiting {waited:.0f}s.",
            holder_pid=owner.pid if owner is not None else None,
            hint=hint,
        )

    def release(self) -> None:
        fd = self._fd
        if fd is None:
            return
        self._fd = None
        with _FDS_LOCK:
            _HELD_FDS.discard(fd)
        try:
            if self._record is not None:
                left = self._mine("released")
                if self.keep_unclean and self.unclean and self.previous is not None:
                    left = self.previous
                with contextlib.suppress(OSError):
                    _write_record(fd, left)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *_: object) -> None:
        self.release()


@contextmanager
def writer_lock(
    db_path: Path,
    *,
    command: str = "index",
    timeout: float | None = None,
    on_wait: Callable[[LockOwner | None, float], None] | None = None,
) -> Iterator[WriterLock]:
    """Hold the writer lock of the index at ``db_path`` (see :class:`WriterLock`)."""
    lock = WriterLock(db_path, command=command, timeout=timeout, on_wait=on_wait)
    with lock:
        yield lock
