"""A kept session's workspace signature skips git's folder walk, and stays exact.

After each kind of change, the kept session (which may answer from its tree stamp
and ``git status --untracked-files=no``) must give the signature a fresh session
(a full ``git status --untracked-files=all``) gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from codelibrarian.service.treestamp import TreeStamp
from codelibrarian.service.workspace import WorkspaceSession
from tests.helpers import git, make_repo, write_files

FILES = {
    ".gitignore": "*.pyc\nbuild/\n",
    "app/main.py": "def main():\n    return 1\n",
    "app/util.py": "def util():\n    return 2\n",
    "docs/readme.md": "# Docs\n",
}
HOUR_AGO = 3600


def _age(root: Path) -> None:
    """Every file and folder of the tree (not .git) an hour old: no racy entries."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*files, *dirs]:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - HOUR_AGO * 10**9))
    st = os.lstat(root)
    os.utime(root, ns=(st.st_atime_ns, st.st_mtime_ns - HOUR_AGO * 10**9))


def _repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", FILES)
    write_files(root, {"new/draft.py": "x = 1\n", "cache/a.pyc": b"\0", "build/out.txt": "o"})
    _age(root)
    return root


def _edit_tracked(root: Path) -> None:
    (root / "app/util.py").write_text("def util():\n    return 3\n", encoding="utf-8")


def _edit_untracked(root: Path) -> None:
    (root / "new/draft.py").write_text("x = 22\n", encoding="utf-8")


def _new_file_beside_ignored_ones(root: Path) -> None:
    (root / "cache/fresh.py").write_text("y = 1\n", encoding="utf-8")


def _new_file_in_ignored_folder(root: Path) -> None:
    (root / "build/more.txt").write_text("m", encoding="utf-8")


def _ignore_rules_edited_in_place(root: Path) -> None:
    (root / ".gitignore").write_text("*.pyx\nbuild/\n", encoding="utf-8")  # same size


def _staged(root: Path) -> None:
    git(root, "add", "new/draft.py")


def _removed(root: Path) -> None:
    (root / "docs/readme.md").unlink()


def _committed(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "more")


CHANGES: list[Callable[[Path], None]] = [
    _edit_tracked,
    _edit_untracked,
    _new_file_beside_ignored_ones,
    _new_file_in_ignored_folder,
    _ignore_rules_edited_in_place,
    _staged,
    _removed,
    _committed,
]


@pytest.mark.parametrize("change", CHANGES, ids=lambda f: f.__name__.strip("_"))
def test_the_kept_signature_matches_a_full_status(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    root = _repo(tmp_path)
    git(root, "status", "--porcelain")  # git's index settled: it is not rewritten below
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()
    assert first is not None
    assert kept._status is not None  # stamped while git looked: the next call may be quick
    assert kept.workspace_signature() == first
    assert kept.workspace_signature() == first == WorkspaceSession(root).workspace_signature()
    change(root)
    other = WorkspaceSession(root)
    fresh = other.workspace_signature()
    assert kept.workspace_signature() == fresh
    # staging changes no listed path, only whether the tracked files are clean
    assert (kept._head, kept._tracked_clean) == (other._head, other._tracked_clean)
    assert fresh != first or change in (_new_file_in_ignored_folder, _staged)
    # and again, once the tree is still
    _age(root)
    assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()


def test_a_recent_change_is_not_trusted_and_a_worktree_is_not_stamped(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert TreeStamp.take(root) is not None
    (root / "new/other.py").write_text("z = 1\n", encoding="utf-8")  # new/ changed just now
    assert TreeStamp.take(root) is None
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "-q", str(linked))
    _age(linked)
    never = TreeStamp.take(linked)  # its .git is a file: never stamped
    assert never is not None and not never.usable and not never.unchanged()


def test_the_stamp_sees_folders_and_ignore_files_change(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    stamp = TreeStamp.take(root)
    assert stamp is not None and stamp.unchanged()
    (root / "app/util.py").write_text("changed in place\n", encoding="utf-8")
    assert stamp.unchanged()  # tracked edits are git's to see (--untracked-files=no)
    (root / "app/added.py").write_text("", encoding="utf-8")
    assert not stamp.unchanged()


def test_a_tree_too_large_to_stamp_is_not_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codelibrarian.service import treestamp

    root = _repo(tmp_path)
    monkeypatch.setattr(treestamp, "MAX_ENTRIES", 3)
    kept = WorkspaceSession(root)
    first = kept.workspace_signature()  # the first call tried, and gave up
    assert kept._status is None and not kept._stampable
    assert kept.workspace_signature() == first
    assert kept._status is None and kept._primed is None
    _edit_untracked(root)
    assert kept.workspace_signature() == WorkspaceSession(root).workspace_signature()
