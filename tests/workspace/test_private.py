"""Private state files: created 0600 in 0700 folders whatever the umask; repaired."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from codelibrarian.workspace.private import (
    harden,
    loose_modes,
    private_append,
    private_dir,
    private_touch,
    private_write,
)
from codelibrarian.workspace.state import State


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def _open_umask() -> Iterator[None]:
    old = os.umask(0o000)  # the worst case: everything would be world-writable
    try:
        yield
    finally:
        os.umask(old)


def test_writers_create_private_files_and_folders(tmp_path: Path) -> None:
    private_write(tmp_path / "a" / "b" / "x.json", "{}")
    private_append(tmp_path / "a" / "log.jsonl", "1\n")
    private_append(tmp_path / "a" / "log.jsonl", "2\n", sync=True)
    private_touch(tmp_path / "a" / "index.db")
    assert (tmp_path / "a" / "log.jsonl").read_text() == "1\n2\n"
    assert _mode(tmp_path / "a") == _mode(tmp_path / "a" / "b") == 0o700
    for name in ("b/x.json", "log.jsonl", "index.db"):
        assert _mode(tmp_path / "a" / name) == 0o600, name
    assert private_dir(tmp_path / "a") == tmp_path / "a"


def test_harden_repairs_a_tree_and_append_tightens(tmp_path: Path) -> None:
    root = tmp_path / "s"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_text("x")
    (root / "log").write_text("x")
    for p in (root, root / "d"):
        p.chmod(0o755)
    (root / "d" / "f").chmod(0o644)
    (root / "log").chmod(0o666)
    assert len(loose_modes(root)) == 4
    private_append(root / "log", "y")  # tightens the file and its folder
    assert _mode(root / "log") == _mode(root) + 0o600 - 0o700 == 0o600
    assert harden(root) == 2
    assert loose_modes(root) == []


def test_state_folder_is_private_and_an_open_one_is_tightened(tmp_path: Path) -> None:
    state = State(tmp_path).ensure()
    assert _mode(state.dir) == 0o700
    assert _mode(state.schema_path) == 0o600
    state.dir.chmod(0o755)
    (state.dir / "old.json").write_text("{}")
    (state.dir / "old.json").chmod(0o644)
    State(tmp_path).ensure()
    assert loose_modes(state.dir) == []
