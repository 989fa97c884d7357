"""A sibling index is copied as one consistent snapshot: as a file when its write-ahead
log is empty, through SQLite's backup when the log holds committed pages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codelibrarian.index import seed


def _make(path: Path, rows: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t(v) VALUES (?)", [(f"row {i}",) for i in range(rows)])
    conn.commit()
    conn.close()  # the last connection checkpoints: the log is left empty


def _rows(path: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id, v FROM t ORDER BY id").fetchall()
    finally:
        conn.close()


def test_an_index_at_rest_is_copied_as_a_file(tmp_path: Path) -> None:
    source = tmp_path / "a.db"
    _make(source, 500)
    wal = source.with_name("a.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        assert seed._file_copy(src, source, tmp_path / "raw.db")
    finally:
        src.close()
    assert (tmp_path / "raw.db").read_bytes() == source.read_bytes()
    target = tmp_path / "b.db"
    assert seed._copy(source, target, check=True)
    assert _rows(target) == _rows(source)
    assert not target.with_name("b.db-wal").exists()


def test_pages_still_in_the_log_are_copied_through_the_backup(tmp_path: Path) -> None:
    source = tmp_path / "a.db"
    _make(source, 50)
    owner = sqlite3.connect(source)  # an owner that keeps its log: nothing checkpointed
    try:
        owner.execute("PRAGMA wal_autocheckpoint = 0")
        owner.executemany("INSERT INTO t(v) VALUES (?)", [(f"late {i}",) for i in range(200)])
        owner.commit()
        assert source.with_name("a.db-wal").stat().st_size > 0
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            assert not seed._file_copy(src, source, tmp_path / "raw.db")
        finally:
            src.close()
        target = tmp_path / "b.db"
        assert seed._copy(source, target, check=True)
        copied = _rows(target)
        assert len(copied) == 250 and copied[-1][1] == "late 199"  # the log's rows too
    finally:
        owner.close()
