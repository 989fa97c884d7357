"""``SqliteStore.search`` (``search.Bm25Search``) summed from per-term scores
remembered per generation: the same hits, scores and order as one FTS5 query of the
task's terms, whichever way a query goes, and a term read once per generation."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codelibrarian.index import search as search_mod
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.records import ChunkHit
from codelibrarian.index.store import SqliteStore, open_store
from codelibrarian.index.tokenize import query_terms
from tests.helpers import make_repo

# words of every frequency: one-character and digit parts that most chunks hold,
# names that a few hold, and names that repeat so that many chunks tie exactly
_COMMON = ["c", "0", "32", "x", "get", "set", "path", "code"]
_RARE = ["stm32c0", "partevent", "usbhost", "mm_gran", "hello_zig", "nucleo_f767zi"]
VOCAB = _COMMON + _RARE + ["errors", "logging", "spi", "eth", "arm64"]


def _files(seed: int) -> dict[str, str]:
    rnd = random.Random(seed)
    files: dict[str, str] = {}
    for f in range(24):
        body = []
        for fn in range(rnd.randint(2, 6)):
            name = "_".join(rnd.sample(VOCAB, rnd.randint(1, 3)))
            words = " ".join(rnd.choice(_COMMON) for _ in range(rnd.randint(0, 12)))
            if rnd.random() < 0.3:
                words += " " + rnd.choice(_RARE)
            body.append(f"def {name}_{fn}(c, x0):\n    # {words}\n    return c + x0\n")
        folder = rnd.choice(["src/c", "src/stm32c0", "lib/path", "code"])
        files[f"{folder}/m{f}_{rnd.choice(_COMMON)}.py"] = "\n\n".join(body)
    for f in range(6):  # identical chunks in different files: equal scores, ids decide
        files[f"same/copy{f}.py"] = "def c_get_0(x):\n    return x  # c 0 32 path\n"
    return files


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("memo") / "r", _files(18))
    index_workspace(root)
    return root


@pytest.fixture(autouse=True)
def counted(monkeypatch: pytest.MonkeyPatch) -> None:
    # these repositories hold a few hundred chunks: count terms' rows as a large one does
    monkeypatch.setattr(search_mod, "COMMON_ROWS", 0)


def _whole(store: SqliteStore, query: str, limit: int) -> list[ChunkHit]:
    """What ``search`` gave before it could sum: one FTS5 query of the terms it keeps."""
    terms = query_terms(query)
    common = set(store.common_terms(query))
    return store._bm25.search_whole([t for t in terms if t not in common], limit)


def _queries(store: SqliteStore) -> list[str]:
    """The scoring queries ``store`` makes from now on: "whole" (FTS5 scores the query)
    or "term" (one term's scores read)."""
    seen: list[str] = []

    def note(sql: str) -> None:
        if "bm25(" in sql:
            seen.append("whole" if "h.rank" in sql else "term")

    store._conn.set_trace_callback(note)
    return seen


queries = st.lists(st.sampled_from([*VOCAB, "nothing_here", "zz9"]), min_size=1, max_size=7)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tasks=st.lists(st.tuples(queries, st.sampled_from([1, 3, 20, 200])), min_size=1, max_size=6),
    dense=st.booleans(),
    cost=st.sampled_from([(0, 1), (5, 4), (100, 1)]),
    memo_rows=st.sampled_from([40, 2_000_000]),
)
def test_search_equals_one_fts5_query_of_the_task_s_terms(
    repo: Path,
    *,
    tasks: list[tuple[list[str], int]],
    dense: bool,
    cost: tuple[int, int],
    memo_rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # both ways of summing (a dense array, or the distinct ids), every choice between
    # summing and one query, and a memo so small that terms are evicted and read again
    monkeypatch.setattr(search_mod, "_DENSE_SPAN", 10**6 if dense else -(10**6))
    monkeypatch.setattr(search_mod, "_READ_COST", cost)
    monkeypatch.setattr(search_mod, "_TERM_MEMO_ROWS", memo_rows)
    with open_store(repo, readonly=True) as store:
        for words, limit in [*tasks, *tasks]:  # each task twice: its terms searched again
            query = " ".join(words)
            assert store.search(query, limit) == _whole(store, query, limit)


def test_a_term_searched_again_is_read_then_remembered(repo: Path) -> None:
    with open_store(repo, readonly=True) as store:
        seen = _queries(store)
        first = store.search("usbhost logging errors", 20)
        assert seen == ["whole"]  # never searched: one whole query
        assert store._bm25._term_memo == {}
        seen.clear()
        # searched again: each term read alone (the reference query's terms not counted)
        assert store.search("logging errors usbhost", 20) == first
        assert seen == ["term"] * 3
        assert set(store._bm25._term_memo) == {"usbhost", "logging", "errors"}
        seen.clear()
        second = store.search("errors logging eth", 20)  # two remembered, one read
        assert seen == ["term"] and "eth" in store._bm25._term_memo
        assert second == _whole(store, "errors logging eth", 20)


def test_a_one_call_process_queries_fts5_whole(repo: Path) -> None:
    with open_store(repo, readonly=True) as store:
        seen = _queries(store)
        store.search("c path stm32c0 logging", 20)
        store.search("spi eth arm64", 20)
        assert seen == ["whole", "whole"]
        assert store._bm25._term_memo == {}


def test_new_terms_whose_rows_outweigh_the_remembered_ones_leave_the_query_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_mod, "_READ_COST", (100, 1))  # reading: far dearer
    with open_store(repo, readonly=True) as store:
        store.search("usbhost", 20)
        seen = _queries(store)
        store.search("usbhost logging errors spi", 20)
        assert seen == ["whole"]


