"""The SQLite backend's graph rows (``storage.GraphCacheRows``): the records the file
graphs are derived from, the ``graph_cache`` table, and the claim to store it.

The claim is the index's writer lock (``lock.py``), taken without waiting under the
command :data:`~.lock.GRAPHS_COMMAND`; the lock's record says whether an index run
or another reader holds it. A store opened by the indexer (``locked``) holds the
lock already.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import IndexBusy, IndexCorrupt
from .lock import GRAPHS_COMMAND, WriterLock, read_owner
from .sqlite_base import chunked, marks, snapshot, transaction
from .sqlite_base import generation as read_generation
from .storage import DerivedClaim

if TYPE_CHECKING:
    from .graphdelta import Derived
    from .storage import Edges, IndexStore

__all__ = ["SqliteGraphRows"]


def _nothing() -> None:
    return None


class SqliteGraphRows:
    """:class:`~.storage.GraphCacheRows` on one connection of the index at ``path``."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        readonly: bool,
        locked: bool,
        open_writer: Callable[[], IndexStore] | None = None,
    ) -> None:
        """``open_writer`` opens a writable store of the same index, for a read-only
        one to have its graphs stored (:meth:`derived_by_writer`)."""
        self._conn = conn
        self.path = path
        self.readonly = readonly
        self.locked = locked
        self._open_writer = open_writer

    # -- the cache rows and the claim ----------------------------------------------------

    def generation(self) -> int:
        return read_generation(self._conn)

    def snapshot(self) -> AbstractContextManager[None]:
        return snapshot(self._conn)

    def derived_rows(self, kinds: Sequence[str]) -> dict[str, tuple[int, bytes]]:
        return {
            str(kind): (int(g), bytes(data))
            for kind, g, data in self._conn.execute(
                f"SELECT kind, generation, data FROM graph_cache WHERE kind IN ({marks(kinds)})",
                tuple(kinds),
            )
        }

    def derived_generations(self, kinds: Sequence[str]) -> dict[str, int]:
        return {
            str(kind): int(g)
            for kind, g in self._conn.execute(
                f"SELECT kind, generation FROM graph_cache WHERE kind IN ({marks(kinds)})",
                tuple(kinds),
            )
        }

    def put_derived_rows(self, rows: Sequence[tuple[str, bytes]], generation: int) -> None:
        # a connection of an older version writing without the lock, or a full disk:
        # given up after 50 ms
        self._conn.execute("PRAGMA busy_timeout = 50")
        try:
            with transaction(self._conn, bump=False) as conn:
                if read_generation(conn) != generation:
                    return
                conn.executemany(
                    "INSERT OR REPLACE INTO graph_cache(kind, generation, data) VALUES (?, ?, ?)",
                    [(kind, generation, blob) for kind, blob in rows],
                )
        except sqlite3.OperationalError:
            pass
        finally:
            self._conn.execute("PRAGMA busy_timeout = 30000")

    def claim_derived(self) -> DerivedClaim:
        if self.locked:
            return DerivedClaim("held", _nothing)
        lock = WriterLock(self.path, command=GRAPHS_COMMAND, timeout=0, keep_unclean=True)
        try:
            lock.acquire()
        except IndexBusy:
            owner = read_owner(self.path)
            if owner is not None and owner.command == GRAPHS_COMMAND:
                return DerivedClaim("storing", _nothing)
            return DerivedClaim("indexing", _nothing)
        return DerivedClaim("held", lock.release)

    def derived_by_writer(self) -> Derived | None:
        """A writable connection of the same index derives and stores them, when the
        file can be written (``librarian map``, workflow steps open read-only)."""
        if self._open_writer is None or not (
            os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)
        ):
            return None
        try:
            writer = self._open_writer()
            try:
                return writer.derived_graphs()
            finally:
                writer.close()
        except (IndexCorrupt, sqlite3.Error, OSError):
            return None

    # -- the records graphs are derived from ----------------------------------------------

    def _path_of(self) -> dict[int, str]:
        return dict(self._conn.execute("SELECT id, path FROM files"))

    def content_hashes(self) -> dict[str, str]:
        return dict(self._conn.execute("SELECT path, content_hash FROM files"))

    def defined_names(self) -> Iterator[tuple[str, str]]:
        # rows by file id, mapped to paths here: no join
        path_of = self._path_of()
        for name, fid in self._conn.execute("SELECT name, file_id FROM symbols"):
            yield path_of[fid], name

    def reference_sums(self) -> Iterator[tuple[str, str, int]]:
        # grouped in the table's key order (file, name, kind): no join, no sort
        path_of = self._path_of()
        for fid, name, count in self._conn.execute(
            "SELECT file_id, name, SUM(count) FROM refs GROUP BY file_id, name"
        ):
            yield path_of[fid], name, count

    def import_edges(self) -> Edges:
        rows = self._conn.execute(
            "SELECT f.path, i.resolved, COUNT(*) FROM imports i JOIN files f "
            "ON f.id = i.file_id WHERE i.resolved IS NOT NULL AND i.resolved != f.path "
            "GROUP BY f.path, i.resolved ORDER BY f.path, i.resolved"
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    def cochange_edges(self) -> Edges:
        rows = self._conn.execute("SELECT src, dst, weight FROM cochange ORDER BY src, dst")
        return [(r[0], r[1], int(r[2])) for r in rows]

    def names_defined_in(self, paths: Collection[str]) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {p: set() for p in paths}
        for group in chunked(paths):
            rows = self._conn.execute(
                "SELECT DISTINCT f.path, s.name FROM symbols s JOIN files f ON f.id = s.file_id "
                f"WHERE f.path IN ({marks(group)})",
                group,
            )
            for path, name in rows:
                found[path].add(name)
        return found

    def definitions_of(self, names: Collection[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for group in chunked(names):
            out.extend(
                self._conn.execute(
                    "SELECT DISTINCT s.name, f.path FROM symbols s JOIN files f "
                    f"ON f.id = s.file_id WHERE s.name IN ({marks(group)})",
                    group,
                )
            )
        return out

    def referrers(self, names: Collection[str]) -> set[str]:
        out: set[str] = set()
        for group in chunked(names):
            rows = self._conn.execute(
                "SELECT DISTINCT f.path FROM refs r JOIN files f ON f.id = r.file_id "
                f"WHERE r.name IN ({marks(group)})",
                group,
            )
            out.update(r[0] for r in rows)
        return out

    def reference_sums_of(self, paths: Collection[str]) -> list[tuple[str, str, int]]:
        out: list[tuple[str, str, int]] = []
        for group in chunked(paths):
            rows = self._conn.execute(
                "SELECT f.path, r.name, SUM(r.count) FROM refs r JOIN files f "
                f"ON f.id = r.file_id WHERE f.path IN ({marks(group)}) GROUP BY f.path, r.name",
                group,
            )
            out.extend((r[0], r[1], int(r[2])) for r in rows)
        return out

    def edge_count(self, kind: Literal["import", "cochange"]) -> int:
        if kind == "cochange":
            return int(self._conn.execute("SELECT COUNT(*) FROM cochange").fetchone()[0])
        row = self._conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM imports i JOIN files f ON f.id = i.file_id "
            "WHERE i.resolved IS NOT NULL AND i.resolved != f.path GROUP BY f.path, i.resolved)"
        ).fetchone()
        return int(row[0])
