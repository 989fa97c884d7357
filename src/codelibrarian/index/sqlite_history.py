"""The SQLite backend's history rows (``storage.HistoryRecords``): the recent commits'
message words (FTS5 ``past_commits``, the commit's order as rowid) with the code files
each edited (``past_edits``), and the co-change graph (``cochange``).

What is read from git, and how compose weighs it, is ``history_edits.py``; the
co-change edges are computed in ``graph.cochange_edges``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from .sqlite_base import marks, transaction

__all__ = ["SqliteHistory"]


class SqliteHistory:
    """:class:`~.storage.HistoryRecords` on one connection of the index."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def set_past_edits(self, commits: Sequence[tuple[int, str, Sequence[str]]], key: str) -> None:
        with transaction(self._conn) as conn:
            conn.execute("DELETE FROM past_commits")
            conn.execute("DELETE FROM past_edits")
            conn.executemany(
                "INSERT INTO past_commits(rowid, words) VALUES (?, ?)",
                [(order, words) for order, words, _ in commits],
            )
            conn.executemany(
                "INSERT INTO past_edits(ord, path) VALUES (?, ?)",
                [(order, path) for order, _, paths in commits for path in paths],
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('past_edits_key', ?)", (key,)
            )

    def similar_commits(self, words: Sequence[str], limit: int) -> list[tuple[int, int]]:
        terms = sorted({w for w in words if w.isalnum()})
        if not terms or limit <= 0:
            return []
        try:
            rows = self._conn.execute(
                "SELECT rowid, bm25(past_commits) FROM past_commits WHERE past_commits MATCH ? "
                "ORDER BY rank, rowid LIMIT ?",
                (" OR ".join(f'"{t}"' for t in terms), limit * 2 + 10),
            ).fetchall()
        except sqlite3.OperationalError:  # a read-only index of an older schema
            return []
        found = sorted((-round(-float(r[1]) * 1000), int(r[0])) for r in rows)
        return [(order, -neg) for neg, order in found[:limit] if neg < 0]

    def past_edits(self, orders: Collection[int]) -> list[tuple[int, str]]:
        if not orders:
            return []
        rows = self._conn.execute(
            f"SELECT ord, path FROM past_edits WHERE ord IN ({marks(list(orders))}) "
            "ORDER BY ord, path",
            sorted(orders),
        ).fetchall()
        return [(int(o), str(p)) for o, p in rows]

    def set_cochange(self, edges: Sequence[tuple[str, str, int]], key: str) -> None:
        with transaction(self._conn) as conn:
            conn.execute("DELETE FROM cochange")
            conn.executemany("INSERT INTO cochange(src, dst, weight) VALUES (?, ?, ?)", edges)
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('cochange_key', ?)", (key,)
            )
