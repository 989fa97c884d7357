"""A kept session stops asking git while nothing in the tree moved, and stays exact.

A kept session's first call stamps and watches the tree while git lists it, and
starts a quick ``git status`` once the watch is armed; while the watch's queue is
empty the next calls answer from it with no git call at all. After each kind of
change (files, folders, ignore rules, the git index, a branch or HEAD moving with no
file touched) the kept session must give the signature a fresh session gives.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codelibrarian.service import quietwatch, workspace
from codelibrarian.service.quietwatch import QuietWatch
from codelibrarian.service.workspace import WorkspaceSession
from tests.helpers import git
from tests.service.test_treestamp import CHANGES, _age, _repo

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


class _GitCalls:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        real = workspace._start_status

        def counted(*args: object, **kwargs: object) -> object:
            self.n += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(workspace, "_start_status", counted)


def _quiet_session(root: Path) -> WorkspaceSession:
    """A kept session whose watch is armed and quiet. The first call stamps and watches
    the tree and starts a quick status, the second takes its answer; git may rewrite
    its index while it looks (it refreshes the files' cached stat data), which spoils
    that watch and arms the next."""
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    for _ in range(4):
        assert kept.workspace_signature() == first
        if kept._quiet is not None and kept._quiet[0].quiet():
            return kept
    raise AssertionError("the watch never settled")


def test_a_still_tree_costs_no_git_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    kept = _quiet_session(root)
    calls = _GitCalls(monkeypatch)
    signature = kept.workspace_signature()
    head, clean = kept._head, kept._tracked_clean
    for _ in range(5):
        assert kept.workspace_signature() == signature
    assert calls.n == 0
    assert (kept._head, kept._tracked_clean) == (head, clean)
    assert signature == WorkspaceSession(root).workspace_signature()


def _new_folder_then_file(root: Path) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "mod.py").write_text("v = 1\n", encoding="utf-8")


def _empty_commit(root: Path) -> None:
    git(root, "commit", "-q", "--allow-empty", "-m", "no file changed")


def _detached(root: Path) -> None:
    git(root, "checkout", "-q", "--detach", "HEAD")  # HEAD's file changes, not its commit


def _commit_over_packed_refs(root: Path) -> None:
    git(root, "pack-refs", "--all")
    _empty_commit(root)


def _touched(root: Path) -> None:
    path = root / "app" / "main.py"
    path.touch()  # same content, a new mtime: the signature lists it


WATCH_CHANGES: list[Callable[[Path], None]] = [
    *CHANGES,
    _new_folder_then_file,
    _empty_commit,
    _detached,
    _commit_over_packed_refs,
    _touched,
]


@pytest.mark.parametrize("change", WATCH_CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_every_change_spoils_the_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]
) -> None:
    root = _repo(tmp_path)
    kept = _quiet_session(root)
    before = kept.workspace_signature()
    change(root)
    other = WorkspaceSession(root)
    fresh = other.workspace_signature()
    calls = _GitCalls(monkeypatch)
    assert kept.workspace_signature() == fresh
    assert calls.n >= 1  # the watch was spoiled: the kept session asked git
    assert (kept._head, kept._tracked_clean) == (other._head, other._tracked_clean)
    # the signature lists HEAD and the paths git lists: these leave both as they were
    same = ("_new_file_in_ignored_folder", "_staged", "_detached", "_touched")
    if change.__name__ not in same:
        assert fresh != before
    # once the tree is still again, the watch is re-armed and exact
    _age(root)
    for _ in range(3):
        assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()


def test_without_inotify_git_is_asked_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    monkeypatch.setattr(quietwatch, "_lib", lambda: None)
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    calls = _GitCalls(monkeypatch)
    for _ in range(4):
        assert kept.workspace_signature() == first
    assert calls.n == 4 and kept._quiet is None and not kept._watchable
    (root / "app/util.py").write_text("def util():\n    return 9\n", encoding="utf-8")
    assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()


def test_closing_the_session_releases_the_watch(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    kept = _quiet_session(root)
    assert kept._quiet is not None
    watch = kept._quiet[0]
    assert watch.quiet()
    kept.close()
    assert kept._quiet is None and not watch.quiet()


def test_a_refused_watch_arms_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert QuietWatch.arm(root, [str(tmp_path / "no-such-folder")]) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    assert QuietWatch.arm(plain, [str(plain)]) is None  # not a git work tree


def test_a_released_session_keeps_its_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resident server releases its index connection after every call: the watch
    stays armed across that (the next call runs no git), and ``close`` ends it."""
    root = _repo(tmp_path)
    kept = _quiet_session(root)
    signature = kept.workspace_signature()
    calls = _GitCalls(monkeypatch)
    kept.close(keep_watch=True)
    assert kept.workspace_signature() == signature
    assert calls.n == 0
    kept.close()
    assert kept._quiet is None
    assert kept.workspace_signature() == signature
    assert calls.n == 1


def test_the_cli_releases_only_a_kept_librarian(tmp_path: Path) -> None:
    from codelibrarian.cli import _output

    class _Lib:
        def __init__(self) -> None:
            self.root = tmp_path
            self.done = ""

        def release(self) -> None:
            self.done = "released"

        def close(self) -> None:
            self.done = "closed"

    kept, other = _Lib(), _Lib()
    saved = _output._Kept.libraries
    try:
        _output._Kept.libraries = None
        _output.release_librarian(other)
        _output._Kept.libraries = {tmp_path: kept}
        _output.release_librarian(kept)
        assert (kept.done, other.done) == ("released", "closed")
    finally:
        _output._Kept.libraries = saved
