"""The per-user parse cache: shared by every checkout, bounded, never a point of failure."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

from codelibrarian.config import CacheConfig, Config
from codelibrarian.index.blobcache import BlobCache, cache_dir
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.store import index_path, open_store
from tests.helpers import commit_all, git, make_repo, write_files

from .samples import PYTHON


def _module(i: int) -> str:
    body = "".join(
        f"def step_{i}_{j}(value: int) -> int:\n    return value * {j} + {i}\n\n\n"
        for j in range(25)
    )
    return f'"""Module {i}."""\n\n\nclass Part{i}:\n    size = {i}\n\n\n{body}'


FILES = {f"lib/mod_{i:02d}.py": _module(i) for i in range(60)}


def _content(root: Path) -> tuple[object, ...]:
    with open_store(root, readonly=True) as store:
        return (
            store.symbols(),
            store.references(),
            store.imports(),
            [(c.path, c.start_line, c.end_line, c.text, c.tokens) for f in store.files()
             for c in store.chunks_for(f.path)],
            [(h.path, h.start_line, h.score) for h in store.search("step value module", 50)],
        )  # fmt: skip


def test_a_second_clone_parses_only_its_changed_blobs(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin", FILES)
    first = tmp_path / "first"
    git(tmp_path, "clone", "-q", str(origin), str(first))
    a = index_workspace(first)
    assert a.parsed == len(FILES) and a.cache_hits == 0 and not a.seeded
    # the project moves on: three files change in a new commit
    for i in (3, 14, 15):
        write_files(
            origin, {f"lib/mod_{i:02d}.py": _module(i) + "\n\ndef added() -> int:\n    return 1\n"}
        )
    commit_all(origin, "three edits")
    second = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(origin), str(second))
    b = index_workspace(second)
    assert b.seeded  # started from the first clone's index
    assert b.parsed == 3  # only the changed blobs
    # and the result is what a cold index of that commit holds
    cold = tmp_path / "cold"
    git(tmp_path, "clone", "-q", str(origin), str(cold))
    index_workspace(cold, cache=None)
    assert _content(second) == _content(cold)


def test_parses_are_shared_by_content_across_folders(tmp_path: Path) -> None:
    """Outside git (no seeding) every file of an identical copy comes from the cache."""
    one = tmp_path / "one"
    write_files(one, FILES)
    index_workspace(one)
    two = tmp_path / "two"
    shutil.copytree(one, two, ignore=shutil.ignore_patterns(".librarian"))
    stats = index_workspace(two)
    assert stats.cache_hits == len(FILES) and not stats.seeded
    cold = tmp_path / "cold"
    shutil.copytree(one, cold, ignore=shutil.ignore_patterns(".librarian"))
    index_workspace(cold, cache=None)
    assert _content(two) == _content(cold)


def _wordy(i: int) -> str:
    """A module whose parse compresses poorly (distinct words everywhere)."""
    rng = random.Random(i)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8)) for _ in range(900)
    ]
    return "".join(
        f"def {words[k]}_{i}({words[k + 1]}: int) -> int:\n"
        f'    """{" ".join(words[k + 2 : k + 12])}."""\n'
        f"    return {words[k + 1]} + {k}\n\n\n"
        for k in range(0, 880, 12)
    )


def test_the_cache_stays_under_its_cap(tmp_path: Path) -> None:
    cfg = Config(cache=CacheConfig(max_mb=1))
    big = {f"lib/mod_{i:03d}.py": _wordy(i) for i in range(120)}  # ~2 MB of parses
    repo = make_repo(tmp_path / "r", big)
    stats = index_workspace(repo, cfg)
    assert stats.parsed == len(big)
    cache = BlobCache.open(cfg.cache)
    assert cache is not None
    try:
        assert cache.evicted == 0  # a fresh handle; what the run did is on disk:
        assert cache.size_bytes() <= 1024 * 1024
        assert 0 < int(str(cache.stats()["entries"])) < len(big)
    finally:
        cache.close()
    assert (cache_dir() / "parse-v1.sqlite").stat().st_size <= 1024 * 1024 + 64 * 1024


def test_a_zero_cap_turns_the_cache_off(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", PYTHON)
    stats = index_workspace(repo, Config(cache=CacheConfig(max_mb=0)))
    assert stats.cache_hits == 0
    assert not (cache_dir() / "parse-v1.sqlite").exists()


def test_a_damaged_cache_never_fails_the_index(tmp_path: Path) -> None:
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "parse-v1.sqlite").write_bytes(b"not a database at all" * 100)
    repo = make_repo(tmp_path / "r", PYTHON)
    stats = index_workspace(repo)
    assert stats.files == len(PYTHON)
    with sqlite3.connect(index_path(repo)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # the damaged cache file was replaced: a second folder with the same files hits it
    other = tmp_path / "other"
    write_files(other, PYTHON)
    assert index_workspace(other).cache_hits == len(PYTHON)
