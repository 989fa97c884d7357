"""The SQLite schema of ``.librarian/index.db`` and its migrations.

Each migration is a numbered list of statements applied once, inside the same
``BEGIN IMMEDIATE`` transaction that records it in ``migrations``; a database
from a newer codelibrarian (a version we do not know) is refused rather than
guessed at. Files own their rows: deleting a file row cascades to its symbols,
references, imports and chunks (the FTS rows are deleted explicitly, FTS5 has no
foreign keys).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from ..errors import IndexCorrupt
from .tokenize import name_parts_uncached

__all__ = [
    "SCHEMA_VERSION",
    "create_secondary_indexes",
    "drop_secondary_indexes",
    "migrate",
]

_V1: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS meta(
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL)""",
    """CREATE TABLE files(
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        language TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        lines INTEGER NOT NULL,
        parse_error TEXT)""",
    """CREATE TABLE symbols(
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        parent TEXT,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        signature TEXT NOT NULL,
        doc TEXT)""",
    "CREATE INDEX symbols_file ON symbols(file_id)",
    "CREATE INDEX symbols_name ON symbols(name)",
    """CREATE TABLE refs(
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        line INTEGER NOT NULL)""",
    "CREATE INDEX refs_file ON refs(file_id)",
    "CREATE INDEX refs_name ON refs(name)",
    """CREATE TABLE imports(
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        spec TEXT NOT NULL,
        line INTEGER NOT NULL,
        resolved TEXT)""",
    "CREATE INDEX imports_file ON imports(file_id)",
    "CREATE INDEX imports_resolved ON imports(resolved)",
    """CREATE TABLE chunks(
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        symbol TEXT,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        content_hash TEXT NOT NULL)""",
    "CREATE INDEX chunks_file ON chunks(file_id)",
    # rowid = chunks.id; "_" is a token character so snake_case names stay whole
    # in path/symbols/body while their parts go to the ``parts`` column.
    """CREATE VIRTUAL TABLE chunks_fts USING fts5(
        path, symbols, body, parts,
        tokenize = "unicode61 remove_diacritics 2 tokenchars '_'")""",
    """CREATE TABLE cochange(
        src TEXT NOT NULL,
        dst TEXT NOT NULL,
        weight INTEGER NOT NULL,
        PRIMARY KEY(src, dst))""",
    """CREATE TABLE graph_cache(
        kind TEXT PRIMARY KEY,
        generation INTEGER NOT NULL,
        data TEXT NOT NULL)""",
)

#: references grouped per (file, name, kind): a fifth of the rows, clustered by file
_V2: tuple[str, ...] = (
    """CREATE TABLE refs_grouped(
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        count INTEGER NOT NULL,
        lines TEXT NOT NULL,
        PRIMARY KEY(file_id, name, kind)) WITHOUT ROWID""",
    """INSERT INTO refs_grouped(file_id, name, kind, count, lines)
        SELECT file_id, name, kind, COUNT(*), replace(group_concat(DISTINCT line), ',', ' ')
        FROM (SELECT * FROM refs ORDER BY file_id, name, kind, line)
        GROUP BY file_id, name, kind""",
    "DROP TABLE refs",
    "ALTER TABLE refs_grouped RENAME TO refs",
    "CREATE INDEX refs_name ON refs(name)",
)

#: the staged index: a file row is written when the file is listed (``stage`` 0) and
#: completed by its parse (``stage`` 2: symbols, references, imports, chunks, FTS);
#: skipped files are remembered with their reason; content hashes become git blob ids,
#: so every row is re-hashed once (an mtime of -1 never matches the disk)
_V3: tuple[str, ...] = (
    "ALTER TABLE files ADD COLUMN stage INTEGER NOT NULL DEFAULT 2",
    "UPDATE files SET mtime_ns = -1",
    """CREATE TABLE skipped(
        path TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL) WITHOUT ROWID""",
)


#: entries a ``symbol_part_rows`` memo holds before it is emptied
_NAME_MEMO_MAX = 16_384


