"""Work a resident server does after it has answered: the call's records.

A compose ends by writing what it decided: the decision record, the private replay
sidecar and the eviction walks of the decisions folder (``bound_state``), and the
secret spans found so far. None of that changes the answer. In a plain process
it runs where it always did, before the command returns. A resident server runs
its handler inside :func:`replying`: the work is queued instead, and the server
runs it (:func:`run_queued`) once the reply is on its way, before it accepts the next
call, so every later call it answers sees the records.

A reader in *another* process (an ``explain`` run with the resident mode off) may
look for a decision in the moment between the reply and its record. While queued
records wait, the state folder holds a marker (:func:`pending`); a reader that
misses a decision waits for the marker to go (:func:`wait_recorded`) and looks again.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path

__all__ = ["PENDING", "after_reply", "pending", "queued", "replying", "run_queued", "wait_recorded"]

#: the marker, in the state folder, while a server has records still to write
PENDING = "records.pending"
#: how long a reader waits for a server's records (a server writes them in milliseconds)
_WAIT_S = 5.0

_QUEUE: ContextVar[list[Callable[[], None]] | None] = ContextVar("after_reply", default=None)


def after_reply(work: Callable[[], None]) -> None:
    """Run ``work`` now, or after the reply when a resident server is answering."""
    queue = _QUEUE.get()
    if queue is None:
        work()
    else:
        queue.append(work)


def queued() -> bool:
    """Whether :func:`after_reply` work waits for a reply here (a server is answering)."""
    return _QUEUE.get() is not None


@contextlib.contextmanager
def replying() -> Iterator[list[Callable[[], None]]]:
    """Queue the :func:`after_reply` work of this thread's calls, for :func:`run_queued`."""
    queue: list[Callable[[], None]] = []
    token = _QUEUE.set(queue)
    try:
        yield queue
    finally:
        _QUEUE.reset(token)


def run_queued(queue: list[Callable[[], None]]) -> list[BaseException]:
    """Run the queued work, in order, all of it; the errors it raised, for a log."""
    errors: list[BaseException] = []
    while queue:
        work = queue.pop(0)
        try:
            work()
        except Exception as exc:
            errors.append(exc)
    return errors


def pending(state_dir: Path) -> Callable[[], None]:
    """Mark ``state_dir`` as having records on their way; returns the unmarking."""
    marker = state_dir / PENDING
    with contextlib.suppress(OSError):
        os.close(os.open(marker, os.O_CREAT | os.O_WRONLY, 0o600))

    def done() -> None:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()

    return done


def wait_recorded(state_dir: Path, *, timeout: float = _WAIT_S) -> bool:
    """Wait while a server's records are on their way (a marker younger than
    ``timeout``: an older one is a killed server's); True when there were some."""
    marker = state_dir / PENDING
    waited = False
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            age = time.time() - marker.stat().st_mtime
        except OSError:
            return waited
        if age > timeout:
            return waited
        waited = True
        time.sleep(0.01)
    return waited
