"""kill -9 during indexing leaves a consistent index that the next run completes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.store import index_path, open_store
from tests.helpers import sigkill_index_midway, write_files

N_FILES = 300


def _module(i: int) -> str:
    funcs = "".join(
        f"def func_{i}_{j}(value_{j}: int) -> int:\n"
        f'    """Compute step {j} of module {i}."""\n'
        f"    total = value_{j} * {j} + helper_{(i + 1) % N_FILES}({j})\n"
        f"    return total\n\n\n"
        for j in range(40)
    )
    return (
        f"from pkg.mod_{(i + 1) % N_FILES:03d} import helper_{(i + 1) % N_FILES}\n\n\n"
        f"class Service{i}:\n    def run(self) -> int:\n        return func_{i}_0(1)\n\n\n"
        f"def helper_{i}(x: int) -> int:\n    return x\n\n\n{funcs}"
    )


def _consistency(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        counts = {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("files", "symbols", "chunks", "chunks_fts", "refs")
        }
        counts["parsed"] = conn.execute("SELECT COUNT(*) FROM files WHERE stage = 2").fetchone()[0]
        assert counts["chunks"] == counts["chunks_fts"]
        # no file is half-written: every parsed .py file has its symbols and chunks
        half = conn.execute(
            "SELECT path FROM files f WHERE path LIKE '%.py' AND size > 0 AND stage = 2 AND ("
            "NOT EXISTS (SELECT 1 FROM symbols s WHERE s.file_id = f.id) OR "
            "NOT EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = f.id))"
        ).fetchall()
        assert half == []
        return counts
    finally:
        conn.close()


@pytest.mark.slow
def test_sigkill_mid_index_then_clean_completion(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_files(repo, {f"pkg/mod_{i:03d}.py": _module(i) for i in range(N_FILES)})
    write_files(repo, {"pkg/__init__.py": ""})
    db = index_path(repo)
    committed = sigkill_index_midway(repo, 30)
    assert 0 < committed < N_FILES + 1, "the run was not interrupted mid-way"

    before = _consistency(db)
    assert 0 < before["parsed"] < N_FILES + 1

    stats = index_workspace(repo)
    assert stats.files == N_FILES + 1
    assert stats.parsed == N_FILES + 1 - before["parsed"]
    after = _consistency(db)

    fresh = tmp_path / "fresh"
    write_files(fresh, {f"pkg/mod_{i:03d}.py": _module(i) for i in range(N_FILES)})
    write_files(fresh, {"pkg/__init__.py": ""})
    index_workspace(fresh)
    assert _consistency(index_path(fresh)) == after
    with open_store(repo, readonly=True) as a, open_store(fresh, readonly=True) as b:
        assert a.symbols() == b.symbols()
        assert a.imports() == b.imports()
        assert a.edges("ref") == b.edges("ref")