def symbol_part_rows(
    file_id: int,
    names: list[str] | tuple[str, ...],
    memo: dict[str, frozenset[str]] | None = None,
) -> list[tuple[str, int, str]]:
    """The ``symbol_parts`` rows of one file: ``(part, file_id, ords)`` for each name part,
    ``ords`` the positions (space-separated, ascending) in the file's symbol list of
    the symbols whose name has that part, so two definitions of one name count twice,
    as they do in ``symbols``. ``memo`` (name -> parts), when given, is read and filled:
    a cold build passes one for its duration (``__init__``, ``run``, ``test_*`` repeat
    across files) and drops it at the end."""

    def split(name: str) -> frozenset[str]:
        assert memo is not None
        known = memo.get(name)
        if known is None:
            if len(memo) >= _NAME_MEMO_MAX:
                memo.clear()  # bounded: a few MiB in the indexing process
            known = memo[name] = name_parts_uncached(name)
        return known

    ords = symbol_part_ords(names, name_parts_uncached if memo is None else split)
    return [(part, file_id, at) for part, at in ords]


def symbol_part_ords(
    names: list[str] | tuple[str, ...], split: Callable[[str], frozenset[str]]
) -> list[tuple[str, str]]:
    """``symbol_part_rows`` without the file id: ``(part, ords)``, sorted by part, with
    ``split`` giving a name's parts (``name_parts_uncached`` or a memo of it). A parse
    worker computes these for its payload, so the writer only adds the file's id."""
    by_part: dict[str, list[int]] = {}
    for ord_, name in enumerate(names):
        for part in split(name):
            by_part.setdefault(part, []).append(ord_)
    return [(part, " ".join(map(str, by_part[part]))) for part in sorted(by_part)]


def _backfill_symbol_parts(conn: sqlite3.Connection) -> None:
    """Fill ``symbol_parts`` for an index written before it existed (once, in the migration)."""
    names: dict[int, list[str]] = {}
    for file_id, name in conn.execute("SELECT file_id, name FROM symbols ORDER BY file_id, id"):
        names.setdefault(int(file_id), []).append(str(name))
    conn.executemany(
        "INSERT INTO symbol_parts(part, file_id, ords) VALUES (?, ?, ?)",
        [row for file_id in sorted(names) for row in symbol_part_rows(file_id, names[file_id])],
    )


#: the name parts of every file's symbols (``tokenize.name_parts``), written with the
#: file's symbols and deleted with its row: ranking asks "which files define names with
#: these parts" of this table, where it used to split every symbol name in every
#: process. One row per part and file (half the rows of one per symbol and part).
_V4: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    """CREATE TABLE symbol_parts(
        part TEXT NOT NULL,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        ords TEXT NOT NULL,
        PRIMARY KEY(part, file_id)) WITHOUT ROWID""",
    _backfill_symbol_parts,
    "CREATE INDEX IF NOT EXISTS symbol_parts_file ON symbol_parts(file_id)",
)

_FTS_TOKENIZE = "tokenize = \"unicode61 remove_diacritics 2 tokenchars '_'\""


def _contentless_fts(conn: sqlite3.Connection) -> None:
    """Move the full-text values to the chunk rows and rebuild the table without content.

    Idempotent (it checks what is there), so a database whose migration records were
    lost or rewound is brought to the same shape.
    """
    cols = {str(r[1]) for r in conn.execute("PRAGMA table_info(chunks)")}
    for col in ("symbols", "parts"):
        if col not in cols:
            conn.execute(f"ALTER TABLE chunks ADD COLUMN {col} TEXT NOT NULL DEFAULT ''")
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
    if sql is not None and "content" in str(sql[0]):
        return  # already contentless
    if sql is not None:
        conn.execute(
            "UPDATE chunks SET symbols = COALESCE(t.symbols, ''), parts = COALESCE(t.parts, '') "
            "FROM chunks_fts t WHERE t.rowid = chunks.id"
        )
        conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        f"CREATE VIRTUAL TABLE chunks_fts USING fts5(path, symbols, body, parts, "
        f"content = '', {_FTS_TOKENIZE})"
    )
    conn.execute(
        "INSERT INTO chunks_fts(rowid, path, symbols, body, parts) "
        "SELECT c.id, f.path, c.symbols, c.text, c.parts "
        "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
    )


_FTS_TOKENIZE = "tokenize = \"unicode61 remove_diacritics 2 tokenchars '_'\""

#: the full-text table keeps no copy of the text (``content=''``): it held every chunk's
#: body a second time (a third of the index). The values it indexed are kept on the chunk
#: row (``symbols``, ``parts``; the body is ``text``, the path the file's), because a
#: contentless table deletes a row only when told the exact values it indexed.
_V5: tuple[str | Callable[[sqlite3.Connection], None], ...] = (_contentless_fts,)

