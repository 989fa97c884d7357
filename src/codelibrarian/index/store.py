"""Index storage: the ``Storage`` protocol and its SQLite implementation.

One writer, many readers. The database runs in WAL mode, so readers never block
the writer or each other. Writers take ``writer_lock`` (``lock.py``: an exclusive
``flock`` on ``index.db.lock`` naming its holder) for a whole indexing run and wrap
every batch in
``BEGIN IMMEDIATE ... COMMIT``: a process killed mid-run leaves the last committed
batch, never half a file, and the next run picks up what is missing by comparing
content hashes.

Read methods (``files``, ``file``, ``symbols``, ``references``, ``search``,
``chunk``, ``chunks_for``, ``edges``, ``imports``) are what the query pipeline and
the context sources code against; a PostgreSQL backend implements the same
protocol.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from ..errors import IndexBusy, IndexCorrupt, NotFound
from ..workspace.private import private_touch
from ..workspace.state import State
from . import graph, graphdelta
from .lock import WriterLock, read_owner, writer_lock
from .records import (
    EDGE_KINDS,
    Chunk,
    ChunkHit,
    EdgeKind,
    FileData,
    FileRecord,
    ImportRecord,
    Reference,
    Symbol,
    estimate_tokens,
    expand_lines,
)
from .schema import (
    create_secondary_indexes,
    drop_secondary_indexes,
    migrate,
    symbol_part_rows,
)
from .tokenize import name_parts, query_terms

__all__ = ["SqliteStore", "Storage", "index_path", "open_store", "writer_lock"]

#: BM25 column weights: path, symbols, body, parts (path and symbol names count more)
_BM25_WEIGHTS = (4.0, 6.0, 1.0, 1.0)
#: a search leaves out a term found in more than this share of the chunks (numerator,
#: denominator) and in more than :data:`COMMON_ROWS` of them: FTS5's idf of such a
#: term, ln((N - n + 0.5) / (n + 0.5)), is below ln 3 = 1.1 (0.24 at 44%), while
#: scoring it costs a row for each chunk it is in (about 2.5 us a row)
COMMON_SHARE = (1, 4)
#: below this many rows a term is always scored: in a repository of a few thousand
#: chunks a common term (the project's own name) still ranks, and costs little
COMMON_ROWS = 20_000
#: document frequencies a store remembers (per index generation) before starting again
_DF_MEMO_MAX = 50_000
#: most (chunk, score) pairs a store remembers for the terms it read (16 bytes each)
_TERM_MEMO_ROWS = 2_000_000
#: reading a term's scores costs about this much more per row than scoring it inside
#: the whole query (numerator, denominator: 1.2-1.5 measured at 20,000 files, summing included)
_READ_COST = (3, 2)
#: most rows a query reads term by term when some of its terms are not remembered: a
#: heavier query goes to FTS5 whole, so reading never makes a slow call slower
_READ_ROWS = 25_000
#: chunk ids up to this many times the rows being summed are summed in a dense array
_DENSE_SPAN = 8


def _best_rows(parts: Sequence[tuple[Any, Any]], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk id, score)`` by score descending, then id, where a chunk's
    score is its terms' scores added from 0.0 in the order of ``parts``: FTS5's order of
    addition, so the float is FTS5's to the last bit (a term a chunk lacks adds 0.0
    there, which changes no sum)."""
    import numpy as np

    parts = [(ids, s) for ids, s in parts if len(ids)]
    if not parts or k <= 0:
        return []
    size = sum(len(ids) for ids, _ in parts)
    top = max(int(ids[-1]) for ids, _ in parts)
    if top < _DENSE_SPAN * size + 1024:
        total = np.zeros(top + 1, dtype=np.float64)
        seen = np.zeros(top + 1, dtype=bool)
        for ids, s in parts:
            total[ids] += s  # ids are distinct within a term: one addition per chunk
            seen[ids] = True
        rows = np.flatnonzero(seen)
        scores = total[rows]
    else:
        rows, inverse = np.unique(np.concatenate([ids for ids, _ in parts]), return_inverse=True)
        scores = np.zeros(len(rows), dtype=np.float64)
        at = 0
        for ids, s in parts:
            scores[inverse[at : at + len(ids)]] += s
            at += len(ids)
    if len(rows) > k:
        kth = np.partition(-scores, k - 1)[k - 1]
        keep = -scores <= kth  # every row tied with the k-th too: ids decide below
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:k]
    return list(zip(rows[order].tolist(), scores[order].tolist(), strict=True))


