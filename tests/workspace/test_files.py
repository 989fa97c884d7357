"""scan_workspace on real git repositories and plain folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.config import WorkspaceConfig
from codelibrarian.errors import UsageError, WorkspaceError
from codelibrarian.workspace.files import (
    ScanResult,
    Skip,
    content_hash,
    read_text,
    scan_workspace,
)
from tests.helpers import git, make_repo, write_files

LATIN1 = "café\n".encode("latin-1")

# One tree exercising every rule; used both with and without git.
TREE: dict[str, str | bytes] = {
    ".gitignore": "*.log\n/build/\n",
    "app.py": "print('hi')\n",
    "debug.log": "ignored by root .gitignore\n",
    "build/out.py": "ignored folder\n",
    "src/pkg/mod.py": "x = 1\n",
    "src/pkg/.gitignore": "generated_*.py\n!keep.log\n",
    "src/pkg/generated_a.py": "ignored by nested .gitignore\n",
    "src/pkg/keep.log": "re-included by nested negation\n",
    "src/pkg/sub/deep.py": "y = 2\n",
    "src/other/generated_b.py": "nested rule does not reach sibling folders\n",
    "docs/private.md": "excluded by .librarianignore\n",
    "docs/readme.md": "# docs\n",
    ".librarianignore": "docs/private.md\nsecrets/\n",
    "secrets/key.txt": "excluded folder via .librarianignore\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "big.txt": "x" * 2048 + "\n",
    "latin.txt": LATIN1,
    ".librarian/index.db": "never listed\n",
}

EXPECTED_FILES = [
    ".gitignore",
    ".librarianignore",
    "app.py",
    "docs/readme.md",
    "latin.txt",
    "src/other/generated_b.py",
    "src/pkg/.gitignore",
    "src/pkg/keep.log",
    "src/pkg/mod.py",
    "src/pkg/sub/deep.py",
]
EXPECTED_SKIPS = [
    Skip("assets/logo.png", "binary"),
    Skip("big.txt", "too_large"),
    Skip("loop", "symlink_loop"),
    Skip("outside", "symlink_outside_repo"),
]
CONFIG = WorkspaceConfig(max_file_bytes=1024)


def _populate(root: Path, outside: Path) -> None:
    write_files(root, TREE)
    (root / "loop").symlink_to("loop")
    outside.write_text("secret outside the repository\n", encoding="utf-8")
    (root / "outside").symlink_to(outside)
    (root / "link_to_app.py").symlink_to("app.py")


def _paths(result: ScanResult) -> list[str]:
    return [f.path for f in result.files]


def test_git_repo_listing_and_every_skip_reason(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"app.py": "print('hi')\n"})
    _populate(root, tmp_path / "outside.txt")
    # a tracked file that .gitignore would ignore stays listed, as git shows it
    write_files(root, {"tracked.log": "tracked before the rule\n"})
    git(root, "add", "-f", "tracked.log")

    result = scan_workspace(root, CONFIG)

    assert result.is_git
    assert _paths(result) == sorted([*EXPECTED_FILES, "link_to_app.py", "tracked.log"])
    assert list(result.skipped) == EXPECTED_SKIPS
    assert list(result.notes) == [Skip("latin.txt", "decoded_with_replacement")]
    assert result.skip_counts() == {
        "binary": 1,
        "too_large": 1,
        "symlink_loop": 1,
        "symlink_outside_repo": 1,
    }
    by_path = {f.path: f for f in result.files}
    assert by_path["app.py"].size == len("print('hi')\n")
    assert by_path["app.py"].mtime_ns == (root / "app.py").stat().st_mtime_ns


def test_untracked_files_are_listed_but_ignored_untracked_are_not(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n", ".gitignore": "*.tmp\n"})
    write_files(root, {"new.py": "new\n", "scratch.tmp": "ignored\n", "n/e/w.py": "deep\n"})
    assert _paths(scan_workspace(root)) == [".gitignore", "a.py", "n/e/w.py", "new.py"]


def test_deleted_tracked_file_is_not_listed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n", "b.py": "b\n"})
    (root / "b.py").unlink()
    result = scan_workspace(root)
    assert _paths(result) == ["a.py"]
    assert result.skipped == ()


def test_plain_folder_walk_honours_nested_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    _populate(root, tmp_path / "outside.txt")
    # a stray .git file (as in a worktree) is never listed either
    write_files(root, {"plugins/.git": "gitdir: elsewhere\n", "plugins/lib.py": "v\n"})

    result = scan_workspace(root, CONFIG)

    assert not result.is_git
    assert _paths(result) == sorted([*EXPECTED_FILES, "link_to_app.py", "plugins/lib.py"])
    assert list(result.skipped) == EXPECTED_SKIPS
    assert list(result.notes) == [Skip("latin.txt", "decoded_with_replacement")]


def test_config_ignore_patterns_apply_in_both_modes(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"a.py": "a\n", "gen/x.py": "x\n", "b.md": "b\n"}
    cfg = WorkspaceConfig(ignore=("gen/", "*.md"))
    repo = make_repo(tmp_path / "r", files)
    plain = tmp_path / "p"
    write_files(plain, files)
    assert _paths(scan_workspace(repo, cfg)) == ["a.py"]
    assert _paths(scan_workspace(plain, cfg)) == ["a.py"]


def test_default_cap_is_one_mebibyte(tmp_path: Path) -> None:
    root = tmp_path / "p"
    exact = ("a" * 1023 + "\n") * 1024  # short lines: the size is what is tested
    write_files(root, {"exact.txt": exact, "over.txt": exact + "a"})
    result = scan_workspace(root)
    assert _paths(result) == ["exact.txt"]
    assert result.skipped == (Skip("over.txt", "too_large"),)


def test_nul_after_the_sniff_window_is_text(tmp_path: Path) -> None:
    root = tmp_path / "p"
    lines = b"a" * 63 + b"\n"  # short lines, so only the NUL decides
    write_files(
        root, {"late.txt": lines * 128 + b"\x00", "early.txt": lines * 127 + b"a" * 63 + b"\x00"}
    )
    result = scan_workspace(root)
    assert _paths(result) == ["late.txt"]
    assert result.skipped == (Skip("early.txt", "binary"),)


#: ``nobody``: root reads any file, so as root the scan runs as this user
NOBODY = 65534
_SCAN = (
    "import sys; from pathlib import Path;"
    "from codelibrarian.workspace.files import scan_workspace;"
    "r = scan_workspace(Path(sys.argv[1]));"
    "print([p.path for p in r.files]); print([(k.path, k.reason) for k in r.skipped])"
)


def test_unreadable_file_is_recorded() -> None:
    """A file without read permission is skipped as unreadable (as root, the scan runs
    as ``nobody``, for whom the permission holds)."""
    as_root = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="librarian-unreadable-"))
    try:
        base.chmod(0o755)
        root = base / "p"
        write_files(root, {"a.py": "a\n", "locked.py": "secret\n"})
        for path in [base, *base.rglob("*")]:
            if as_root:
                os.chown(path, NOBODY, NOBODY)
        (root / "locked.py").chmod(0)

        def drop() -> None:
            if as_root:
                os.setgid(NOBODY)
                os.setuid(NOBODY)

        done = subprocess.run(
            [sys.executable, "-c", _SCAN, str(root)],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=drop,
            check=False,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    files, skipped = done.stdout.splitlines()
    assert files == "['a.py']"
    assert skipped == "[('locked.py', 'unreadable')]"


def test_unreadable_file_is_recorded_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "p"
    write_files(root, {"a.py": "a\n", "locked.py": "secret\n"})
    real_open = open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded_open)
    result = scan_workspace(root)
    assert _paths(result) == ["a.py"]
    assert result.skipped == (Skip("locked.py", "unreadable"),)


def test_unreadable_folder_in_walk_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "p"
    write_files(root, {"a.py": "a\n", "locked/b.py": "b\n"})
    real_scandir = os.scandir

    def guarded(path: Any) -> Any:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr("codelibrarian.workspace.files.os.scandir", guarded)
    result = scan_workspace(root)
    assert _paths(result) == ["a.py"]
    assert result.skipped == (Skip("locked", "unreadable"),)


def test_nested_repository_is_not_a_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n"})
    make_repo(root / "inner", {"b.py": "b\n"})
    result = scan_workspace(root)
    assert _paths(result) == ["a.py"]
    assert result.skipped == (Skip("inner", "not_a_file"),)


def test_fifo_is_not_a_file(tmp_path: Path) -> None:
    # git ls-files never lists a FIFO; the walk does, and must not open it (it would block)
    root = tmp_path / "p"
    write_files(root, {"a.py": "a\n"})
    os.mkfifo(root / "pipe")
    result = scan_workspace(root)
    assert _paths(result) == ["a.py"]
    assert result.skipped == (Skip("pipe", "not_a_file"),)


def test_dangling_symlink_inside_repo_is_unreadable(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_files(root, {"a.py": "a\n"})
    (root / "gone").symlink_to("missing.py")
    assert scan_workspace(root).skipped == (Skip("gone", "unreadable"),)


def test_symlinked_folder_and_two_link_loop(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"src/a.py": "a\n"})
    (root / "alias").symlink_to("src", target_is_directory=True)
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    result = scan_workspace(root)
    assert _paths(result) == ["src/a.py"]
    assert list(result.skipped) == [
        Skip("alias", "not_a_file"),
        Skip("ping", "symlink_loop"),
        Skip("pong", "symlink_loop"),
    ]


def test_git_repo_without_commits_lists_untracked(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n"}, commit=False)
    result = scan_workspace(root)
    assert result.is_git
    assert _paths(result) == ["a.py"]


def test_odd_file_names_round_trip(tmp_path: Path) -> None:
    names = ["with space.py", 'quote"d.py', "tab\tname.py", "ünïcödé.py", "new\nline.py"]
    root = make_repo(tmp_path / "r", {n: f"# {i}\n" for i, n in enumerate(names)})
    assert _paths(scan_workspace(root)) == sorted(names)


def test_scan_is_deterministic(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"app.py": "print('hi')\n"})
    _populate(root, tmp_path / "outside.txt")
    assert scan_workspace(root, CONFIG) == scan_workspace(root, CONFIG)


def test_scan_of_a_subfolder_of_a_repo(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"top.py": "t\n", "pkg/a.py": "a\n", "pkg/b/c.py": "c\n"})
    result = scan_workspace(root / "pkg")
    assert _paths(result) == ["a.py", "b/c.py"]


def test_missing_root_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not a folder"):
        scan_workspace(tmp_path / "nope")


def test_read_text_reports_replacement(tmp_path: Path) -> None:
    write_files(tmp_path, {"latin.txt": LATIN1, "utf.txt": "café\n"})
    assert read_text(tmp_path, "utf.txt") == ("café\n", False)
    assert read_text(tmp_path, "latin.txt") == ("caf\ufffd\n", True)


@pytest.mark.parametrize("rel", ["../x", "/etc/passwd", "", "a/../../b"])
def test_read_text_refuses_paths_outside(tmp_path: Path, rel: str) -> None:
    with pytest.raises(UsageError):
        read_text(tmp_path, rel)


def test_read_text_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="cannot read"):
        read_text(tmp_path, "nope.py")


def test_content_hash_is_32_hex_blake2b() -> None:
    digest = content_hash(b"hello")
    assert len(digest) == 32
    assert digest == "46fb7408d4f285228f4af516ea25851b"
    assert content_hash(b"hello!") != digest


def test_without_git_on_path_falls_back_to_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n", ".gitignore": "*.tmp\n"})
    write_files(root, {"x.tmp": "ignored\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert shutil.which("git") is None
    result = scan_workspace(root)
    assert not result.is_git
    assert _paths(result) == [".gitignore", "a.py"]
