"""The .librarian/ state folder and the workspace secret."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codelibrarian.errors import WorkspaceError
from codelibrarian.workspace.files import scan_workspace
from codelibrarian.workspace.state import SCHEMA_VERSION, SECRET_BYTES, State
from tests.helpers import git, make_repo


def test_ensure_creates_gitignore_and_schema(tmp_path: Path) -> None:
    state = State(tmp_path).ensure()
    assert state.dir == tmp_path / ".librarian"
    assert (state.dir / ".gitignore").read_text(encoding="utf-8") == "*\n"
    assert state.schema_version() == SCHEMA_VERSION
    assert state.ensure() is state  # idempotent
    assert sorted(p.name for p in state.dir.iterdir()) == [".gitignore", "schema_version"]


def test_paths_do_not_create_anything(tmp_path: Path) -> None:
    state = State(tmp_path)
    assert state.index_path == tmp_path / ".librarian" / "index.db"
    assert state.decisions_dir.name == "decisions"
    assert state.runs_dir.name == "runs"
    assert state.cache_dir.name == "cache"
    assert state.sessions_dir.name == "sessions"
    assert state.violations_path.name == "violations.jsonl"
    assert state.events_path.name == "events.jsonl"
    assert not state.exists()
    assert state.schema_version() is None


def test_secret_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    old_umask = os.umask(0)  # even a permissive umask must not widen the mode
    try:
        first = State(tmp_path).secret()
    finally:
        os.umask(old_umask)
    path = tmp_path / ".librarian" / "secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) == SECRET_BYTES
    assert State(tmp_path).secret() == first
    assert path.read_bytes() == first
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".secret")] == []


def test_secrets_differ_between_workspaces(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert State(tmp_path / "a").secret() != State(tmp_path / "b").secret()


def test_concurrent_creators_agree(tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from codelibrarian.workspace.state import State;"
        "sys.stdout.write(State(Path(sys.argv[1])).secret().hex())"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    outs = {p.communicate(timeout=60)[0] for p in procs}
    assert len(outs) == 1
    assert bytes.fromhex(outs.pop()) == (tmp_path / ".librarian" / "secret").read_bytes()


def test_truncated_secret_is_an_error_with_a_fix(tmp_path: Path) -> None:
    state = State(tmp_path)
    state.secret()
    state.secret_path.write_bytes(b"short")
    with pytest.raises(WorkspaceError, match="expected 32") as info:
        state.secret()
    assert "Delete the file" in str(info.value)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    state = State(tmp_path).ensure()
    state.schema_path.write_text(f"{SCHEMA_VERSION + 1}\n", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="newer codelibrarian"):
        state.ensure()
    state.schema_path.write_text("garbage", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="not a schema version"):
        state.schema_version()


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        State(tmp_path / "nope").ensure()


def test_state_folder_is_invisible_to_git_and_scan(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"})
    State(repo).secret()
    assert git(repo, "status", "--porcelain") == ""
    assert [f.path for f in scan_workspace(repo).files] == ["a.py"]