def index_path(root: Path) -> Path:
    """Where the index of the repository at ``root`` lives (``.librarian/index.db``)."""
    return State(root).index_path


@runtime_checkable
class Storage(Protocol):
    """Read side of the index, shared by every backend."""

    def files(self) -> list[FileRecord]: ...
    def file(self, path: str) -> FileRecord | None: ...
    def symbols(self, path: str | None = None, name: str | None = None) -> list[Symbol]: ...
    def symbol_lines(self, path: str) -> dict[str, int]: ...
    def definition_paths(self, name: str, limit: int) -> list[str]: ...
    def name_part_counts(self, parts: Collection[str]) -> dict[str, int]: ...
    def references(self, path: str | None = None, name: str | None = None) -> list[Reference]: ...
    def imports(self, path: str | None = None) -> list[ImportRecord]: ...
    def search(self, query: str, limit: int = 20) -> list[ChunkHit]: ...
    def common_terms(self, query: str) -> list[str]: ...
    def chunk(self, chunk_id: int) -> Chunk: ...
    def chunks_for(self, path: str) -> list[Chunk]: ...
    def edges(self, kind: EdgeKind) -> list[tuple[str, str, int]]: ...
    def similar_commits(self, words: Sequence[str], limit: int) -> list[tuple[int, int]]: ...
    def past_edits(self, orders: Collection[int]) -> list[tuple[int, str]]: ...
    def imports_into(self, paths: Collection[str]) -> list[tuple[str, str]]: ...
    def combined_graph(self) -> graph.PackedGraph: ...
    def generation(self) -> int: ...
    def close(self) -> None: ...


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
#: graph_cache rows kept together, one generation: the combined graph, the ref graph
#: alone and what they were derived from (``graphdelta.Basis``)
_DERIVED_KINDS = ("combined", "ref.packed", "graph.basis")
#: the writer lock's command while a reader stores graphs the indexer left stale
GRAPHS_COMMAND = "graphs"
#: how long a reader waits for another reader storing the same graphs (seconds)
GRAPHS_WAIT_S = 60.0
_GRAPHS_POLL_S = 0.02


