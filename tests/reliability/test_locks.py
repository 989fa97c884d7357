"""The index lock: a dead writer's orphans are taken over, a live writer is named (#17)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codelibrarian.index.lock import LockOwner, WriterLock, lock_path
from tests.forkserver import ForkServer

from .conftest import NEXT_COMMAND_S, assert_sound, fresh_copy, librarian

pytestmark = pytest.mark.reliability

_HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
if len(sys.argv) > 2:
    os.ftruncate(fd, 0)
    os.pwrite(fd, sys.argv[2].encode(), 0)
print("held", flush=True)
time.sleep(600)
"""


def _holder(lock: Path, record: bytes | None = None) -> subprocess.Popen[str]:
    """A process holding ``lock`` (as an orphaned worker would, or a live writer)."""
    args = [sys.executable, "-c", _HOLD, str(lock)]
    if record is not None:
        args.append(record.decode())
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_orphans_of_a_dead_writer_do_not_block(
    corpus: Path, tmp_path: Path, fork_server: ForkServer
) -> None:
    # forked: the time limit is for taking the lock over, not for a fresh
    # interpreter's imports (seconds on a loaded machine)
    repo = fresh_copy(corpus, tmp_path)
    lock = lock_path(repo / ".librarian" / "index.db")
    lock.parent.mkdir(parents=True, exist_ok=True)
    dead = LockOwner(_dead_pid(), os.uname().nodename, "index", int(time.time()), "held")
    orphan = _holder(lock, dead.to_json())  # holds the flock; its recorded owner is gone
    try:
        began = time.monotonic()
        result = librarian(repo, "index", "--json", via=fork_server)
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - began < NEXT_COMMAND_S
        assert_sound(repo)
        assert orphan.poll() is None  # taken over, not killed
    finally:
        _stop(orphan)


def test_a_live_writer_is_named_and_the_wait_is_bounded(
    corpus: Path, tmp_path: Path, fork_server: ForkServer
) -> None:
    # forked: ``took`` measures the bounded wait, not a fresh interpreter's imports
    repo = fresh_copy(corpus, tmp_path)
    (repo / "librarian.toml").write_text("[index]\nlock_timeout = 2\n")
    lock = lock_path(repo / ".librarian" / "index.db")
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = _holder(lock)
    try:
        pid = holder.pid
        record = LockOwner(pid, os.uname().nodename, "index", int(time.time()), "held")
        lock.write_bytes(record.to_json())
        began = time.monotonic()
        result = librarian(repo, "index", via=fork_server)
        took = time.monotonic() - began
        assert result.returncode == 11, result.stderr
        assert 2 <= took < NEXT_COMMAND_S
        assert f"pid {pid}" in result.stderr
        assert "waiting for the index" in result.stderr
        assert f"kill {pid}" in result.stderr  # the way out
        as_json = librarian(repo, "index", "--json", via=fork_server)
        assert as_json.returncode == 11 and '"holder_pid": ' + str(pid) in as_json.stdout
    finally:
        _stop(holder)
    assert librarian(repo, "index", "--json", via=fork_server).returncode == 0  # free again


def test_two_waiters_on_a_stale_lock_do_not_both_win(tmp_path: Path) -> None:
    """The takeover happens under its own short lock: one waiter gets the index lock,
    the other waits for it like any writer."""
    db = tmp_path / "index.db"
    lock = lock_path(db)
    dead = LockOwner(_dead_pid(), os.uname().nodename, "index", int(time.time()), "held")
    orphan = _holder(lock, dead.to_json())
    try:
        first = WriterLock(db, timeout=5).acquire()
        assert first.took_over and first.unclean
        second = WriterLock(db, timeout=0.5)
        with pytest.raises(Exception, match="being written by pid"):
            second.acquire()
        first.release()
        with WriterLock(db, timeout=5) as third:
            assert not third.unclean  # the first writer released cleanly
    finally:
        _stop(orphan)