def test_a_query_reading_more_rows_than_the_cap_goes_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(repo, readonly=True) as store:
        store.search("usbhost logging errors", 20)  # searched: read when they come again
        rows = sum(store._bm25._df[t] for t in ("usbhost", "logging", "errors"))
        monkeypatch.setattr(search_mod, "_READ_ROWS", rows - 1)
        seen = _queries(store)
        assert store.search("usbhost logging errors", 20) == _whole(
            store, "usbhost logging errors", 20
        )
        assert seen[0] == "whole" and store._bm25._term_memo == {}
        monkeypatch.setattr(search_mod, "_READ_ROWS", rows)  # within the cap: read
        seen.clear()
        store.search("usbhost logging errors", 20)
        assert seen == ["term"] * 3


def test_a_write_makes_every_term_read_again(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", _files(3))
    index_workspace(root)
    with open_store(root, readonly=True) as store:
        store.search("logging usbhost", 20)
        store.search("logging usbhost", 20)
        assert set(store._bm25._term_memo) == {"logging", "usbhost"}
        (root / "src/new_usbhost.py").write_text("def usbhost_only():\n    return 0\n")
        index_workspace(root)
        seen = _queries(store)
        after = store.search("logging usbhost", 20)
        assert seen == ["whole"]  # a new generation: nothing remembered
        assert store._bm25._term_memo == {}
        assert after == _whole(store, "logging usbhost", 20)
        assert any(h.path == "src/new_usbhost.py" for h in after)


def test_a_commit_while_the_terms_are_read_sends_the_query_to_fts5_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(repo, readonly=True) as store:
        store.search("logging usbhost", 20)
        engine = store._bm25
        real = store.generation()
        # a commit after _common
        monkeypatch.setattr(engine.text, "generation", lambda: real + 1)
        monkeypatch.setattr(engine, "_common", lambda terms: [])  # keeps the old generation
        seen = _queries(store)
        got = store.search("logging usbhost", 20)
        assert seen[-1] == "whole"  # the reads were thrown away and one query made
        assert store._bm25._term_memo == {}
        monkeypatch.undo()
        assert got == _whole(store, "logging usbhost", 20)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=queries, k=st.integers(1, 60), dense=st.booleans())
def test_the_summed_rows_are_fts5_s_best_rows_float_for_float(
    repo: Path, *, words: list[str], k: int, dense: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the rows FTS5 keeps for a query (best rank, then rowid) and their floats, compared
    # before any rounding: the order of addition and the tie-break at the cut both show
    monkeypatch.setattr(search_mod, "_DENSE_SPAN", 10**6 if dense else -(10**6))
    terms = list(dict.fromkeys(query_terms(" ".join(words))))
    if not terms:
        return
    with open_store(repo, readonly=True) as store:
        store._bm25._common(terms)  # the generation the reads are checked against
        w = ", ".join(str(x) for x in search_mod.BM25_WEIGHTS)
        match = " OR ".join(f'"{t}"' for t in terms)
        want = [
            (int(i), -float(r))
            for i, r in store._conn.execute(
                f"SELECT rowid, bm25(chunks_fts, {w}) AS r FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY r, rowid LIMIT ?",
                (match, k),
            )
        ]
        assert store._bm25._best_by_term(terms, k) == want
