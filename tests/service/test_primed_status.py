"""A kept session's first call leaves the second nothing to ask git, and stays exact.

The first call lists the untracked files with a full ``git status`` and, while git
looks, stamps and watches every folder; then it starts a quick status (tracked files
only) in the background. The second call takes that answer when nothing changed, and
gives a fresh session's signature after any change made between, or during, the calls.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codelibrarian.service import quietwatch, workspace
from codelibrarian.service.workspace import WorkspaceSession
from tests.helpers import git
from tests.service.test_quietwatch import WATCH_CHANGES, _GitCalls
from tests.service.test_treestamp import _age, _repo

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


def _settled(tmp_path: Path) -> Path:
    """A repository whose git index holds the files' current stat data (a status that
    refreshes it rewrites the index, which a first call rightly does not trust)."""
    root = _repo(tmp_path)
    git(root, "status", "--porcelain")
    return root


def test_the_second_call_runs_no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _settled(tmp_path)
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    assert kept._primed is not None and kept._status is not None
    calls = _GitCalls(monkeypatch)
    for _ in range(3):
        assert kept.workspace_signature() == first
    assert calls.n == 0
    assert first == WorkspaceSession(root).workspace_signature()
    kept.close()


@pytest.mark.parametrize("change", WATCH_CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_a_change_between_the_first_two_calls_is_seen(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    root = _settled(tmp_path)
    kept = WorkspaceSession(root)
    kept.workspace_signature()
    assert kept._primed is not None
    change(root)
    other = WorkspaceSession(root)
    assert kept.workspace_signature() == other.workspace_signature()
    assert (kept._head, kept._tracked_clean) == (other._head, other._tracked_clean)
    for _ in range(2):
        assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()


@pytest.mark.parametrize("change", WATCH_CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_a_change_while_git_and_the_walk_look_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]
) -> None:
    """The change lands after git started and the walk read its first folders, in
    whatever order git and the walk meet it: the next call still sees it."""
    root = _settled(tmp_path)
    real = quietwatch.QuietWatch.add
    seen: list[str] = []

    def add(self: quietwatch.QuietWatch, folder: str) -> bool:
        seen.append(folder)
        if len(seen) == 2:
            _retried(change, root)
        return real(self, folder)

    monkeypatch.setattr(quietwatch.QuietWatch, "add", add)
    kept = WorkspaceSession(root)
    kept.workspace_signature()
    assert len(seen) >= 2
    monkeypatch.setattr(quietwatch.QuietWatch, "add", real)
    for _ in range(3):
        assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()


def _retried(change: Callable[[Path], None], root: Path) -> None:
    """``change``, again while git's index is locked by the status that is looking."""
    for _ in range(200):
        try:
            change(root)
            return
        except subprocess.CalledProcessError:
            time.sleep(0.01)
    change(root)


def test_closing_stops_the_started_status(tmp_path: Path) -> None:
    root = _settled(tmp_path)
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    primed = kept._primed
    assert primed is not None
    kept.close()
    assert kept._primed is None and primed.proc.returncode is not None
    assert not primed.watch.alive()
    assert not (root / ".git" / "index.lock").exists()
    assert kept.workspace_signature() == first  # asks git again


def test_a_released_session_keeps_the_started_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _settled(tmp_path)
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    kept.close(keep_watch=True)
    calls = _GitCalls(monkeypatch)
    assert kept.workspace_signature() == first
    assert calls.n == 0
    kept.close()


def test_git_files_moving_while_git_looks_keep_no_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's own files changed during the full status (here: its index rewritten): the
    untracked files it listed may be from before, so nothing is kept for the next call."""
    root = _settled(tmp_path)
    real = workspace._finish

    def finish(proc: object) -> object:
        out = real(proc)  # type: ignore[arg-type]
        git(root, "add", "new/draft.py")
        return out

    monkeypatch.setattr(workspace, "_finish", finish)
    kept = WorkspaceSession(root)
    kept.workspace_signature()
    assert kept._status is None and kept._primed is None
    monkeypatch.setattr(workspace, "_finish", real)
    assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()


def test_an_index_run_keeps_the_started_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index run writes only ``.librarian/``: the watch still stands for the tree."""
    root = _repo(tmp_path)
    WorkspaceSession(root).state.ensure()  # the state folder is there (as after any call)
    _age(root)
    git(root, "status", "--porcelain")
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    kept.index()
    assert kept._primed is not None
    calls = _GitCalls(monkeypatch)
    assert kept.workspace_signature() == first
    assert calls.n == 0
    kept.close()


def test_a_one_call_process_prepares_nothing(tmp_path: Path) -> None:
    """A CLI command's session makes one call: no walk, no watch, no status started."""
    from codelibrarian.cli import _output

    root = _settled(tmp_path)
    one = WorkspaceSession(root)
    one.one_call()
    assert one.workspace_signature() == WorkspaceSession(root).workspace_signature()
    assert one._status is None and one._primed is None and one._quiet is None
    saved = _output._Kept.libraries
    try:
        _output._Kept.libraries = None
        lib = _output.open_librarian(root)
        assert lib._ws._stampable is False  # a fresh CLI process's facade
        lib.close()
    finally:
        _output._Kept.libraries = saved
