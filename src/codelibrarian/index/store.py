"""The embedded backend: the index in one SQLite file, behind ``storage.Storage``.

One writer, many readers. The database runs in WAL mode, so readers never block
the writer or each other. Writers take ``writer_lock`` (``lock.py``: an exclusive
``flock`` on ``index.db.lock`` naming its holder) for a whole indexing run and wrap
every batch in ``BEGIN IMMEDIATE ... COMMIT``: a process killed mid-run leaves the
last committed batch, never half a file, and the next run picks up what is missing
by comparing content hashes.

:class:`SqliteStore` holds the record reads (``storage.RecordReader``) and, from
``sqlite_writes.py``, the record writes (``storage.RecordWriter``). Its other parts
share its connection: the full-text primitives (``sqlite_text.py``) under the search
engine (``search.py``), the graph rows (``sqlite_graphs.py``) under the graph cache
(``graphcache.py``), and the history rows (``sqlite_history.py``). Together they are
``storage.IndexStore``; the rest of the library codes against the protocols, not
this class.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import IndexCorrupt, NotFound
from ..workspace.private import private_touch
from ..workspace.state import State
from .graphcache import GraphCache
from .lock import writer_lock
from .records import (
    EDGE_KINDS,
    Chunk,
    ChunkHit,
    EdgeKind,
    FileRecord,
    ImportRecord,
    Reference,
    Symbol,
    expand_lines,
)
from .schema import create_secondary_indexes, migrate
from .search import Bm25Search
from .sqlite_base import chunked, generation, marks, snapshot, transaction
from .sqlite_graphs import SqliteGraphRows
from .sqlite_history import SqliteHistory
from .sqlite_text import SqliteText
from .sqlite_writes import SqliteWrites
from .storage import Edges, IndexStore, Storage
from .tokenize import name_parts

if TYPE_CHECKING:
    from .graph import PackedGraph
    from .graphdelta import Derived

__all__ = ["SqliteStore", "Storage", "index_path", "open_store", "writer_lock"]


def index_path(root: Path) -> Path:
    """Where the index of the repository at ``root`` lives (``.librarian/index.db``)."""
    return State(root).index_path


def open_store(root: Path, *, readonly: bool = False) -> SqliteStore:
    """Open (creating and migrating unless ``readonly``) the index of ``root``."""
    path = index_path(root)
    if readonly and not path.exists():
        raise NotFound(
            f"no index at {path}.", hint="Run `librarian index` in the repository first."
        )
    return SqliteStore(path, readonly=readonly)


_SYMBOL_COLS = "s.name, s.kind, s.parent, f.path, s.start_line, s.end_line, s.signature, s.doc"
_CHUNK_COLS = (
    "c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, c.text, c.tokens, c.content_hash"
)
_FILE_COLS = "path, language, content_hash, size, tokens, parse_error"


class SqliteStore(SqliteWrites):
    """The embedded backend: one SQLite file in WAL mode."""

    def __init__(self, path: Path, *, readonly: bool = False, locked: bool = False) -> None:
        """``locked``: the caller holds the index's writer lock for as long as it uses
        this store (the indexer), so derived graphs are stored without taking it."""
        self.path = path
        self.readonly = readonly
        self.locked = locked
        try:
            if readonly:
                conn = sqlite3.connect(
                    f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                # private (0600 in a 0700 folder) before SQLite creates it: its WAL and
                # shared-memory files take the same mode, and so does a rebuilt index
                private_touch(path)
                conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 30000")
            if not readonly:
                # the index is derived data: a process killed at any point loses only
                # uncommitted batches (WAL), and a power loss that damages the file
                # is caught by quick_check and rebuilt; so no fsync waits while writing.
                # Set before WAL: turning a rollback-journal file (a seeded copy, whose
                # 110 MB were just written unsynced) into WAL fsyncs it otherwise, 0.28 s
                conn.execute("PRAGMA synchronous = OFF")
                conn.execute("PRAGMA journal_mode = WAL")
                # bulk writes: a 32 MiB page cache (FTS5 merges revisit pages), temp
                # b-trees in memory, and a checkpoint (with its fsyncs) every ~32 MiB of
                # WAL instead of every 4 MiB; commits per batch are unchanged
                conn.execute("PRAGMA cache_size = -32768")
                conn.execute("PRAGMA temp_store = MEMORY")
                conn.execute("PRAGMA wal_autocheckpoint = 8192")
                conn.execute("PRAGMA journal_size_limit = 67108864")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(
                f"cannot open the index at {path} ({exc}).",
                hint="Delete the file and run `librarian index` again.",
            ) from None
        self._conn = conn
        #: the search engine over this connection's full-text rows, its memos per generation
        self._bm25 = Bm25Search(SqliteText(conn))
        #: the derived-graph cache over this connection's graph rows
        rows = SqliteGraphRows(
            conn, path, readonly=readonly, locked=locked, open_writer=lambda: SqliteStore(path)
        )
        self._graphs = GraphCache(rows)
        #: the recent commits and the co-change graph
        self.history = SqliteHistory(conn)
        #: symbol name -> name parts, kept during ``bulk_load`` only (see ``symbol_part_rows``)
        self._name_parts: dict[str, frozenset[str]] | None = None
        #: the index has no ``layouts`` table (an older one, opened read-only)
        self._no_layouts = False
        if not readonly:
            migrate(conn)
            create_secondary_indexes(conn)

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def transaction(self, *, bump: bool = True) -> AbstractContextManager[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error); ``bump``
        advances the generation (``sqlite_base.transaction``)."""
        return transaction(self._conn, bump=bump)

    # -- reads -------------------------------------------------------------------------

    def generation(self) -> int:
        """A counter bumped by every committed write of content (cache key for derived data)."""
        return generation(self._conn)

    def snapshot(self) -> AbstractContextManager[None]:
        """One read transaction: the reads inside see one committed generation."""
        return snapshot(self._conn)

    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def files(self) -> list[FileRecord]:
        rows = self._conn.execute(f"SELECT {_FILE_COLS} FROM files ORDER BY path").fetchall()
        return [FileRecord(*r) for r in rows]

    def file(self, path: str) -> FileRecord | None:
        row = self._conn.execute(
            f"SELECT {_FILE_COLS} FROM files WHERE path = ?", (path,)
        ).fetchone()
        return None if row is None else FileRecord(*row)

    def file_states(
        self, paths: Iterable[str] | None = None
    ) -> dict[str, tuple[str, int, int, int]]:
        """``path -> (content_hash, size, mtime_ns, stage)``, for every file or just ``paths``."""
        sql = "SELECT path, content_hash, size, mtime_ns, stage FROM files"
        if paths is None:
            rows = self._conn.execute(sql).fetchall()
        else:
            rows = [r for p in paths for r in self._conn.execute(sql + " WHERE path = ?", (p,))]
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def skipped_states(self) -> dict[str, tuple[str, int, int]]:
        """``path -> (reason, size, mtime_ns)`` of every file skipped at its last listing."""
        rows = self._conn.execute("SELECT path, reason, size, mtime_ns FROM skipped")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def skipped(self) -> list[tuple[str, str]]:
        """``(path, reason)`` of every skipped file, sorted by path."""
        rows = self._conn.execute("SELECT path, reason FROM skipped ORDER BY path")
        return [(r[0], r[1]) for r in rows]

    def progress(self) -> tuple[int, int]:
        """``(listed, parsed)``: files known to the index, and those fully indexed."""
        row = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(stage = 2), 0) FROM files"
        ).fetchone()
        return int(row[0]), int(row[1])

    def pending_paths(self) -> list[str]:
        """Paths listed but not yet parsed (stage below 2), sorted."""
        rows = self._conn.execute("SELECT path FROM files WHERE stage < 2 ORDER BY path")
        return [r[0] for r in rows]

    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        return [r[0] for r in self._conn.execute("SELECT path FROM files ORDER BY path")]

    def symbols(self, path: str | None = None, name: str | None = None) -> list[Symbol]:
        where, args = _filters(path, name, "s.name")
        rows = self._conn.execute(
            f"SELECT {_SYMBOL_COLS} FROM symbols s JOIN files f ON f.id = s.file_id {where} "
            "ORDER BY f.path, s.start_line, s.end_line DESC, s.name, s.kind",
            args,
        ).fetchall()
        return [Symbol(*r) for r in rows]

    def symbol_lines(self, path: str) -> dict[str, int]:
        """``name -> first line`` of the symbols of ``path``; a name defined more than once
        gives the last of :meth:`symbols`' order. What a span layout reads of a file's
        symbols (where a member's owner starts), without building each :class:`Symbol`."""
        rows = self._conn.execute(
            "SELECT s.name, s.start_line FROM symbols s JOIN files f ON f.id = s.file_id "
            "WHERE f.path = ? ORDER BY s.start_line, s.end_line DESC, s.name, s.kind",
            (path,),
        ).fetchall()
        return dict(rows)

    def stored_layout(self, path: str) -> bytes | None:
        """The stored span layout of ``path`` (``layouts.py``), None when there is none
        (or the index predates the table and is read without migrating it)."""
        if self._no_layouts:
            return None
        try:
            row = self._conn.execute(
                "SELECT l.data FROM files f JOIN layouts l ON l.file_id = f.id WHERE f.path = ?",
                (path,),
            ).fetchone()
        except sqlite3.OperationalError as exc:
            # a read-only store of an index older than the table: ask once
            self._no_layouts = "no such table" in str(exc)
            return None
        return None if row is None else bytes(row[0])

    def paths_without_layout(self) -> list[str]:
        """Parsed files with no stored span layout, by path."""
        rows = self._conn.execute(
            "SELECT f.path FROM files f WHERE f.stage = 2 AND NOT EXISTS "
            "(SELECT 1 FROM layouts l WHERE l.file_id = f.id) ORDER BY f.path"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def definition_paths(self, name: str, limit: int) -> list[str]:
        """The paths of the first ``limit`` definitions of ``name`` (one per definition)."""
        rows = self._conn.execute(
            "SELECT f.path FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? "
            "ORDER BY f.path, s.start_line, s.id LIMIT ?",
            (name, limit),
        )
        return [r[0] for r in rows]

    def name_part_counts(self, parts: Collection[str]) -> dict[str, int]:
        """``path -> how many of its symbols have a name part in parts`` (files with none left out).

        Read from ``symbol_parts``, written with each file's symbols, so a fresh
        process pays for these rows only, not for splitting every name in the index.
        """
        wanted = sorted(set(parts))
        if not wanted:
            return {}
        if not self._has_symbol_parts():
            return self._name_part_counts_scan(frozenset(wanted))
        found: set[tuple[str, str]] = set()
        for group in chunked(wanted):  # bounded parameter lists
            for path, ords in self._conn.execute(
                "SELECT f.path, sp.ords FROM symbol_parts sp JOIN files f ON f.id = sp.file_id "
                f"WHERE sp.part IN ({marks(group)})",
                group,
            ):
                found.update((path, o) for o in ords.split())
        out: dict[str, int] = {}
        for path, _ in found:
            out[path] = out.get(path, 0) + 1
        return out

    def _has_symbol_parts(self) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'symbol_parts'"
        ).fetchone()
        return row is not None

    def _name_part_counts_scan(self, parts: frozenset[str]) -> dict[str, int]:
        """``name_part_counts`` for an index opened read-only before its migration."""
        out: dict[str, int] = {}
        for name, path in self._conn.execute(
            "SELECT s.name, f.path FROM symbols s JOIN files f ON f.id = s.file_id"
        ):
            if name_parts(name) & parts:
                out[path] = out.get(path, 0) + 1
        return out

    def references(self, path: str | None = None, name: str | None = None) -> list[Reference]:
        where, args = _filters(path, name, "r.name")
        rows = self._conn.execute(
            f"SELECT r.name, r.kind, f.path, r.lines FROM refs r JOIN files f ON f.id = r.file_id "
            f"{where}",
            args,
        ).fetchall()
        out = [Reference(n, k, p, line) for n, k, p, lines in rows for line in expand_lines(lines)]
        out.sort(key=lambda r: (r.path, r.line, r.name, r.kind))
        return out

    def imports(self, path: str | None = None) -> list[ImportRecord]:
        where, args = _filters(path, None, "")
        rows = self._conn.execute(
            f"SELECT f.path, i.spec, i.line, i.resolved FROM imports i "
            f"JOIN files f ON f.id = i.file_id {where} ORDER BY f.path, i.line, i.spec",
            args,
        ).fetchall()
        return [ImportRecord(*r) for r in rows]

    def chunk(self, chunk_id: int) -> Chunk:
        row = self._conn.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?",
            (chunk_id,),
        ).fetchone()
        if row is None:
            raise NotFound(
                f"no chunk {chunk_id} in the index.",
                hint="Chunk ids change when files are re-indexed; search again.",
            )
        return Chunk(*row)

    def chunks_for(self, path: str) -> list[Chunk]:
        rows = self._conn.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? ORDER BY c.start_line, c.end_line, c.id",
            (path,),
        ).fetchall()
        return [Chunk(*r) for r in rows]

    # -- the engines above the rows (``search.py``, ``graphcache.py``) ------------------

    def search(self, query: str, limit: int = 20) -> list[ChunkHit]:
        """BM25 over chunks (``search.Bm25Search.search``)."""
        return self._bm25.search(query, limit)

    def common_terms(self, query: str) -> list[str]:
        """The terms of ``query`` that :meth:`search` leaves out as too common, sorted."""
        return self._bm25.common_terms(query)

    def edges(self, kind: EdgeKind) -> Edges:
        """Weighted file edges ``(src, dst, weight)``, sorted, for one graph kind."""
        if kind not in EDGE_KINDS:
            raise ValueError(f"unknown edge kind {kind!r}; kinds are {', '.join(EDGE_KINDS)}")
        if kind == "cochange":
            return self._graphs.rows.cochange_edges()
        if kind == "import":
            return self._graphs.rows.import_edges()
        return self._graphs.ref_edges()

    def combined_graph(self) -> PackedGraph:
        """The three file graphs combined and packed, of this generation (``graphcache``)."""
        return self._graphs.combined()

    def refresh_graphs(self, *, defer: bool = False) -> bool:
        """Bring the stored graphs up to this generation (``GraphCache.refresh``)."""
        return self._graphs.refresh(defer=defer)

    def derived_graphs(self) -> Derived:
        """The graphs of the current content with their basis (``GraphCache.derived``)."""
        return self._graphs.derived()

    def edge_counts(self) -> dict[str, int | None]:
        """Edges of each graph kind; ``ref`` None while the graphs wait for a reader."""
        return self._graphs.edge_counts()

    def imports_into(self, paths: Collection[str]) -> list[tuple[str, str]]:
        """The import edges ``(src, dst)`` into ``paths``, sorted: ``edges("import")``
        restricted to those targets, read through the ``resolved`` index."""
        found: set[tuple[str, str]] = set()
        for group in chunked(set(paths)):
            found.update(
                self._conn.execute(
                    "SELECT DISTINCT f.path, i.resolved FROM imports i JOIN files f ON f.id = "
                    f"i.file_id WHERE i.resolved IN ({marks(group)}) AND i.resolved != f.path",
                    group,
                )
            )
        return sorted(found)

    def import_specs(self) -> list[tuple[str, str, int, str | None]]:
        """Every ``(path, spec, line, resolved)``, to re-resolve after files come or go."""
        rows = self._conn.execute(
            "SELECT f.path, i.spec, i.line, i.resolved FROM imports i "
            "JOIN files f ON f.id = i.file_id ORDER BY f.path, i.line, i.spec"
        )
        return [(r[0], r[1], int(r[2]), r[3]) for r in rows]

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (for stats and consistency checks)."""
        out: dict[str, int] = {}
        for table in ("files", "symbols", "refs", "imports", "chunks", "chunks_fts", "cochange"):
            # a refs row groups one file's uses of a name: count the uses
            what = "COALESCE(SUM(count), 0)" if table == "refs" else "COUNT(*)"
            out[table] = int(self._conn.execute(f"SELECT {what} FROM {table}").fetchone()[0])
        return out

    def reference_file_counts(self) -> dict[str, int]:
        """``name -> number of files that reference it``."""
        rows = self._conn.execute("SELECT name, COUNT(DISTINCT file_id) FROM refs GROUP BY name")
        return {r[0]: int(r[1]) for r in rows}

    def count_resolved_imports(self) -> int:
        row = self._conn.execute("SELECT COUNT(*) FROM imports WHERE resolved IS NOT NULL")
        return int(row.fetchone()[0])

    def parse_errors(self) -> list[tuple[str, str]]:
        """``(path, error)`` of every file indexed as text because it failed to parse."""
        rows = self._conn.execute(
            "SELECT path, parse_error FROM files WHERE parse_error IS NOT NULL ORDER BY path"
        )
        return [(r[0], r[1]) for r in rows]


def _filters(path: str | None, name: str | None, name_col: str) -> tuple[str, tuple[str, ...]]:
    clauses: list[str] = []
    args: list[str] = []
    if path is not None:
        clauses.append("f.path = ?")
        args.append(path)
    if name is not None:
        clauses.append(f"{name_col} = ?")
        args.append(name)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)


if TYPE_CHECKING:
    # mypy checks here that the backend is the whole protocol (``tests/index`` runs
    # mypy on the same question, and on a reader that must be refused)
    def _implements(store: SqliteStore) -> IndexStore:
        return store
