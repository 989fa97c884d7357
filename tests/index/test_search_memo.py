"""``SqliteStore.search`` from per-term scores remembered per generation: the same hits,
scores and order as one FTS5 query of the whole task, and a common term scored once."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codelibrarian.index import store as store_mod
from codelibrarian.index.indexer import index_workspace
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


queries = st.lists(st.sampled_from([*VOCAB, "nothing_here", "zz9"]), min_size=1, max_size=7)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=queries,
    limit=st.sampled_from([1, 3, 20, 200]),
    dense=st.booleans(),
    read_rows=st.sampled_from([0, 30, 10**6]),
)
def test_search_equals_one_fts5_query_of_the_whole_task(
    repo: Path,
    *,
    words: list[str],
    limit: int,
    dense: bool,
    read_rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # both ways of summing (a dense array, or the distinct ids), and a memo so small
    # that terms are evicted and read again
    monkeypatch.setattr(store_mod, "_DENSE_SPAN", 10**6 if dense else -(10**6))
    monkeypatch.setattr(store_mod, "_TERM_MEMO_ROWS", 40)
    monkeypatch.setattr(store_mod, "_TERM_READ_ROWS", read_rows)
    query = " ".join(words)
    with open_store(repo, readonly=True) as store:
        first = store.search(query, limit)  # whole or from read terms
        again = store.search(query, limit)  # from read terms
        assert first == again == store._search_fts(query_terms(query), limit)


def _fts_queries(store: SqliteStore) -> list[str]:
    seen: list[str] = []
    store._conn.set_trace_callback(lambda sql: seen.append(sql) if "bm25(" in sql else None)
    return seen


def test_a_term_is_scored_once_per_generation_and_again_after_a_write(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", _files(3))
    index_workspace(root)
    with open_store(root, readonly=True) as store:
        seen = _fts_queries(store)
        before = store.search("c path stm32c0", 20)
        assert before and len(seen) == len(query_terms("c path stm32c0"))
        seen.clear()
        assert store.search("path c", 20) == store._search_fts(["c", "path"], 20)
        assert len(seen) == 1  # only the reference query: "c" and "path" were remembered
        # a write (a new index generation) makes every term be read again
        (root / "src/new_stm32c0.py").write_text("def stm32c0_only():\n    return 0\n")
        index_workspace(root)
        seen.clear()
        after = store.search("c path stm32c0", 20)
        assert len(seen) == len(query_terms("c path stm32c0"))
        assert after == store._search_fts(query_terms("c path stm32c0"), 20)
        assert any(h.path == "src/new_stm32c0.py" for h in store.search("stm32c0_only", 5))


def test_a_commit_while_the_terms_are_read_sends_the_query_to_fts5_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(repo, readonly=True) as store:
        ticks = iter(range(100))
        monkeypatch.setattr(store, "generation", lambda: next(ticks))  # moves on every read
        whole: list[tuple[str, ...]] = []
        reference = store._search_fts
        monkeypatch.setattr(
            store,
            "_search_fts",
            lambda terms, limit: whole.append(tuple(terms)) or reference(terms, limit),
        )
        got = store.search("c path", 20)
        assert whole == [("c", "path")] and got == reference(["c", "path"], 20)
        assert store._memo == {}  # nothing read across the commit is kept


def test_common_terms_seen_the_first_time_leave_the_query_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_mod, "_TERM_READ_ROWS", 5)
    terms = query_terms("c path stm32c0")
    with open_store(repo, readonly=True) as store:
        seen = _fts_queries(store)
        first = store.search("c path stm32c0", 20)
        assert len(seen) == 1 and " OR " in seen[0]  # one whole query, no term read
        assert store._memo == {}
        seen.clear()
        assert store.search("c path stm32c0", 20) == first  # seen again: each term read
        assert len(seen) == len(terms) and store._memo.keys() == set(terms)
        seen.clear()
        assert store.search("stm32c0 path c", 20) == first
        assert seen == []
