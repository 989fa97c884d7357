"""A checkout indexed from its sibling's index holds what a cold index of it holds, row for row."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.records import EDGE_KINDS
from codelibrarian.index.store import index_path, open_store
from tests.helpers import commit_all, git, make_repo, write_files

from .samples import JAVASCRIPT, PYTHON


def _module(i: int, extra: str = "") -> str:
    body = "".join(
        f"def step_{i}_{j}(value: int) -> int:\n    return value * {j} + {i}\n\n\n"
        for j in range(6)
    )
    uses = f"from lib.mod_{(i + 1) % 30:02d} import step_{(i + 1) % 30}_1\n\n\n"
    return f'"""Module {i}."""\n{uses}class Part{i}:\n    size = {i}\n\n\n{body}{extra}'


def _old_tree() -> dict[str, str]:
    files = {f"lib/mod_{i:02d}.py": _module(i) for i in range(30)}
    files.update({f"py/{k}": v for k, v in PYTHON.items()})
    files.update({f"js/{k}": v for k, v in JAVASCRIPT.items()})
    return files


def _dump(root: Path) -> dict[str, object]:
    """Every table's rows keyed by path (row ids differ between indexes), in a stable order."""
    conn = sqlite3.connect(f"file:{index_path(root)}?mode=ro", uri=True)
    try:
        q = conn.execute
        path_of = "(SELECT path FROM files WHERE id = file_id)"
        out: dict[str, object] = {
            "files": q(
                "SELECT path, language, content_hash, size, tokens, lines, parse_error, stage "
                "FROM files ORDER BY path"
            ).fetchall(),
            # within a file, symbol order matters: symbol_parts points at positions
            "symbols": q(
                f"SELECT {path_of} AS p, name, kind, parent, start_line, end_line, signature, "
                "doc FROM symbols ORDER BY p, id"
            ).fetchall(),
            "symbol_parts": q(
                f"SELECT part, {path_of} AS p, ords FROM symbol_parts ORDER BY p, part"
            ).fetchall(),
            "refs": q(
                f"SELECT {path_of} AS p, name, kind, count, lines FROM refs ORDER BY p, name, kind"
            ).fetchall(),
            "imports": q(
                f"SELECT {path_of} AS p, spec, line, resolved FROM imports ORDER BY p, line, spec"
            ).fetchall(),
            "chunks": q(
                f"SELECT {path_of} AS p, start_line, end_line, symbol, kind, text, tokens, "
                "content_hash, symbols, parts FROM chunks ORDER BY p, id"
            ).fetchall(),
            "cochange": q("SELECT src, dst, weight FROM cochange ORDER BY src, dst").fetchall(),
            "skipped": q("SELECT path, reason FROM skipped ORDER BY path").fetchall(),
        }
        # the full-text index itself: every term with its document and occurrence counts
        # (a row deleted with the wrong values would leave its terms counted here)
        q("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, chunks_fts, 'row')")
        out["fts_terms"] = q("SELECT term, doc, cnt FROM temp.vocab ORDER BY term").fetchall()
        out["fts_rows"] = q("SELECT COUNT(*) FROM chunks_fts").fetchone()
    finally:
        conn.close()
    with open_store(root, readonly=True) as store:
        out["edges"] = {kind: store.edges(kind) for kind in EDGE_KINDS}
        graph = store.combined_graph()
        out["graph"] = graph
        hits = store.search("step value module part shopping cart total", 200)
        out["search"] = [(h.path, h.start_line, h.end_line, h.score) for h in hits]
    return out


