"""Finish an index in the background: a detached ``librarian index --background`` process.

When ``compose`` or ``query`` answered from a partial index (``first_files``),
the rest is parsed by a separate process, so the caller returns at once and the
next call finds more of the index ready. The process runs at a lower priority
(``nice`` 10), takes the index's writer lock like any writer (so it never races
another one), writes nothing on stdout and its notes to ``.librarian/index.log``.
Killed at any point it leaves a valid index: the next call or run continues.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..workspace.state import State

__all__ = ["start_background"]

#: pids of started children not yet reaped; reaped as they end, on the next start
_CHILDREN: list[int] = []


def _reap() -> None:
    """Collect children that ended, so none stays a zombie while this process runs."""
    for pid in list(_CHILDREN):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid  # reaped elsewhere
        if done:
            _CHILDREN.remove(pid)


def start_background(root: Path) -> int | None:
    """Start the background run for ``root``; its pid (None if it could not start).

    The child is spawned detached (its own session), not held as a ``Popen``: it is
    meant to outlive this process, and a ``Popen`` dropped while its process runs
    warns at exit. A child still running when this process ends is adopted by init.
    """
    _reap()
    log = State(root).dir / "index.log"
    env = {**os.environ, "LIBRARIAN_NO_RESIDENT": "1"}
    # -P: the repository may be the working folder, and its modules (a stdlib copy, a
    # package named like a dependency) must not shadow ours
    argv = [sys.executable, "-P", "-m", "codelibrarian", "index", str(root), "--background"]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(log), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
    ]
    try:
        pid = os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    except OSError:
        return None
    _CHILDREN.append(pid)
    return pid
