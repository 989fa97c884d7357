"""The SQLite backend's full-text primitives (``storage.TextIndex``) over FTS5.

``chunks_fts`` is a contentless FTS5 table (``schema.py``) whose rowid is the chunk
id; FTS5's ``bm25()`` is the scoring contract itself, negated (FTS5 ranks lower
first). The engine above (``search.Bm25Search``) decides what to ask.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from .search import BM25_WEIGHTS
from .sqlite_base import generation, marks

if TYPE_CHECKING:
    from .storage import ChunkHead, ScoredChunk, TermScores

__all__ = ["SqliteText"]

_WEIGHTS = ", ".join(str(x) for x in BM25_WEIGHTS)


def _phrase(term: str) -> str:
    return f'"{term}"'


class SqliteText:
    """:class:`~.storage.TextIndex` on one connection of the index."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def generation(self) -> int:
        return generation(self._conn)

    def chunk_count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def term_count(self, term: str) -> int:
        # counting a term's rows reads its row ids only: no positions, no scoring
        row = self._conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (_phrase(term),)
        ).fetchone()
        return int(row[0])

    def term_scores(self, term: str) -> TermScores:
        import numpy as np  # imported on use, as the graph code does

        rows = self._conn.execute(
            f"SELECT rowid, bm25(chunks_fts, {_WEIGHTS}) FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY rowid",
            (_phrase(term),),
        ).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        neg = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        return ids, -neg

    def best_chunks(self, terms: Sequence[str], fetch: int) -> list[ScoredChunk]:
        match = " OR ".join(_phrase(t) for t in terms)
        # the best rows are chosen from the full-text index alone, and only they are
        # joined to their chunk and file (every chunk row has its full-text row and a file)
        rows: list[ScoredChunk] = self._conn.execute(
            f"SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, -h.rank, "
            f"c.tokens FROM (SELECT rowid AS id, bm25(chunks_fts, {_WEIGHTS}) AS rank "
            f"FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?) h "
            f"JOIN chunks c ON c.id = h.id JOIN files f ON f.id = c.file_id "
            f"ORDER BY h.rank, c.id",
            (match, fetch),
        ).fetchall()
        return rows

    def chunk_heads(self, ids: Collection[int]) -> dict[int, ChunkHead]:
        wanted = list(ids)
        found: dict[int, ChunkHead] = {}
        for at in range(0, len(wanted), 500):  # bounded parameter lists
            group = wanted[at : at + 500]
            for r in self._conn.execute(
                "SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, c.tokens "
                f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks(group)})",
                group,
            ):
                found[int(r[0])] = (r[1], r[2], r[3], r[4], r[5], r[6])
        return found