#: recent commits' messages and the code files they edited (``history_edits.py``):
#: compose finds the past commits most like a task (BM25 over their message words, the
#: commit's order as rowid) and reads which files they edited. Idempotent: a database whose
#: migration records were rewound is brought to the same shape
_V6: tuple[str, ...] = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS past_commits USING fts5(words, {_FTS_TOKENIZE})",
    """CREATE TABLE IF NOT EXISTS past_edits(
        ord INTEGER NOT NULL,
        path TEXT NOT NULL,
        PRIMARY KEY(ord, path)) WITHOUT ROWID""",
)

#: each parsed file's span layout (``layouts.py``), stored once per file content: the row
#: goes with its file row, which the index replaces whenever the file's content changes
_V7: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS layouts(
        file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
        data BLOB NOT NULL)""",
)

#: (version, name, steps: SQL statements or functions of the connection), applied in order
MIGRATIONS: tuple[tuple[int, str, tuple[str | Callable[[sqlite3.Connection], None], ...]], ...] = (
    (1, "initial", _V1),
    (2, "grouped references", _V2),
    (3, "staged index, skipped files, blob ids", _V3),
    (4, "symbol name parts", _V4),
    (5, "contentless full-text table", _V5),
    (6, "past commits' messages and edited files", _V6),
    (7, "span layouts", _V7),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]

#: the secondary indexes of the current schema: a cold build drops them, loads every
#: file, and creates them once at the end (sorted builds beat per-row upkeep); any
#: writer recreates missing ones on open, so a build killed half-way costs nothing
SECONDARY_INDEXES: tuple[tuple[str, str], ...] = (
    ("symbols_file", "symbols(file_id)"),
    ("symbols_name", "symbols(name)"),
    ("imports_file", "imports(file_id)"),
    ("imports_resolved", "imports(resolved)"),
    ("chunks_file", "chunks(file_id)"),
    ("refs_name", "refs(name)"),
    ("symbol_parts_file", "symbol_parts(file_id)"),
)


def create_secondary_indexes(conn: sqlite3.Connection) -> None:
    """Create whichever secondary indexes are missing (a no-op when all exist)."""
    for name, target in SECONDARY_INDEXES:
        conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {target}")


def drop_secondary_indexes(conn: sqlite3.Connection) -> None:
    for name, _ in SECONDARY_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def current_version(conn: sqlite3.Connection) -> int:
    """Highest applied migration (0 for an empty database)."""
    row = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='migrations'"
    ).fetchone()
    if row is None:
        return 0
    got = conn.execute("SELECT MAX(version) FROM migrations").fetchone()
    return int(got[0] or 0)


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database to ``SCHEMA_VERSION``; returns the version found before.

    Raises ``IndexCorrupt`` for a database written by a newer schema.
    """
    try:
        before = current_version(conn)
    except sqlite3.DatabaseError as exc:
        raise IndexCorrupt(
            f"the index database cannot be read ({exc}).",
            hint="Delete .librarian/index.db and run `librarian index` again.",
        ) from None
    if before > SCHEMA_VERSION:
        raise IndexCorrupt(
            f"the index has schema version {before}, newer than this codelibrarian "
            f"({SCHEMA_VERSION}).",
            hint="Upgrade codelibrarian, or delete .librarian/index.db and re-index.",
        )
    if before == SCHEMA_VERSION:
        return before
    conn.execute("BEGIN IMMEDIATE")
    try:
        before = current_version(conn)  # another writer may have migrated meanwhile
        conn.execute(
            """CREATE TABLE IF NOT EXISTS migrations(
                version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"""
        )
        for version, name, statements in MIGRATIONS:
            if version <= before:
                continue
            for step in statements:
                if callable(step):
                    step(conn)
                else:
                    conn.execute(step)
            conn.execute(
                "INSERT INTO migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, int(time.time())),
            )
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', "
            "COALESCE((SELECT value FROM meta WHERE key='generation'), '0'))"
        )
        # which database this is: one deleted and rebuilt restarts its generation
        # counter, so caches kept across calls (a resident server's) key on both
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('created', ?)", (str(time.time_ns()),)
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return before
