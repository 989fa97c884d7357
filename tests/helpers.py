"""Shared test helpers: real git repositories in temp dirs, the real CLI."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    if date:
        env["GIT_AUTHOR_DATE"] = date
        env["GIT_COMMITTER_DATE"] = date
    result = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def make_repo(
    root: Path,
    files: Mapping[str, str | bytes],
    *,
    commit: bool = True,
    message: str = "initial",
    date: str = "2026-01-01T00:00:00+00:00",
) -> Path:
    """A real git repository at ``root`` holding ``files`` (committed unless told not to)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write_files(root, files)
    if commit:
        commit_all(root, message, date=date)
    return root


def commit_all(repo: Path, message: str, *, date: str = "2026-01-02T00:00:00+00:00") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD").strip()


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``librarian ARGS`` in a process of its own and capture what it printed.

    The process is forked from the test worker's fork server (``tests/forkserver.py``):
    it runs the console script's function, ``codelibrarian.cli.app:main``, on these
    arguments, environment, working directory and stdin, without paying a fresh
    interpreter's imports. ``LIBRARIAN_TEST_REAL_CLI=1`` runs the ``librarian``
    executable instead (start-up itself is tested in ``tests/cli/test_startup_imports.py``
    and by round 0 of each kill test).
    """
    full_env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "NO_COLOR": "1"}
    full_env.pop("FORCE_COLOR", None)
    if env:
        full_env.update(env)
    if os.environ.get("LIBRARIAN_TEST_REAL_CLI") != "1":
        from tests.forkserver import shared

        where = Path.cwd() if cwd is None else cwd
        return shared().run(list(args), cwd=where, env=full_env, input=input, timeout=240)
    from tests.forkserver import LIBRARIAN

    return subprocess.run(
        [LIBRARIAN, *args],
        check=False,
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        input=input,
        timeout=240,
    )


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 :].split()[0] != b"Z"


def wait_gone(pids: set[int], seconds: float) -> set[int]:
    """The pids still running after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    left = {p for p in pids if running(p)}
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = {p for p in left if running(p)}
    return left


def sigkill_index_midway(
    repo: Path,
    committed_at_least: int,
    *,
    timeout: float = 240,
    count: str = "SELECT COUNT(*) FROM files WHERE stage = 2",
) -> int:
    """Start ``librarian index REPO``, SIGKILL it (and its pool workers) as soon as at
    least ``committed_at_least`` files are committed, and return how many were.
    ``count`` is the query that counts them (another table's rows: a later stage)."""
    import signal
    import sqlite3

    from codelibrarian.index.store import index_path

    db = index_path(repo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "codelibrarian", "index", str(repo), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "LIBRARIAN_NO_RESIDENT": "1"},
        start_new_session=True,
    )
    committed = 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
                    committed = conn.execute(count).fetchone()[0]
                    conn.close()
                except sqlite3.Error:
                    committed = 0
                if committed >= committed_at_least:
                    break
            time.sleep(0.01)
    finally:
        # the indexer and its pool workers, whatever happened above
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it was killed"
    return committed


def run_captured(call: Callable[[], int | None]) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of a CLI function run in this process (a
    ``SystemExit`` is its code; a None code fails: the call declined to run)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = call()
        except SystemExit as exc:
            code = int(exc.code or 0)
    assert code is not None
    return code, out.getvalue(), err.getvalue()


def run_typer(module: str, argv: list[str]) -> tuple[int, str, str]:
    """``run_captured`` of the typer app holding ``module``'s commands, on ``argv``."""
    from codelibrarian.cli.app import build_app, run

    return run_captured(lambda: run(build_app((module,)), argv) or 0)
