"""The SQLite backend's record writes (``storage.RecordWriter``): the indexer's.

Callers hold the index's writer lock (``lock.py``); each call is one ``BEGIN
IMMEDIATE`` transaction (``sqlite_base.transaction``), so a process killed between
calls leaves whole batches. :class:`SqliteWrites` is a part of ``store.SqliteStore``,
over the same connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from .records import FileData, ImportRecord, estimate_tokens
from .schema import create_secondary_indexes, drop_secondary_indexes, symbol_part_rows
from .sqlite_base import transaction

__all__ = ["SqliteWrites"]


class SqliteWrites:
    """The writes of ``store.SqliteStore`` (which opens ``_conn``)."""

    _conn: sqlite3.Connection
    #: symbol name -> name parts, kept during :meth:`bulk_load` only (``symbol_part_rows``)
    _name_parts: dict[str, frozenset[str]] | None

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
        with transaction(self._conn) as conn:
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
        with transaction(self._conn, bump=False) as conn:
            conn.executemany("DELETE FROM skipped WHERE path = ?", [(p,) for p in gone])
            conn.executemany(
                "INSERT OR REPLACE INTO skipped(path, reason, size, mtime_ns) VALUES (?, ?, ?, ?)",
                rows,
            )

    def touch_files(self, items: Sequence[tuple[str, int]]) -> None:
        """Record new mtimes for files whose content did not change."""
        with transaction(self._conn, bump=False) as conn:
            conn.executemany(
                "UPDATE files SET mtime_ns = ? WHERE path = ?", [(m, p) for p, m in items]
            )

    def write_files(self, batch: Sequence[tuple[FileData, Sequence[ImportRecord]]]) -> None:
        """Replace the rows of each file in ``batch`` in one transaction.

        A listed file (stage 0) has no rows below it: its row is completed in
        place, with no delete to cascade (which, while a cold build runs without
        secondary indexes, would scan every child table).
        """
        with transaction(self._conn) as conn:
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
        with transaction(self._conn) as conn:
            for path in sorted(paths):
                _delete_file(conn, path)

    def set_import_resolutions(self, changes: Sequence[tuple[str, str, int, str | None]]) -> None:
        """Update ``resolved`` for ``(path, spec, line, resolved)`` rows."""
        if not changes:
            return
        with transaction(self._conn) as conn:
            conn.executemany(
                "UPDATE imports SET resolved = ? WHERE spec = ? AND line = ? AND file_id = "
                "(SELECT id FROM files WHERE path = ?)",
                [(res, spec, line, path) for path, spec, line, res in changes],
            )

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Write many files without secondary indexes, then build them once."""
        with transaction(self._conn, bump=False) as conn:
            drop_secondary_indexes(conn)
        self._name_parts = {}
        try:
            yield
        finally:
            self._name_parts = None
            with transaction(self._conn, bump=False) as conn:
                create_secondary_indexes(conn)

    def put_layouts(self, rows: Sequence[tuple[str, bytes]]) -> None:
        """Store ``(path, encoded layout)`` rows of parsed files (a derived table: the
        generation is not bumped; a path not parsed, or gone, is left out)."""
        with transaction(self._conn, bump=False) as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO layouts(file_id, data) "
                "SELECT id, ? FROM files WHERE path = ? AND stage = 2",
                [(data, path) for path, data in rows],
            )

    def set_meta(self, values: Mapping[str, str]) -> None:
        with transaction(self._conn, bump=False) as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", sorted(values.items())
            )


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
