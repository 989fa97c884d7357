"""The parse worker pool: sized to the cores, bounded in flight, dying with its parent.

Workers are plain ``ProcessPoolExecutor`` processes with an initializer that

* asks the kernel to kill them when their parent dies (``PR_SET_PDEATHSIG`` on
  Linux; elsewhere a thread that watches the parent pid), so a killed ``librarian
  index`` leaves no orphans behind;
* ignores Ctrl-C (the parent handles it and stops the pool) and restores the
  default SIGTERM action.

``ordered_map`` keeps at most ``window`` tasks submitted ahead of the one being
consumed, so results never pile up in the parent faster than the writer stores
them (peak memory is a few batches, not the repository), and yields results in
submission order (so the index is written in a deterministic order).
``stop`` kills the workers outright; it is what an interrupted run uses, so a
SIGTERM never waits for a slow parse to finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_all_start_methods, get_context
from typing import Any, TypeVar

__all__ = ["ParsePool", "worker_init"]

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.5)


def worker_init(parent: int) -> None:
    """Initializer of every pool worker (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


class ParsePool:
    """A process pool for parse batches; use as a context manager."""

    def __init__(self, workers: int, *, warm: Callable[[], object] | None = None) -> None:
        forking = "fork" in get_all_start_methods()
        if forking and warm is not None:
            warm()  # load what workers need once here: forked workers inherit it
        ctx = get_context("fork") if forking else get_context("spawn")
        self.workers = workers
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=worker_init,
            initargs=(os.getpid(),),
        )

    def ordered_map(
        self, fn: Callable[..., T], tasks: Iterable[tuple[Any, ...]], *, window: int = 0
    ) -> Iterator[T]:
        """``fn(*task)`` for each task, in order, with at most ``window`` pending.

        The first ``window`` tasks are submitted before this returns (the workers start
        on them while the caller does other work), the rest as results are taken.
        """
        limit = window or 2 * self.workers
        pending: deque[Future[T]] = deque()
        it = iter(tasks)

        def fill() -> None:
            while len(pending) < limit:
                task = next(it, None)
                if task is None:
                    return
                pending.append(self._pool.submit(fn, *task))

        def results() -> Iterator[T]:
            while pending:
                yield pending.popleft().result()
                fill()

        fill()
        return results()

    def stop(self) -> None:
        """Kill the workers now and drop pending work (an interrupted run)."""
        processes = dict(getattr(self._pool, "_processes", None) or {})
        for proc in processes.values():
            with contextlib.suppress(Exception):
                proc.kill()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, et: type[BaseException] | None, *_: object) -> None:
        if et is None:
            self.close()
        else:
            self.stop()
