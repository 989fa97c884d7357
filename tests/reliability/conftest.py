"""Shared helpers of the reliability suite: a corpus, the real CLI, process checks."""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import shutil
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from tests.forkserver import LIBRARIAN, ForkedProcess, ForkServer
from tests.helpers import make_repo

#: a ``librarian`` process: started from its executable, or forked by a ForkServer
Proc = subprocess.Popen[str] | ForkedProcess

#: the next command after a kill must finish within this (issue #17)
NEXT_COMMAND_S = 10.0
N_MODULES = 60


def module_source(i: int) -> str:
    funcs = "".join(
        f"def step_{i}_{j}(value: int) -> int:\n"
        f'    """Step {j} of stage {i}: scale the value and hand it on."""\n'
        f"    scaled = value * {j + 1} + helper_{(i + 1) % N_MODULES}({j})\n"
        f"    return scaled\n\n\n"
        for j in range(20)
    )
    return (
        f"from pkg.mod_{(i + 1) % N_MODULES:03d} import helper_{(i + 1) % N_MODULES}\n\n\n"
        f"class Stage{i}:\n    def run(self) -> int:\n        return step_{i}_0(1)\n\n\n"
        f"def helper_{i}(x: int) -> int:\n    return x\n\n\n{funcs}"
    )


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed repository of ~60 Python modules: long enough to interrupt."""
    root = tmp_path_factory.mktemp("corpus") / "repo"
    files = {f"pkg/mod_{i:03d}.py": module_source(i) for i in range(N_MODULES)}
    files["pkg/__init__.py"] = ""
    files["README.md"] = "# Pipeline\n\nStages that scale values.\n"
    return make_repo(root, files)


def fresh_copy(corpus: Path, where: Path) -> Path:
    target = where / "repo"
    shutil.copytree(corpus, target, symlinks=True)
    return target


def librarian(
    repo: Path,
    *args: str,
    timeout: float = NEXT_COMMAND_S,
    env: dict[str, str] | None = None,
    via: ForkServer | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``librarian ARGS`` in ``repo``: the real executable, or forked by ``via``."""
    full = {**os.environ, "LIBRARIAN_NO_RESIDENT": "1", **(env or {})}
    if via is not None:
        return via.run(list(args), cwd=repo, env=full, timeout=timeout)
    return subprocess.run(
        [LIBRARIAN, *args],
        cwd=repo,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start(
    repo: Path, *args: str, env: dict[str, str] | None = None, via: ForkServer | None = None
) -> Proc:
    """A running ``librarian ARGS`` in ``repo`` (stdin and stderr piped, stdout dropped):
    the real executable, or forked by ``via``."""
    full = {**os.environ, "LIBRARIAN_NO_RESIDENT": "1", **(env or {})}
    if via is not None:
        return via.start(list(args), cwd=repo, env=full)
    return subprocess.Popen(
        [LIBRARIAN, *args],
        cwd=repo,
        env=full,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def stderr_lines(proc: Proc, keep: list[str] | None = None) -> queue.Queue[str | None]:
    """``proc``'s stderr lines as they come (None at the end), also appended to ``keep``."""
    lines: queue.Queue[str | None] = queue.Queue()
    stream = proc.stderr
    assert stream is not None

    def pump() -> None:
        with contextlib.suppress(ValueError, OSError):
            for line in stream:
                if keep is not None:
                    keep.append(line)
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children of its threads, recursively)."""
    out: set[int] = set()
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    kids = [int(c) for c in fh.read().split()]
            except OSError:
                continue
            for kid in kids:
                if kid not in out:
                    out.add(kid)
                    stack.append(kid)
    return out


def lock_is_free(repo: Path) -> bool:
    path = repo / ".librarian" / "index.db.lock"
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    return True


def assert_sound(repo: Path, *, complete: bool = True) -> None:
    """``PRAGMA integrity_check`` ok, no dangling rows, FTS in step, and (if asked) done."""
    db = repo / ".librarian" / "index.db"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        assert chunks == conn.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0]
        if complete:
            files, parsed = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(stage = 2), 0) FROM files"
            ).fetchone()
            assert files == parsed == N_MODULES + 2
    finally:
        conn.close()
