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
import subprocess
import sys
from pathlib import Path

from ..workspace.state import State

__all__ = ["start_background"]

#: started children, kept so they are reaped if they end while we still run
_CHILDREN: list[subprocess.Popen[bytes]] = []


def start_background(root: Path) -> int | None:
    """Start the background run for ``root``; its pid (None if it could not start)."""
    for child in list(_CHILDREN):
        if child.poll() is not None:
            _CHILDREN.remove(child)
    log = State(root).dir / "index.log"
    env = {**os.environ, "LIBRARIAN_NO_RESIDENT": "1"}
    try:
        with open(log, "ab") as err:
            child = subprocess.Popen(
                # -P: the repository is the working folder, and its modules (a stdlib
                # copy, a package named like a dependency) must not shadow ours
                [sys.executable, "-P", "-m", "codelibrarian", "index", str(root), "--background"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                cwd=root,
                env=env,
                start_new_session=True,
            )
    except OSError:
        return None
    _CHILDREN.append(child)
    return child.pid
