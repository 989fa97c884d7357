"""Search leaves out terms found in more than a quarter of the chunks (and in more
than ``COMMON_ROWS`` of them).

FTS5 scores every row a query term is in; a one-letter identifier part can be in
half of a large repository's chunks and add next to nothing (its idf is below
ln 3). ``search.Bm25Search`` counts each term's rows (FTS5's own count, per index
generation) and leaves such terms out unless every term is one. These tests hold
it to a reference: the plain FTS5 query of the terms kept, on real indexes small
enough that the row floor is lowered to 0 for them (at its default, a small
repository's searches are the plain query of every term).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.index import search as search_module
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.records import ChunkHit
from codelibrarian.index.search import COMMON_SHARE
from codelibrarian.index.store import SqliteStore, open_store
from codelibrarian.index.tokenize import query_terms
from tests.helpers import make_repo, write_files

#: in every module ("everywhere"), in every other one ("often"), in two ("seldom")
_VOCAB = ("everywhere", "often", "seldom", "walrus", "absent")


def _module(i: int) -> str:
    often = "often" if i % 2 == 0 else "never"
    seldom = "seldom" if i in (3, 7) else "rarely"
    return (
        f"def first_{i}(x: int) -> int:\n"
        f"    everywhere = x + {i}\n"
        f"    return everywhere\n\n\n"
        f"def second_{i}(y: int) -> int:\n"
        f"    # {often} {seldom} walrus{i % 3}\n"
        f"    return y * {i}\n"
    )


def _repo(root: Path, n: int = 12) -> Path:
    return make_repo(root, {f"pkg/m{i}.py": _module(i) for i in range(n)})


def _df(store: SqliteStore, term: str) -> int:
    row = store._conn.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',)
    ).fetchone()
    return int(row[0])


def _reference(store: SqliteStore, query: str, limit: int) -> list[ChunkHit]:
    """``search`` as the plain FTS5 query of the terms the rule keeps."""
    terms = query_terms(query)
    total = int(store._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    num, den = COMMON_SHARE
    floor = search_module.COMMON_ROWS
    kept = [t for t in terms if _df(store, t) <= floor or _df(store, t) * den <= total * num]
    kept = kept or terms
    match = " OR ".join(f'"{t}"' for t in kept)
    rows = store._conn.execute(
        "SELECT c.id, f.path, c.start_line, c.end_line, c.symbol, c.kind, "
        "bm25(chunks_fts, 4.0, 6.0, 1.0, 1.0), c.tokens FROM chunks_fts "
        "JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id "
        "WHERE chunks_fts MATCH ?",
        (match,),
    ).fetchall()
    hits = [ChunkHit(r[0], r[1], r[2], r[3], r[4], r[5], round(-r[6] * 1000), r[7]) for r in rows]
    hits.sort(key=lambda h: (-h.score, h.path, h.start_line, h.end_line, h.chunk_id))
    return hits[:limit]


@pytest.fixture
def no_row_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "COMMON_ROWS", 0)


def test_a_small_repository_keeps_every_term(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert _df(store, "everywhere") <= search_module.COMMON_ROWS
        assert store.common_terms("seldom everywhere") == []
        found = store.search("seldom everywhere", 100)
        assert {h.path for h in found} == {f"pkg/m{i}.py" for i in range(12)}
        assert found == _reference(store, "seldom everywhere", 100)


def test_a_store_below_the_row_floor_counts_no_term(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        seen: list[str] = []
        store._conn.set_trace_callback(seen.append)
        found = store.search("seldom everywhere walrus1", 100)
        store._conn.set_trace_callback(None)
        assert found == _reference(store, "seldom everywhere walrus1", 100)
        assert not [q for q in seen if "count(*) FROM chunks_fts" in q]


@pytest.mark.usefixtures("no_row_floor")
def test_a_term_in_most_chunks_is_left_out_and_said_so(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        total = int(store._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        assert _df(store, "everywhere") * 4 > total  # the sample is what the test says
        assert _df(store, "seldom") * 4 <= total
        assert store.common_terms("seldom everywhere") == ["everywhere"]
        found = store.search("seldom everywhere", 50)
        assert found == store.search("seldom", 50)
        assert found and all(h.path in ("pkg/m3.py", "pkg/m7.py") for h in found)


@pytest.mark.usefixtures("no_row_floor")
def test_a_query_of_common_terms_only_keeps_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        assert store.common_terms("everywhere") == []
        found = store.search("everywhere", 100)
        assert len(found) == _df(store, "everywhere")
        assert found == _reference(store, "everywhere", 100)


@pytest.mark.usefixtures("no_row_floor")
def test_counts_are_read_again_after_a_write(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    index_workspace(repo)
    with open_store(repo) as store:
        assert store.common_terms("seldom everywhere") == ["everywhere"]
        # the same store sees the next generation: "seldom" now in most chunks, and
        # "everywhere" in fewer than a quarter of them
        write_files(repo, {f"pkg/s{i}.py": f"seldom = {i}\n" for i in range(40)})
        index_workspace(repo)
        assert store.common_terms("seldom everywhere") == ["seldom"]
        found = store.search("seldom everywhere", 200)
        assert found == _reference(store, "seldom everywhere", 200)
        assert {h.path for h in found} == {f"pkg/m{i}.py" for i in range(12)}


@settings(max_examples=25, deadline=None)
@given(
    words=st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=5),
    limit=st.integers(1, 60),
    n=st.integers(2, 14),
)
def test_search_equals_the_fts5_query_of_the_kept_terms(
    words: list[str], limit: int, n: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(search_module, "COMMON_ROWS", 0)
        repo = _repo(Path(tmp) / "r", n)
        index_workspace(repo)
        with open_store(repo, readonly=True) as store:
            query = " ".join(words)
            assert store.search(query, limit) == _reference(store, query, limit)
            left = store.common_terms(query)
            assert set(left) < set(query_terms(query)) or not left
            assert store.search(query, limit) == _reference(store, query, limit)  # memo
