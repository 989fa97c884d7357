"""Blob ids from git's index: equal to hashing the bytes, and never used where they may differ."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codelibrarian.index import indexer
from codelibrarian.index.gitblobs import clean_blob_ids, git_entries
from codelibrarian.index.indexer import index_workspace
from codelibrarian.workspace.files import blob_id
from tests.helpers import git, make_repo

from .test_second_checkout import _dump


def _files(n: int = 12) -> dict[str, str]:
    out = {f"pkg/mod_{i:02d}.py": f"def f_{i}(x):\n    return x + {i}\n" for i in range(n)}
    out["tool.sh"] = "#!/bin/sh\necho hi\n"
    out["notes/ünïcode name.md"] = "# Notes\n\ntext\n"
    return out


def _hashed(root: Path, paths: list[str]) -> dict[str, str]:
    return {p: blob_id((root / p).read_bytes()) for p in paths}


def _settled(root: Path) -> Path:
    """Every tracked file's record older than git's index file, as when a clone is a few
    moments old (a record taken in the instant the index was written is racily clean)."""
    for path in git(root, "ls-files", "-z").split("\0"):
        if path:
            os.utime(root / path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    git(root, "update-index", "-q", "--really-refresh")
    return root


def test_ids_equal_hashed_ids(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", _files())
    (root / "tool.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "mode")
    ids = clean_blob_ids(_settled(root))
    assert sorted(ids) == sorted(_files())
    assert ids == _hashed(root, sorted(ids))


def test_changed_untracked_and_assumed_files_are_left_out(tmp_path: Path) -> None:
    root = _settled(make_repo(tmp_path / "r", _files()))
    (root / "pkg/mod_00.py").write_text("def f_0(x):\n    return -x\n")
    (root / "pkg/new.py").write_text("x = 1\n")
    git(root, "update-index", "--assume-unchanged", "pkg/mod_01.py")
    (root / "pkg/mod_01.py").write_text("changed behind git's back\n")
    ids = clean_blob_ids(root)
    assert "pkg/mod_00.py" not in ids
    assert "pkg/new.py" not in ids
    assert "pkg/mod_01.py" not in ids
    assert ids == _hashed(root, sorted(ids))
    assert len(ids) == len(_files()) - 2


def test_a_symlink_is_left_out(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", _files())
    os.symlink("pkg/mod_02.py", root / "link.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "link")
    assert "link.py" not in clean_blob_ids(root)


def test_paths_with_converting_attributes_are_left_out(tmp_path: Path) -> None:
    files = _files()
    files[".gitattributes"] = "*.md text eol=crlf\npkg/mod_03.py filter=upper\n"
    root = _settled(make_repo(tmp_path / "r", files))
    ids = clean_blob_ids(root)
    assert "notes/ünïcode name.md" not in ids
    assert "pkg/mod_03.py" not in ids
    assert "pkg/mod_04.py" in ids
    assert ids == _hashed(root, sorted(ids))


def test_eol_conversion_on_checkout_falls_back_to_hashing(tmp_path: Path) -> None:
    files = _files()
    files[".gitattributes"] = "*.py text eol=crlf\n"
    origin = make_repo(tmp_path / "origin", files)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    raw = (clone / "pkg/mod_05.py").read_bytes()
    assert b"\r\n" in raw  # checkout converted: git's id is not the bytes' id
    ids = clean_blob_ids(clone)
    assert not any(p.endswith(".py") for p in ids)
    assert ids == _hashed(clone, sorted(ids))


def test_autocrlf_gives_no_ids(tmp_path: Path) -> None:
    root = _settled(make_repo(tmp_path / "r", _files()))
    git(root, "config", "core.autocrlf", "true")
    assert clean_blob_ids(root) == {}
    git(root, "config", "core.autocrlf", "input")
    assert clean_blob_ids(root) == {}
    git(root, "config", "core.autocrlf", "false")
    assert clean_blob_ids(root)


def test_outside_git_there_are_no_ids(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert clean_blob_ids(tmp_path) == {}


def test_a_folder_inside_the_work_tree_gets_relative_paths(tmp_path: Path) -> None:
    root = _settled(make_repo(tmp_path / "r", _files()))
    (root / "pkg/mod_06.py").write_text("edited = True\n")
    ids = clean_blob_ids(root / "pkg")
    assert "mod_07.py" in ids
    assert "mod_06.py" not in ids
    assert ids == _hashed(root / "pkg", sorted(ids))


@pytest.mark.parametrize("attributes", ["", "*.py text eol=crlf\n"])
def test_a_clone_indexed_from_its_sibling_equals_a_cold_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attributes: str
) -> None:
    """With git's ids (and with the fallback), the seeded clone's rows are a cold index's."""
    monkeypatch.setenv("LIBRARIAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(indexer, "GIT_IDS_MIN_FILES", 1)
    files = _files(30)
    if attributes:
        files[".gitattributes"] = attributes
    origin = make_repo(tmp_path / "origin", files)
    (origin / "pkg/mod_08.py").write_text("def f_8(x):\n    return x * 8\n")
    git(origin, "commit", "-q", "-am", "edit")
    first, second = tmp_path / "first", tmp_path / "second"
    for clone in (first, second):
        git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(second, "checkout", "-q", "HEAD~1")
    index_workspace(first)
    calls: list[Path] = []
    real = indexer.git_entries
    monkeypatch.setattr(indexer, "git_entries", lambda r: calls.append(r) or real(r))
    stats = index_workspace(second)
    assert stats.seeded
    assert calls  # the listing asked git
    cold = tmp_path / "cold"
    shutil.copytree(second, cold, ignore=shutil.ignore_patterns(".librarian"))
    index_workspace(cold, cache=None)
    assert _dump(second) == _dump(cold)


def test_a_racily_clean_record_is_not_trusted(tmp_path: Path) -> None:
    """A record not older than git's index file may hide a later write of the same size in
    the same instant: that file gets no id even though its stat data match the record."""
    root = _settled(make_repo(tmp_path / "r", _files()))
    assert "pkg/mod_09.py" in git_entries(root)
    later = 1_700_000_010_000_000_000
    os.utime(root / "pkg/mod_09.py", ns=(later, later))
    git(root, "update-index", "-q", "--really-refresh")  # recorded at ``later``
    os.utime(root / ".git" / "index", ns=(later, later))  # the index written in that instant
    entries = git_entries(root)
    assert "pkg/mod_09.py" not in entries
    assert "pkg/mod_10.py" in entries  # older records are trusted
    ids = clean_blob_ids(root)
    assert ids == _hashed(root, sorted(ids))


def test_a_file_rewritten_with_its_old_size_and_mtime_is_caught_by_its_ctime(
    tmp_path: Path,
) -> None:
    """Git's own check without ``git diff-files``: the ctime and inode are compared too."""
    root = _settled(make_repo(tmp_path / "r", _files()))
    path = root / "pkg/mod_11.py"
    before = path.stat()
    path.write_text("def f_11(x):\n    return x * 11\n")  # same size, new bytes
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert "pkg/mod_11.py" not in clean_blob_ids(root)


def test_a_fresh_clone_gets_ids_for_records_older_than_its_index(tmp_path: Path) -> None:
    """A clone writes its files and its index within moments: records taken before the
    index file was written are trusted, to the nanosecond, without git re-reading them."""
    origin = make_repo(tmp_path / "origin", _files(40))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    index_mtime = (clone / ".git" / "index").stat().st_mtime_ns
    older = [p for p in sorted(_files(40)) if (clone / p).stat().st_mtime_ns < index_mtime]
    ids = clean_blob_ids(clone)
    assert sorted(ids) == older
    assert ids == _hashed(clone, older)


def test_output_that_does_not_read_as_expected_gives_no_entries() -> None:
    from codelibrarian.index.gitblobs import _parse

    good = (
        b"H 100644 " + b"a" * 40 + b" 0\tx.py\0  ctime: 5:1\n  mtime: 5:2\n"
        b"  dev: 1\tino: 7\n  uid: 0\tgid: 0\n  size: 3\tflags: 0\n"
    )
    entry = _parse(good, written=10_000_000_000)["x.py"]
    assert (entry.mtime_ns, entry.ctime_ns, entry.ino, entry.size) == (
        5_000_000_002,
        5_000_000_001,
        7,
        3,
    )
    assert _parse(good, written=5_000_000_002) == {}  # racily clean
    assert _parse(good.replace(b"  size: 3\tflags: 0\n", b""), written=10**10) == {}
    assert _parse(good.replace(b"mtime: 5:2", b"mtime: soon"), written=10**10) == {}
