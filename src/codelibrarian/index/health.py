"""Is the index database sound, and what to do when it is not.

The index is derived data: everything in it can be rebuilt from the workspace.
So a database that fails SQLite's own checks is not repaired row by row; it is
set aside and rebuilt, and the run that did so says it once (a note in its
stats, a warning in a compose result).

* ``quick_check`` runs ``PRAGMA quick_check`` (~0.15 s on a 150 MB index), which
  the indexer does whenever its lock says the last writer was killed mid-run
  (``lock.WriterLock.unclean``) and whenever opening the database fails.
* ``integrity_check`` runs the full ``PRAGMA integrity_check`` plus a foreign key
  check; ``librarian doctor`` reports it.
* ``discard`` removes the database and its WAL files (callers hold the writer lock).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

__all__ = ["BackgroundCheck", "discard", "integrity_check", "quick_check"]

_MAX_PROBLEMS = 5


def _check(db_path: Path, pragma: str) -> list[str]:
    if not db_path.exists():
        return []
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10.0)
    except sqlite3.Error as exc:
        return [f"cannot open: {exc}"]
    try:
        rows = conn.execute(pragma).fetchmany(_MAX_PROBLEMS)
        problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
        if not problems and pragma.startswith("PRAGMA integrity_check"):
            bad = conn.execute("PRAGMA foreign_key_check").fetchmany(_MAX_PROBLEMS)
            problems = [f"row {r[1]} of {r[0]} points at a missing {r[2]} row" for r in bad]
        return problems
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()


def quick_check(db_path: Path) -> list[str]:
    """Problems ``PRAGMA quick_check`` finds (empty when sound or absent)."""
    return _check(db_path, "PRAGMA quick_check")


class BackgroundCheck:
    """``quick_check`` of a database in a thread (SQLite runs it without the GIL), for a
    caller that reads the same database meanwhile; ``problems()`` waits for the answer."""

    def __init__(self, db_path: Path) -> None:
        self._found: list[str] = []
        self._thread = threading.Thread(
            target=self._run, args=(db_path,), name="quick_check", daemon=True
        )
        self._thread.start()

    def _run(self, db_path: Path) -> None:
        try:
            self._found = quick_check(db_path)
        except Exception as exc:  # reported like a problem the check found
            self._found = [f"the check failed: {exc}"]

    def problems(self) -> list[str]:
        self._thread.join()
        return self._found


def integrity_check(db_path: Path) -> list[str]:
    """Problems of the full ``PRAGMA integrity_check`` and foreign key check."""
    return _check(db_path, "PRAGMA integrity_check")


def discard(db_path: Path) -> None:
    """Remove the database and its journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(str(db_path) + suffix).unlink()
