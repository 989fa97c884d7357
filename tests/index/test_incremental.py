"""Incremental indexing: edits, renames, deletes, parse failures, targeted updates, search."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from codelibrarian.config import Config, IndexConfig, WorkspaceConfig
from codelibrarian.errors import IndexCorrupt, NotFound
from codelibrarian.index.indexer import index_workspace, update_paths
from codelibrarian.index.schema import MIGRATIONS, SCHEMA_VERSION
from codelibrarian.index.store import SqliteStore, index_path, open_store
from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo, write_files

from .samples import PYTHON

BROKEN = "def broken(:\n    ((((\n" + ")))) ] } {{ [[ ::: \n" * 40


def _names(store: SqliteStore) -> set[str]:
    return {s.name for s in store.symbols()}


def test_edit_rename_delete_then_incremental_update(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    first = index_workspace(repo)
    assert first.parsed == 4 and first.deleted == 0
    again = index_workspace(repo)
    assert again.parsed == 0 and again.unchanged == 4

    models = repo / "src/shop/models.py"
    models.write_text(models.read_text().replace("compute_total", "compute_sum"))
    checkout = repo / "src/shop/checkout.py"
    text = checkout.read_text().replace("compute_total", "compute_sum")
    checkout.unlink()
    (repo / "src/shop/pay.py").write_text(text)
    (repo / "src/shop/__init__.py").unlink()

    stats = index_workspace(repo)
    assert stats.parsed == 2  # models.py (edited) and pay.py (new)
    assert stats.deleted == 2  # checkout.py (renamed away) and __init__.py
    with open_store(repo, readonly=True) as store:
        paths = [f.path for f in store.files()]
        assert paths == ["pyproject.toml", "src/shop/models.py", "src/shop/pay.py"]
        names = _names(store)
        assert "compute_sum" in names and "compute_total" not in names
        assert store.symbols(path="src/shop/checkout.py") == []
        assert store.chunks_for("src/shop/checkout.py") == []
        hits = store.search("compute_total", 5)
        assert all("compute_total" not in store.chunk(h.chunk_id).text for h in hits)
        assert {(i.spec, i.resolved) for i in store.imports("src/shop/pay.py")} >= {
            (".models", "src/shop/models.py")
        }
        assert ("src/shop/pay.py", "src/shop/models.py") in {
            (a, b) for a, b, _ in store.edges("ref")
        }
        counts = store.counts()
        assert counts["chunks"] == counts["chunks_fts"]


def test_touch_without_change_does_not_reparse(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    index_workspace(repo)
    target = repo / "src/shop/models.py"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    stats = index_workspace(repo)
    assert stats.parsed == 0
    # and the new mtime is recorded, so the next run does not even hash it
    with open_store(repo, readonly=True) as store:
        assert store.file_states()["src/shop/models.py"][2] == st.st_mtime_ns + 5_000_000_000


def test_a_file_that_fails_to_parse_is_indexed_as_text(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "r", {**PYTHON, "src/shop/broken.py": BROKEN, "README.md": "# Shop\n"}
    )
    stats = index_workspace(repo)
    assert [p for p, _ in stats.parse_errors] == ["src/shop/broken.py"]
    with open_store(repo, readonly=True) as store:
        rec = store.file("src/shop/broken.py")
        assert rec is not None and rec.parse_error and "syntax errors" in rec.parse_error
        assert store.symbols(path="src/shop/broken.py") == []
        chunks = store.chunks_for("src/shop/broken.py")
        assert chunks and {c.kind for c in chunks} == {"text"}
        assert any(h.path == "src/shop/broken.py" for h in store.search("broken", 5))
        readme = store.file("README.md")
        assert readme is not None and readme.language == "markdown" and readme.parse_error is None
        # the rest of the repository is unaffected
        assert "ShoppingCart" in _names(store)


def test_update_paths_reindexes_only_what_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {**PYTHON, ".gitignore": "build/\n"})
    index_workspace(repo)
    models = repo / "src/shop/models.py"
    models.write_text(models.read_text() + "\n\ndef discount(cart):\n    return 0\n")
    write_files(repo, {"build/gen.py": "def generated():\n    pass\n"})
    result = update_paths(repo, ["src/shop/models.py", "build/gen.py", "src/shop/checkout.py"])
    assert result.changed == ("src/shop/models.py",)  # checkout unchanged, build/ ignored
    (repo / "src/shop/checkout.py").unlink()
    result = update_paths(repo, ["src/shop/checkout.py"])
    assert result.removed == ("src/shop/checkout.py",)
    with open_store(repo, readonly=True) as store:
        assert "discount" in _names(store)
        assert store.file("build/gen.py") is None
        assert store.file("src/shop/checkout.py") is None


def test_new_file_resolves_an_old_import(tmp_path: Path) -> None:
    files = {"app.js": "import { helper } from './util';\nhelper();\n"}
    repo = make_repo(tmp_path / "r", files)
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert [i.resolved for i in store.imports("app.js")] == [None]
    write_files(repo, {"util.js": "export function helper() { return 1; }\n"})
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert [i.resolved for i in store.imports("app.js")] == ["util.js"]
        assert ("app.js", "util.js") in {(a, b) for a, b, _ in store.edges("ref")}


def test_search_splits_identifiers_and_scores_with_integers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        for query in ("compute_total", "compute total", "computeTotal", "shopping cart"):
            hits = store.search(query, 10)
            assert hits, query
            assert all(isinstance(h.score, int) for h in hits)
            keys = [(-h.score, h.path, h.start_line) for h in hits]
            assert keys == sorted(keys)
        assert store.search("compute_total", 1)[0].symbol == "compute_total"
        assert "ShoppingCart" in {h.symbol for h in store.search("shopping", 10)}
        assert store.search("", 5) == [] and store.search("!!!", 5) == []
        hit = store.search("add_item", 1)[0]
        chunk = store.chunk(hit.chunk_id)
        assert "def add_item" in chunk.text
        with pytest.raises(NotFound):
            store.chunk(10**9)


def test_chunks_respect_the_token_cap_with_exact_counts(tmp_path: Path) -> None:
    body = "".join(f"    value_{i} = compute_something({i}, 'text {i}')\n" for i in range(120))
    files = {"big.py": f"def huge():\n{body}    return 0\n", "notes.txt": "word " * 2000}
    repo = make_repo(tmp_path / "r", files)
    # skips off: the one-line notes.txt is what exercises cutting inside a line
    cfg = Config(index=IndexConfig(chunk_max_tokens=64), workspace=WorkspaceConfig(skip=()))
    index_workspace(repo, cfg)
    tok = get_tokenizer("gpt-4o")
    with open_store(repo, readonly=True) as store:
        for path in ("big.py", "notes.txt"):
            chunks = store.chunks_for(path)
            assert len(chunks) > 3
            for c in chunks:
                assert c.tokens == tok.count(c.text)
                assert c.tokens <= 64
        big = store.chunks_for("big.py")
        assert {c.symbol for c in big} == {"huge"}
        assert big[0].start_line == 1 and big[-1].end_line == 122


def test_schema_is_versioned_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    index_workspace(repo)
    db = index_path(repo)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT MAX(version) FROM migrations").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute("INSERT INTO migrations VALUES (?, 'future', 0)", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(IndexCorrupt, match="newer"):
        SqliteStore(db)


def test_reading_a_missing_index_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="librarian index"):
        open_store(tmp_path, readonly=True)


def test_a_version_1_index_migrates_to_grouped_references(tmp_path: Path) -> None:
    """Migration 2 folds one-row-per-use references into one row per file and name."""
    db = tmp_path / "index.db"
    conn = sqlite3.connect(db)
    for stmt in MIGRATIONS[0][2]:
        conn.execute(stmt)
    conn.execute("CREATE TABLE migrations(version INTEGER PRIMARY KEY, name TEXT, applied_at INT)")
    conn.execute("INSERT INTO migrations VALUES (1, 'initial', 0)")
    conn.execute("INSERT INTO files VALUES (1, 'a.py', 'python', 'h', 1, 0, 1, 9, NULL)")
    uses = [("run", "call", 7), ("run", "call", 3), ("run", "call", 7), ("x", "attribute", 5)]
    conn.executemany("INSERT INTO refs VALUES (1, ?, ?, ?)", uses)
    conn.commit()
    conn.close()
    with SqliteStore(db) as store:
        assert store.counts()["refs"] == 4  # uses, not rows
        assert [(r.name, r.kind, r.path, r.line) for r in store.references()] == [
            ("run", "call", "a.py", 3),
            ("x", "attribute", "a.py", 5),
            ("run", "call", "a.py", 7),
        ]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT MAX(version) FROM migrations").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT name, count, lines FROM refs ORDER BY name").fetchall() == [
        ("run", 3, "3 7"),
        ("x", 1, "5"),
    ]
    conn.close()
