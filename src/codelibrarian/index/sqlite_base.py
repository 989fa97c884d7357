"""What every part of the SQLite backend does with its one connection.

The backend is a store of records (``store.py``) with parts that share its
connection: the full-text primitives (``sqlite_text.py``), the graph rows
(``sqlite_graphs.py``) and the history rows (``sqlite_history.py``). They read the
generation, take read snapshots and write in transactions the same way, here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

__all__ = ["chunked", "generation", "marks", "snapshot", "transaction"]

#: most values bound in one statement (SQLite's own limit is far above)
_GROUP = 500


def generation(conn: sqlite3.Connection) -> int:
    """The index's content counter (``storage.RecordReader.generation``)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction, so the reads inside see one committed state (WAL keeps
    it while writers commit); inside a transaction already, that one is used."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


@contextmanager
def transaction(conn: sqlite3.Connection, *, bump: bool = True) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error).

    ``bump`` advances the generation, the key of data derived from the index's
    content; writes that change no content (mtimes, flags) leave it alone.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        if bump:
            conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def chunked(items: Iterable[str], size: int = _GROUP) -> Iterator[list[str]]:
    """``items`` sorted, in groups of at most ``size`` (bounded parameter lists)."""
    ordered = sorted(items)
    for at in range(0, len(ordered), size):
        yield ordered[at : at + size]


def marks(group: Sequence[object]) -> str:
    """``?, ?, ...``: one placeholder per value of ``group``."""
    return ", ".join("?" * len(group))