def test_a_checkout_at_another_commit_equals_a_cold_index_of_it(tmp_path: Path) -> None:
    old = _old_tree()
    origin = make_repo(tmp_path / "origin", old)
    # the next commit edits, adds and deletes files
    for i in (2, 7, 19):
        write_files(
            origin, {f"lib/mod_{i:02d}.py": _module(i, "def added() -> int:\n    return 1\n")}
        )
    write_files(origin, {"lib/new_one.py": _module(40), "js/extra.js": "export const x = 1;\n"})
    (origin / "lib/mod_11.py").unlink()
    (origin / "py/src/shop/checkout.py").unlink()
    commit_all(origin, "edits, an added and a deleted file")
    for name, at in (("old", "HEAD~1"), ("new", "HEAD")):
        # the sibling sits at the other commit; this checkout starts from its index
        sibling, here, cold = (tmp_path / f"{name}-{k}" for k in ("sibling", "seeded", "cold"))
        for clone in (sibling, here, cold):
            git(tmp_path, "clone", "-q", str(origin), str(clone))
        git(here, "checkout", "-q", at)
        git(cold, "checkout", "-q", at)
        git(sibling, "checkout", "-q", "HEAD" if at == "HEAD~1" else "HEAD~1")
        index_workspace(sibling)
        seeded = index_workspace(here)
        assert seeded.seeded, name
        assert 0 < seeded.parsed < len(old) // 2, name
        fresh = index_workspace(cold, cache=None)
        assert not fresh.seeded and fresh.cache_hits == 0
        got, want = _dump(here), _dump(cold)
        assert got.keys() == want.keys()
        for table in want:
            assert got[table] == want[table], (name, table)


def test_an_index_with_a_full_text_copy_of_the_text_migrates_to_the_same_rows(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "r", _old_tree())
    index_workspace(repo, cache=None)
    want = _dump(repo)
    # what a schema-4 index looks like: the full-text table holds its own copy
    conn = sqlite3.connect(index_path(repo), isolation_level=None)
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(path, symbols, body, parts, "
        "tokenize = \"unicode61 remove_diacritics 2 tokenchars '_'\")"
    )
    conn.execute(
        "INSERT INTO chunks_fts(rowid, path, symbols, body, parts) SELECT c.id, f.path, "
        "c.symbols, c.text, c.parts FROM chunks c JOIN files f ON f.id = c.file_id"
    )
    conn.execute("ALTER TABLE chunks DROP COLUMN symbols")
    conn.execute("ALTER TABLE chunks DROP COLUMN parts")
    conn.execute("DELETE FROM migrations WHERE version >= 5")
    conn.close()
    with open_store(repo):  # a writer's open migrates
        pass
    assert _dump(repo) == want
    # and rows written before the migration are deleted exactly when their file changes
    write_files(repo, {"lib/mod_03.py": _module(3, "def later() -> int:\n    return 2\n")})
    (repo / "lib/mod_04.py").unlink()
    commit_all(repo, "edit and delete")
    index_workspace(repo, cache=None)
    cold = tmp_path / "cold"
    git(tmp_path, "clone", "-q", str(repo), str(cold))
    index_workspace(cold, cache=None)
    assert _dump(repo) == _dump(cold)


@pytest.mark.parametrize("table", ["files", "symbols"])
def test_a_damaged_sibling_copy_is_discarded_before_anything_is_written(
    tmp_path: Path, table: str
) -> None:
    """The copy's check runs while the files are listed; a copy that fails it (whether
    the listing read the damaged pages or not) is dropped and the checkout is built
    from its own files, as a cold index."""
    origin = make_repo(tmp_path / "origin", _old_tree())
    sibling, here, cold = (tmp_path / k for k in ("sibling", "here", "cold"))
    for clone in (sibling, here, cold):
        git(tmp_path, "clone", "-q", str(origin), str(clone))
    index_workspace(sibling)
    db = index_path(sibling)
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        at = (root.fetchone()[0] - 1) * page
    finally:
        conn.close()
    rng = random.Random(table)
    with open(db, "r+b") as fh:
        fh.seek(at + 8)
        fh.write(bytes(rng.randrange(256) for _ in range(page - 16)))
    stats = index_workspace(here)
    assert not stats.seeded and stats.rebuilt is False
    assert any("failed its check" in n for n in stats.notes), stats.notes
    assert not any("started from another checkout" in n for n in stats.notes)
    index_workspace(cold, cache=None)
    assert _dump(here) == _dump(cold)
