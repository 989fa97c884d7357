"""The parse starts before the listing is written: workers parse while this process writes.

A parse reads the workspace's files, never the index, so the workers can start on
the files waiting to be parsed as soon as the listing knows them; the listing's
writes (new mtimes, old rows of changed files deleted) run meanwhile. The rows are
the same: batches are written in the same order once parsed.
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.pool import ParsePool
from codelibrarian.index.store import SqliteStore
from tests.helpers import make_repo

from .test_second_checkout import _dump


def _mark(path: str) -> str:
    Path(path).write_text("parsed\n")
    return path


def _files(n: int) -> dict[str, str]:
    return {f"pkg/m{i:02d}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(n)}


def _wait_for(check: object, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_the_first_window_is_submitted_before_the_results_are_read(tmp_path: Path) -> None:
    tasks = [(str(tmp_path / f"t{i}"),) for i in range(6)]
    with ParsePool(2) as pool:
        results = pool.ordered_map(_mark, tasks, window=3)
        # nothing read yet: the first three run anyway
        assert _wait_for(lambda: all(Path(t[0]).exists() for t in tasks[:3]))
        assert not any(Path(t[0]).exists() for t in tasks[3:])  # the window holds
        assert list(results) == [t[0] for t in tasks]


def test_the_workers_start_before_the_listing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", _files(24))
    seen: list[int] = []
    real = SqliteStore.list_files

    def list_files(self: SqliteStore, *args: object, **kwargs: object) -> None:
        seen.append(len(multiprocessing.active_children()))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SqliteStore, "list_files", list_files)
    stats = index_workspace(root, workers=2, cache=None)
    assert stats.workers == 2 and stats.parsed == 24
    assert seen and seen[0] >= 1  # forked, with the first batches, before the writes
    cold = tmp_path / "cold"
    monkeypatch.setattr(SqliteStore, "list_files", real)
    make_repo(cold, _files(24))
    index_workspace(cold, workers=1, cache=None)
    assert _dump(root) == _dump(cold)


def test_a_failed_write_of_the_listing_stops_the_early_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", _files(24))

    def list_files(self: SqliteStore, *args: object, **kwargs: object) -> None:
        assert multiprocessing.active_children()  # the workers were running
        raise OSError("disk full")

    monkeypatch.setattr(SqliteStore, "list_files", list_files)
    with pytest.raises(OSError, match="disk full"):
        index_workspace(root, workers=2, cache=None)
    assert _wait_for(lambda: not multiprocessing.active_children(), 10.0)
