"""Builtin steps: primitives that run over the index, with no model.

A builtin executor is a function ``fn(ctx: BuiltinContext) -> dict`` returning the
primitive's output (the engine checks it against the output schema and the
postconditions like any other). Executors register through the
``codelibrarian.executors`` entry-point group: an entry point loads a mapping
``{primitive id: function}`` (or a zero-argument callable returning one); the
built-ins arrive through the same group (the entry point named ``builtin``), so a
plugin that ships a ``builtin`` primitive ships its executor the same way.

Executors run in worker threads. ``ctx.store`` is a connection of the worker's
own; long loops call ``ctx.check()`` so a timebox can stop them (it raises
:class:`StepCancelled` once the step was cancelled or its deadline passed).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...config import Config
    from ...index.storage import Storage
    from ...workspace.git import FileDiff

__all__ = [
    "EXECUTOR_GROUP",
    "BuiltinContext",
    "BuiltinFn",
    "CancelToken",
    "StepCancelled",
    "builtin_executors",
    "load_executors",
]

EXECUTOR_GROUP = "codelibrarian.executors"


class StepCancelled(Exception):
    """The step was cancelled (``timeout``: its deadline passed)."""

    def __init__(self, timeout: bool) -> None:
        super().__init__("deadline passed" if timeout else "cancelled")
        self.timeout = timeout


class CancelToken:
    """Cancellation and deadline of one running step, shared with its worker thread."""

    def __init__(
        self, deadline_ms: int | None = None, clock_ms: Callable[[], int] | None = None
    ) -> None:
        self.deadline_ms = deadline_ms
        self._clock = clock_ms or (lambda: time.time_ns() // 1_000_000)
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def remaining_s(self) -> float | None:
        if self.deadline_ms is None:
            return None
        return max(0.0, (self.deadline_ms - self._clock()) / 1000)

    def check(self) -> None:
        """Raise :class:`StepCancelled` when cancelled or past the deadline."""
        if self._event.is_set():
            raise StepCancelled(timeout=False)
        if self.deadline_ms is not None and self._clock() >= self.deadline_ms:
            raise StepCancelled(timeout=True)

    def sleep(self, seconds: float) -> None:
        """Sleep, waking early (and raising) when cancelled."""
        if self._event.wait(seconds):
            raise StepCancelled(timeout=False)
        self.check()


@dataclass
class BuiltinContext:
    """What a builtin step may read: the workspace, its change, the facts, its input."""

    root: Path
    config: Config
    input: Mapping[str, Any]
    facts: Mapping[str, Any]
    token: CancelToken
    #: the current change, computed on first use (a git call)
    changes_of: Callable[[], tuple[FileDiff, ...]] = lambda: ()
    is_sensitive: Callable[[str], bool] = lambda _p: False
    _store: Storage | None = field(default=None, repr=False)
    _changes: tuple[FileDiff, ...] | None = field(default=None, repr=False)

    @property
    def changes(self) -> tuple[FileDiff, ...]:
        if self._changes is None:
            self._changes = tuple(self.changes_of())
        return self._changes

    @property
    def store(self) -> Storage:
        """A read-only index connection of this worker (opened on first use)."""
        if self._store is None:
            from ...index.store import open_store

            self._store = open_store(self.root, readonly=True)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def check(self) -> None:
        self.token.check()

    @property
    def changed_paths(self) -> tuple[str, ...]:
        return tuple(sorted({d.path for d in self.changes if d.status != "deleted"}))


BuiltinFn = Callable[[BuiltinContext], Mapping[str, Any]]


def builtin_executors() -> dict[str, BuiltinFn]:
    """The executors of the packaged builtin primitives (entry point ``builtin``)."""
    from .analysis import EXECUTORS as ANALYSIS
    from .history import EXECUTORS as HISTORY
    from .quality import EXECUTORS as QUALITY

    return {**ANALYSIS, **HISTORY, **QUALITY}


@functools.cache
def load_executors() -> Mapping[str, BuiltinFn]:
    """Every registered executor (built-ins first; a plugin cannot replace one)."""
    out: dict[str, BuiltinFn] = {}
    eps = sorted(
        metadata.entry_points(group=EXECUTOR_GROUP), key=lambda e: (e.name != "builtin", e.name)
    )
    for ep in eps:
        try:
            obj: Any = ep.load()
            table = obj() if callable(obj) and not isinstance(obj, Mapping) else obj
            for pid, fn in dict(table).items():
                if pid not in out and callable(fn):
                    out[str(pid)] = fn
        except Exception:  # a broken plugin must not take the engine down
            continue
    return out