class SqliteStore:
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
        # document frequency of each term searched, and the chunk count, for one generation
        self._df: dict[str, int] = {}
        self._df_gen: int | None = None
        self._df_total = 0
        #: each term read this generation: its chunk ids (ascending) and scores
        self._term_memo: dict[str, tuple[Any, Any]] = {}
        self._term_memo_rows = 0
        #: the terms searched this generation (a term searched again is worth reading)
        self._searched: set[str] = set()
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

    @contextmanager
    def transaction(self, *, bump: bool = True) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error).

        ``bump`` advances the generation, the key of data derived from the index's
        content; writes that change no content (mtimes, flags) leave it alone.
        """
        conn = self._conn
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

    # -- reads -------------------------------------------------------------------------

    def generation(self) -> int:
        """A counter bumped by every committed write (cache key for derived data)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

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
        # bounded parameter lists: SQLite caps the variables of one statement
        for at in range(0, len(wanted), 500):
            group = wanted[at : at + 500]
            marks = ", ".join("?" * len(group))
            for path, ords in self._conn.execute(
                "SELECT f.path, sp.ords FROM symbol_parts sp JOIN files f ON f.id = sp.file_id "
                f"WHERE sp.part IN ({marks})",
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

    def search(self, query: str, limit: int = 20) -> list[ChunkHit]:
        """BM25 over chunks; integer scores (x1000, higher is better), ties by path then line.

        Terms found in more than :data:`COMMON_SHARE` of the chunks, and in more than
        :data:`COMMON_ROWS`, are left out (:meth:`common_terms`) unless every term is:
        FTS5 would score each of their rows (a one-letter identifier part can be in
        half of a large repository's chunks) for an idf below ln 3.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        common = set(self._common(terms))
        if len(common) < len(terms):
            terms = [t for t in terms if t not in common]
        if self._read_terms(terms):
            best = self._best_by_term(terms, limit * 4 + 50)
            if best is not None:
                return self._hits(best, limit)
        return self._search_fts(terms, limit)

    def _search_fts(self, terms: Sequence[str], limit: int) -> list[ChunkHit]:
        """:meth:`search` as one FTS5 query of ``terms`` (what the summed path equals)."""
        match = " OR ".join(f'"{t}"' for t in terms)
        w = ", ".join(str(x) for x in _BM25_WEIGHTS)
        # over-fetch, then order by the integer score with total tie-breaks; the best
        # rows are chosen from the full-text index alone, and only they are joined to
        # their chunk and file (every chunk row has its full-text row and a file)
        rows = self._conn.execute(
            f"SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, h.rank, "
            f"c.tokens FROM (SELECT rowid AS id, bm25(chunks_fts, {w}) AS rank "
            f"FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?) h "
            f"JOIN chunks c ON c.id = h.id JOIN files f ON f.id = c.file_id "
            f"ORDER BY h.rank, c.id",
            (match, limit * 4 + 50),
        ).fetchall()
        hits = [
            ChunkHit(r[0], r[1], r[2], r[3], r[4], r[5], round(-float(r[6]) * 1000), r[7])
            for r in rows
        ]
        hits.sort(key=lambda h: (-h.score, h.path, h.start_line, h.end_line, h.chunk_id))
        return hits[:limit]

    def _read_terms(self, terms: Sequence[str]) -> bool:
        """Whether to sum the query from each term's own scores (:meth:`_best_by_term`)
        rather than have FTS5 score the whole query.

        A chunk's ``bm25`` is FTS5's sum of one addend per term, in query order, each
        depending on that term alone; a one-term query returns exactly that addend. So
        a term's scores, once read, serve every later query of the generation that
        names it. Reading costs :data:`_READ_COST` times scoring a row inside the whole
        query, so a query is summed when the rows of its remembered terms, and of its
        terms searched before (likely to come again: read once, then remembered), pay
        for the extra cost of reading its terms never searched before, and when it
        reads at most :data:`_READ_ROWS` rows: the reads are paid by light calls, and
        a heavy call (a term in a fifth of the chunks, first seen) costs what it did.
        A one-call process sees every term once: its queries go to FTS5 whole, as
        they always did. Only where :meth:`_common` counted the terms' rows (more
        chunks than :data:`COMMON_ROWS`; below that a whole query costs little).
        """
        df = self._df
        if self._df_total <= COMMON_ROWS or any(t not in df for t in terms):
            return False
        kept = again = fresh = 0
        for t in terms:
            if t in self._term_memo:
                kept += df[t]
            elif t in self._searched:
                again += df[t]
            else:
                fresh += df[t]
        if len(self._searched) > _DF_MEMO_MAX:
            self._searched.clear()
        self._searched.update(terms)
        num, den = _READ_COST
        return (
            kept + again > 0
            and again + fresh <= _READ_ROWS
            and fresh * num <= (kept + again + fresh) * den
        )

    def _best_by_term(self, terms: Sequence[str], k: int) -> list[tuple[int, float]] | None:
        """The ``k`` best ``(chunk id, score)`` of the query of ``terms``, best first
        (then by id), each score summed from the terms' own in query order: FTS5's
        float to the last bit. None when a commit landed while the terms were read."""
        gen = self._df_gen
        parts = [self._term_scores(t) for t in terms]
        if self.generation() != gen:  # the terms straddle a commit: one query instead
            self._term_memo.clear()
            self._term_memo_rows = 0
            return None
        return _best_rows(parts, k)

    def _term_scores(self, term: str) -> tuple[Any, Any]:
        """The chunks matching ``term`` (ascending ids) and the term's BM25 in each,
        remembered for the generation (least recently used out beyond
        :data:`_TERM_MEMO_ROWS` rows in all)."""
        import numpy as np  # imported on use, as the graph code does

        got = self._term_memo.pop(term, None)
        if got is None:
            w = ", ".join(str(x) for x in _BM25_WEIGHTS)
            rows = self._conn.execute(
                f"SELECT rowid, bm25(chunks_fts, {w}) FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY rowid",
                (f'"{term}"',),
            ).fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            neg = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
            got = (ids, -neg)
            self._term_memo_rows += len(rows)
            while self._term_memo_rows > _TERM_MEMO_ROWS and self._term_memo:
                oldest = next(iter(self._term_memo))
                self._term_memo_rows -= len(self._term_memo.pop(oldest)[0])
        self._term_memo[term] = got  # most recently used last
        return got

    def _hits(self, best: Sequence[tuple[int, float]], limit: int) -> list[ChunkHit]:
        """The hits of the best ``(chunk id, score)`` rows as :meth:`_search_fts` gives
        them: joined to their chunk and file, ordered by integer score and place."""
        found: dict[int, tuple[str, int, int, str | None, str, int]] = {}
        for at in range(0, len(best), 500):  # bounded parameter lists
            group = [i for i, _ in best[at : at + 500]]
            marks = ", ".join("?" * len(group))
            for r in self._conn.execute(
                "SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, c.tokens "
                f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                group,
            ):
                found[int(r[0])] = (r[1], r[2], r[3], r[4], r[5], r[6])
        hits = [
            ChunkHit(i, *found[i][:5], round(score * 1000), found[i][5])
            for i, score in best
            if i in found
        ]
        hits.sort(key=lambda h: (-h.score, h.path, h.start_line, h.end_line, h.chunk_id))
        return hits[:limit]

    def common_terms(self, query: str) -> list[str]:
        """The terms of ``query`` that :meth:`search` leaves out, sorted: each found in
        more than :data:`COMMON_SHARE` of the chunks and more than :data:`COMMON_ROWS`
        (by FTS5's own count of the rows matching it), none when every term is."""
        terms = query_terms(query)
        common = self._common(terms)
        return common if len(common) < len(terms) else []

    def _common(self, terms: Sequence[str]) -> list[str]:
        """Which of ``terms`` are in more than :data:`COMMON_SHARE` of the chunks and
        more than :data:`COMMON_ROWS` of them."""
        gen = self.generation()
        if gen != self._df_gen or len(self._df) > _DF_MEMO_MAX:
            self._df.clear()
            self._term_memo.clear()
            self._term_memo_rows = 0
            self._searched.clear()
            self._df_gen = gen
            self._df_total = int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        if self._df_total <= COMMON_ROWS:
            return []  # no term is in more rows than there are: nothing to count
        num, den = COMMON_SHARE
        out = []
        for t in terms:
            df = self._df.get(t)
            if df is None:
                # counting a term's rows reads its row ids only: no positions, no scoring
                row = self._conn.execute(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{t}"',)
                ).fetchone()
                df = self._df[t] = int(row[0])
            if df > COMMON_ROWS and df * den > self._df_total * num:
                out.append(t)
        return out

    def edges(self, kind: EdgeKind) -> list[tuple[str, str, int]]:
        """Weighted file edges ``(src, dst, weight)``, sorted, for one graph kind."""
        if kind not in EDGE_KINDS:
            raise ValueError(f"unknown edge kind {kind!r}; kinds are {', '.join(EDGE_KINDS)}")
        if kind == "cochange":
            return graphdelta.cochange_edges(self._conn)
        if kind == "import":
            return graphdelta.import_edges(self._conn)
        return self._ref_edges()

    def imports_into(self, paths: Collection[str]) -> list[tuple[str, str]]:
        """The import edges ``(src, dst)`` into ``paths``, sorted: ``edges("import")``
        restricted to those targets, read through the ``resolved`` index."""
        wanted = sorted(set(paths))
        found: set[tuple[str, str]] = set()
        for at in range(0, len(wanted), 500):
            group = wanted[at : at + 500]
            marks = ", ".join("?" * len(group))
            found.update(
                self._conn.execute(
                    "SELECT DISTINCT f.path, i.resolved FROM imports i JOIN files f "
                    f"ON f.id = i.file_id WHERE i.resolved IN ({marks}) AND i.resolved != f.path",
                    group,
                )
            )
        return sorted(found)

    def combined_graph(self) -> graph.PackedGraph:
        """The three file graphs combined (``graph.combine``), packed, cached by generation.

        What ranking walks on every composition: loading it is a few milliseconds.
        After an edit it is brought up to date by re-deriving only the edited files'
        neighbourhood (``graphdelta``), not rebuilt (``docs/index.md``); the indexer
        leaves that to the first reader, which stores it (``derived_graphs``).
        """
        with self._snapshot():
            gen = self.generation()
            row = self._conn.execute(
                "SELECT generation, data FROM graph_cache WHERE kind = 'combined'"
            ).fetchone()
        if row is not None and int(row[0]) == gen:
            try:
                return graph.PackedGraph.load(bytes(row[1]))
            except (ValueError, TypeError, EOFError):
                pass  # an unreadable cache entry: rebuild it
        return self.derived_graphs().combined

    def refresh_graphs(self, *, defer: bool = False) -> bool:
        """Bring the cached file graphs up to this generation if they are behind.

        With ``defer``, graphs an edit made stale are left to their first reader
        when a delta will bring them up (``graphdelta.delta_likely``: the same files,
        at most a third of them changed); only a full build is done now. Returns
        whether the graphs are current afterwards.
        """
        old, current = self._stored_derived()
        if current:
            return True
        if defer and old is not None:
            with self._snapshot():
                if graphdelta.delta_likely(self._conn, old.basis):
                    return False
        self.derived_graphs()
        return True

    def derived_graphs(self) -> graphdelta.Derived:
        """The combined and ref graphs of the current content, with their basis: read
        from the cache, brought up to date from an older one, or built.

        Stored once, under the index's writer lock: by the indexer (a store opened
        with ``locked``), else by the first reader that finds them stale, which takes
        the lock for that (``GRAPHS_COMMAND``) and looks again under it (a read-only
        store has a writable connection do it). A reader that meets another one
        storing waits for it; one that meets an index run, or cannot write the index,
        derives them in memory and stores nothing.
        """
        old, current = self._stored_derived()
        if current:
            assert old is not None
            return old
        if self.readonly:
            return self._derive_for_reader(old)
        if self.locked:
            derived, gen = self._derive(old)
            self._store_derived(derived, gen)
            return derived
        return self._derive_under_lock()

    def _stored_derived(self) -> tuple[graphdelta.Derived | None, bool]:
        """The cached graphs with their basis (None when missing or unreadable), and
        whether they are of the current generation; read in one snapshot."""
        with self._snapshot():
            gen = self.generation()
            rows = {
                str(kind): (int(g), bytes(data))
                for kind, g, data in self._conn.execute(
                    "SELECT kind, generation, data FROM graph_cache WHERE kind IN (?, ?, ?)",
                    _DERIVED_KINDS,
                )
            }
        if len(rows) != len(_DERIVED_KINDS) or len({g for g, _ in rows.values()}) != 1:
            return None, False
        basis = graphdelta.Basis.load(rows["graph.basis"][1])
        if basis is None:
            return None, False
        try:
            old = graphdelta.Derived(
                graph.PackedGraph.load(rows["combined"][1]),
                graph.PackedGraph.load(rows["ref.packed"][1]),
                basis,
            )
        except (ValueError, TypeError, EOFError):
            return None, False
        return old, rows["combined"][0] == gen

    def _derive(self, old: graphdelta.Derived | None) -> tuple[graphdelta.Derived, int]:
        """The graphs of the committed content (from ``old`` when a delta is right) and
        the generation they belong to, read in one snapshot."""
        with self._snapshot():
            gen = self.generation()
            fresh = graphdelta.update(self._conn, old) if old is not None else None
            return (fresh if fresh is not None else graphdelta.build(self._conn)), gen

    def _derive_for_reader(self, old: graphdelta.Derived | None) -> graphdelta.Derived:
        """What a read-only store does with stale graphs: it writes nothing itself, but
        has a writable connection of the same index store them when the file can be
        written (``librarian map``, workflow steps); else it derives them in memory."""
        if os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK):
            try:
                with SqliteStore(self.path) as writer:
                    return writer.derived_graphs()
            except (IndexCorrupt, sqlite3.Error, OSError):
                pass  # answered below, from this connection
        return self._derive(old)[0]

    def _derive_under_lock(self) -> graphdelta.Derived:
        deadline = time.monotonic() + GRAPHS_WAIT_S
        while True:
            lock = WriterLock(self.path, command=GRAPHS_COMMAND, timeout=0, keep_unclean=True)
            try:
                lock.acquire()
            except IndexBusy:
                owner = read_owner(self.path)
                if owner is None or owner.command != GRAPHS_COMMAND:
                    return self._derive(self._stored_derived()[0])[0]  # an index run writes
                if time.monotonic() >= deadline:
                    return self._derive(self._stored_derived()[0])[0]
                time.sleep(_GRAPHS_POLL_S)  # another reader stores them: wait, then read
                old, current = self._stored_derived()
                if current:
                    assert old is not None
                    return old
                continue
            try:
                old, current = self._stored_derived()  # stored while we took the lock?
                if current:
                    assert old is not None
                    return old
                derived, gen = self._derive(old)
                self._store_derived(derived, gen)
                return derived
            finally:
                lock.release()

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction, so derived data sees one committed state."""
        if self._conn.in_transaction:
            yield
            return
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def _store_derived(self, derived: graphdelta.Derived, gen: int) -> None:
        """Store the three rows of ``derived`` for generation ``gen`` in one transaction
        (the caller holds the writer lock), unless the content moved on meanwhile.

        Derived data: a store that fails (a connection of an older version writing
        without the lock, a full disk) is skipped after 50 ms, and the next reader
        derives them again."""
        data = (derived.combined.dump(), derived.ref.dump(), derived.basis.dump())
        self._conn.execute("PRAGMA busy_timeout = 50")
        try:
            with self.transaction(bump=False) as conn:
                if self.generation() != gen:
                    return
                conn.executemany(
                    "INSERT OR REPLACE INTO graph_cache(kind, generation, data) VALUES (?, ?, ?)",
                    [(kind, gen, blob) for kind, blob in zip(_DERIVED_KINDS, data, strict=True)],
                )
        except sqlite3.OperationalError:
            pass
        finally:
            self._conn.execute("PRAGMA busy_timeout = 30000")

    def edge_counts(self) -> dict[str, int | None]:
        """Edges of each graph kind, counted without unpacking a graph; ``ref`` is None
        while the graphs wait for their first reader (``refresh_graphs(defer=True)``)."""
        with self._snapshot():
            gen = self.generation()
            stored = dict(
                self._conn.execute(
                    "SELECT kind, generation FROM graph_cache WHERE kind IN (?, ?, ?)",
                    _DERIVED_KINDS,
                )
            )
            refs: int | None = None
            if len(stored) == len(_DERIVED_KINDS) and set(stored.values()) == {gen}:
                row = self._conn.execute(
                    "SELECT data FROM graph_cache WHERE kind = 'ref.packed'"
                ).fetchone()
                refs = len(graph.PackedGraph.load(bytes(row[0])).src) // 8
            imports = self._conn.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM imports i JOIN files f ON f.id = i.file_id "
                "WHERE i.resolved IS NOT NULL AND i.resolved != f.path GROUP BY f.path, i.resolved)"
            ).fetchone()[0]
            cochange = self._conn.execute("SELECT COUNT(*) FROM cochange").fetchone()[0]
        return {"ref": refs, "import": int(imports), "cochange": int(cochange)}

    def _ref_edges(self) -> list[tuple[str, str, int]]:
        return graphdelta.unpack(self.derived_graphs().ref)

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

    # -- writes (callers hold ``writer_lock``) ------------------------------------------

    def list_files(
        self, rows: Sequence[tuple[str, str, str, int, int, int]], *, new: Collection[str] = ()
    ) -> None:
        """Record new or changed files as listed but not parsed (stage 0).

        ``rows`` are ``(path, language, blob id, size, mtime_ns, lines)``; ``new``
        names the paths the index does not hold yet (nothing to delete for them).
        A changed file's old symbols, chunks and search rows go: what the index
        says about a file always matches its current content, or is absent until
        it is parsed.
        """
        if not rows:
            return
        fresh = set(new)
        with self.transaction() as conn:
            for path, *_ in rows:
                if path not in fresh:
                    _delete_file(conn, path)
            conn.executemany(
                "INSERT INTO files(path, language, content_hash, size, mtime_ns, tokens, lines, "
                "parse_error, stage) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0)",
                [(p, lang, h, sz, m, estimate_tokens(sz), n) for p, lang, h, sz, m, n in rows],
            )

    def set_skipped(
        self, rows: Sequence[tuple[str, str, int, int]], gone: Iterable[str] = ()
    ) -> None:
        """Remember skipped files ``(path, reason, size, mtime_ns)``; forget ``gone`` ones."""
        gone = list(gone)
        if not rows and not gone:
            return
        with self.transaction(bump=False) as conn:
            conn.executemany("DELETE FROM skipped WHERE path = ?", [(p,) for p in gone])
            conn.executemany(
                "INSERT OR REPLACE INTO skipped(path, reason, size, mtime_ns) VALUES (?, ?, ?, ?)",
                rows,
            )

    def touch_files(self, items: Sequence[tuple[str, int]]) -> None:
        """Record new mtimes for files whose content did not change."""
        with self.transaction(bump=False) as conn:
            conn.executemany(
                "UPDATE files SET mtime_ns = ? WHERE path = ?", [(m, p) for p, m in items]
            )

    def write_files(self, batch: Sequence[tuple[FileData, Sequence[ImportRecord]]]) -> None:
        """Replace the rows of each file in ``batch`` in one transaction.

        A listed file (stage 0) has no rows below it: its row is completed in
        place, with no delete to cascade (which, while a cold build runs without
        secondary indexes, would scan every child table).
        """
        with self.transaction() as conn:
            for data, imports in batch:
                row = conn.execute(
                    "SELECT id, stage FROM files WHERE path = ?", (data.path,)
                ).fetchone()
                listed = row is not None and row[1] == 0
                if row is not None and not listed:
                    _delete_file(conn, data.path)
                _insert_file(
                    conn,
                    data,
                    imports,
                    file_id=row[0] if listed else None,
                    name_parts=self._name_parts,
                )

    def delete_files(self, paths: Iterable[str]) -> None:
        with self.transaction() as conn:
            for path in sorted(paths):
                _delete_file(conn, path)

    def set_import_resolutions(self, changes: Sequence[tuple[str, str, int, str | None]]) -> None:
        """Update ``resolved`` for ``(path, spec, line, resolved)`` rows."""
        if not changes:
            return
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE imports SET resolved = ? WHERE spec = ? AND line = ? AND file_id = "
                "(SELECT id FROM files WHERE path = ?)",
                [(res, spec, line, path) for path, spec, line, res in changes],
            )

    def set_past_edits(self, commits: Sequence[tuple[int, str, Sequence[str]]], key: str) -> None:
        """Replace the past commits: ``(order, message words, paths edited)`` each;
        ``key`` records what they were read from."""
        with self.transaction() as conn:
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
        """The ``limit`` past commits whose message words best match ``words`` (BM25):
        ``(order, score x1000)``, best first, ties by order (the newer first)."""
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
        """The files the past commits ``orders`` edited: ``(order, path)``."""
        if not orders:
            return []
        marks = ",".join("?" * len(orders))
        rows = self._conn.execute(
            f"SELECT ord, path FROM past_edits WHERE ord IN ({marks}) ORDER BY ord, path",
            sorted(orders),
        ).fetchall()
        return [(int(o), str(p)) for o, p in rows]

    def set_cochange(self, edges: Sequence[tuple[str, str, int]], key: str) -> None:
        """Replace the co-change graph; ``key`` records what it was computed from."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM cochange")
            conn.executemany("INSERT INTO cochange(src, dst, weight) VALUES (?, ?, ?)", edges)
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('cochange_key', ?)", (key,)
            )

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Write many files without secondary indexes, then build them once."""
        with self.transaction(bump=False) as conn:
            drop_secondary_indexes(conn)
        self._name_parts = {}
        try:
            yield
        finally:
            self._name_parts = None
            with self.transaction(bump=False) as conn:
                create_secondary_indexes(conn)

    def put_layouts(self, rows: Sequence[tuple[str, bytes]]) -> None:
        """Store ``(path, encoded layout)`` rows of parsed files (a derived table: the
        generation is not bumped; a path not parsed, or gone, is left out)."""
        with self.transaction(bump=False) as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO layouts(file_id, data) "
                "SELECT id, ? FROM files WHERE path = ? AND stage = 2",
                [(data, path) for path, data in rows],
            )

    def set_meta(self, values: Mapping[str, str]) -> None:
        with self.transaction(bump=False) as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", sorted(values.items())
            )


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


def _delete_file(conn: sqlite3.Connection, path: str) -> None:
    row = conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
    if row is None:
        return
    # the full-text table is contentless: it forgets a row when given what it indexed
    conn.execute(
        "INSERT INTO chunks_fts(chunks_fts, rowid, path, symbols, body, parts) "
        "SELECT 'delete', c.id, ?, c.symbols, c.text, c.parts FROM chunks c "
        "WHERE c.file_id = ? ORDER BY c.id",
        (path, row[0]),
    )
    conn.execute("DELETE FROM files WHERE id = ?", row)


def _insert_file(
    conn: sqlite3.Connection,
    data: FileData,
    imports: Sequence[ImportRecord],
    *,
    file_id: int | None = None,
    name_parts: dict[str, frozenset[str]] | None = None,
) -> None:
    """The rows of one parsed file; ``file_id`` completes that listed row in place.
    ``name_parts`` is a cold build's memo for ``symbol_part_rows``."""
    values = (
        data.language,
        data.content_hash,
        data.size,
        data.mtime_ns,
        data.tokens,
        data.lines,
        data.parse_error,
    )
    if file_id is not None:
        conn.execute(
            "UPDATE files SET language = ?, content_hash = ?, size = ?, mtime_ns = ?, "
            "tokens = ?, lines = ?, parse_error = ?, stage = 2 WHERE id = ?",
            (*values, file_id),
        )
        fid: int | None = file_id
    else:
        cur = conn.execute(
            "INSERT INTO files(path, language, content_hash, size, mtime_ns, tokens, lines, "
            "parse_error, stage) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 2)",
            (data.path, *values),
        )
        fid = cur.lastrowid
    conn.executemany(
        "INSERT INTO symbols(file_id, name, kind, parent, start_line, end_line, signature, doc) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(fid, *s) for s in data.symbols],
    )
    if data.symbols:
        assert fid is not None
        if data.symbol_parts is not None:  # from the parse (``schema.symbol_part_ords``)
            part_rows = [(part, fid, ords) for part, ords in data.symbol_parts]
        else:
            part_rows = symbol_part_rows(fid, [s[0] for s in data.symbols], name_parts)
        conn.executemany(
            "INSERT INTO symbol_parts(part, file_id, ords) VALUES (?, ?, ?)", part_rows
        )
    conn.executemany(
        "INSERT INTO refs(file_id, name, kind, count, lines) VALUES (?, ?, ?, ?, ?)",
        [(fid, *r) for r in data.references],
    )
    conn.executemany(
        "INSERT INTO imports(file_id, spec, line, resolved) VALUES (?, ?, ?, ?)",
        [(fid, i.spec, i.line, i.resolved) for i in imports],
    )
    if not data.chunks:
        return
    # the ids SQLite would pick one insert at a time (largest + 1), given up front so
    # both tables take the batch in one executemany each
    first = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM chunks").fetchone()[0]) + 1
    ids = range(first, first + len(data.chunks))
    conn.executemany(
        "INSERT INTO chunks(id, file_id, start_line, end_line, symbol, kind, text, tokens, "
        "content_hash, symbols, parts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(cid, fid, *c[:9]) for cid, c in zip(ids, data.chunks, strict=True)],
    )
    conn.executemany(
        "INSERT INTO chunks_fts(rowid, path, symbols, body, parts) VALUES (?, ?, ?, ?, ?)",
        [(cid, data.path, c[7], c[4], c[8]) for cid, c in zip(ids, data.chunks, strict=True)],
    )
