"""A cold index keeps what it holds bounded: nothing grows with the repository's names.

Two caches used to fill with every symbol name and every chunk text of the
repository while it was indexed (the query-time ``name_parts`` cache in the
writing process, the token-count cache in every parse worker): ~35 MiB in the
indexing process and ~20 MiB per worker on the stdlib. These tests index a
synthetic repository with thousands of distinct names in process and check that
those caches stay empty, that the identifier memo stays under its bound, and
that the Python memory left behind does not grow with the number of names.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from codelibrarian.index import tokenize
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.parse import _index_tokenizer, parse_batch
from codelibrarian.index.tokenize import name_parts
from codelibrarian.tokens import BpeTokenizer, get_tokenizer
from tests.helpers import make_repo, write_files


def _tree(files: int, names: int, tag: str) -> dict[str, str]:
    """``files`` modules of ``names`` functions each, every name distinct (camelCase parts)."""
    out: dict[str, str] = {}
    for i in range(files):
        body = "".join(
            f"def parse{tag}Http{i}Response{j}_value(count_{i}_{j}: int) -> int:\n"
            f"    localName{i}Part{j} = count_{i}_{j} + {j}\n"
            f"    return localName{i}Part{j}\n\n\n"
            for j in range(names)
        )
        out[f"pkg/mod_{i:03d}.py"] = f'"""Module {i}."""\n\n\n{body}'
    return out


def _index(root: Path) -> None:
    index_workspace(root, workers=1, cache=None)


def _retained_after(root: Path) -> tuple[int, int]:
    """Python memory still allocated after indexing ``root`` (in process): bytes, and
    blocks (allocations). Kept names are one block or more each; a process-wide table
    that happens to grow while indexing (the interned strings' dict, once enough strings
    were interned by whatever ran before in this process) is one large block."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        _index(root)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    diff = after.compare_to(before, "filename")
    return sum(d.size_diff for d in diff), sum(d.count_diff for d in diff)


def test_index_fills_no_query_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize, "_MEMO_MAX", 500)
    monkeypatch.setattr(tokenize, "_PARTS_MEMO", {})
    monkeypatch.setattr(tokenize, "_PLAIN_MEMO", set())
    root = make_repo(tmp_path / "repo", _tree(40, 25, "Fill"))  # 3,000 distinct identifiers
    name_parts.cache_clear()
    base = get_tokenizer("gpt-4o")
    assert isinstance(base, BpeTokenizer)
    cached_before = len(base._cache)
    _index(root)
    assert name_parts.cache_info().currsize == 0
    assert len(base._cache) == cached_before
    counter = _index_tokenizer()
    assert isinstance(counter, BpeTokenizer)
    assert len(counter._cache) == 0
    assert 0 < len(tokenize._PARTS_MEMO) <= 500
    assert 0 < len(tokenize._PLAIN_MEMO) <= 500


def test_uncached_counts_equal_cached_ones() -> None:
    base = get_tokenizer("gpt-4o")
    assert isinstance(base, BpeTokenizer)
    plain = base.uncached()
    for text in ("", "def f(x):\n    return x\n", "naïve ünïcode " * 40, "\ud800 lone"):
        assert plain.count(text) == base.count(text)
        for limit in (0, 3, 50, 10_000):
            assert plain.count_till_limit(text, limit) == base.count_till_limit(text, limit)
    assert len(plain._cache) == 0


def test_parse_results_do_not_depend_on_the_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "src"
    write_files(root, _tree(3, 30, "Memo"))
    items = [(f"pkg/mod_{i:03d}.py", 0) for i in range(3)]
    monkeypatch.setattr(tokenize, "_PARTS_MEMO", {})
    monkeypatch.setattr(tokenize, "_PLAIN_MEMO", set())
    monkeypatch.setattr(tokenize, "_MEMO_MAX", 0)
    without = parse_batch(str(root), items, 256)
    monkeypatch.setattr(tokenize, "_MEMO_MAX", 1_000_000)
    with_memo = parse_batch(str(root), items, 256)
    assert without == with_memo


@pytest.mark.slow
def test_memory_left_after_an_index_does_not_grow_with_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokenize, "_MEMO_MAX", 200)
    monkeypatch.setattr(tokenize, "_PARTS_MEMO", {})
    monkeypatch.setattr(tokenize, "_PLAIN_MEMO", set())
    small = make_repo(tmp_path / "small", _tree(10, 20, "Small"))
    # 8x the names: 1,400 more symbol names, 4,200 more identifiers
    large = make_repo(tmp_path / "large", _tree(80, 20, "Large"))
    _index(
        make_repo(tmp_path / "warm", _tree(2, 2, "Warm"))
    )  # imports and grammars load before measuring
    small_bytes, small_blocks = _retained_after(small)
    large_bytes, large_blocks = _retained_after(large)
    # with the query caches filled, 1,600 symbol names and 4,800 identifiers would
    # stay behind (several hundred KiB in thousands of blocks); bounded, the difference
    # is noise. Bytes alone can jump by one table's resize (seen: 1.9 MiB, one block)
    assert large_blocks - small_blocks < 1_000, (small_blocks, large_blocks)
    large_tables = 2 * 1024 * 1024
    assert large_bytes - small_bytes < 256 * 1024 + large_tables, (small_bytes, large_bytes)
