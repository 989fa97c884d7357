"""Processes the CLI starts in a repository run our code, not the repository's.

The background indexer and the resident server work in the repository's folder.
Started as ``python -m codelibrarian`` there, a module of the repository named like
one we import (a copy of the stdlib, a package named like a dependency) would be
imported instead: they start with ``-P``, which keeps that folder off ``sys.path``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from codelibrarian.cli.resident import request
from codelibrarian.index import background
from tests.helpers import make_repo

#: imported by every codelibrarian process (the resident protocol and the index meta)
SHADOW = {
    "json.py": "raise RuntimeError('the repository shadowed the json module')\n",
    "app/billing.py": "def invoice_total(lines):\n    return sum(lines)\n",
}


def _wait_pid(pid: int, seconds: float) -> int | None:
    """The exit code of our child ``pid`` once it ends, None after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    return None


def test_the_background_indexer_ignores_modules_of_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", SHADOW)
    (repo / ".librarian").mkdir(exist_ok=True)
    pid = background.start_background(repo)
    assert pid is not None
    assert pid in background._CHILDREN
    try:
        code = _wait_pid(pid, 120)
    finally:
        if code is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    log = (repo / ".librarian" / "index.log").read_text(errors="replace")
    assert code == 0, log[-2000:]
    assert "shadowed" not in log


def test_a_process_that_started_a_background_indexer_exits_without_a_warning(
    tmp_path: Path,
) -> None:
    """The child is meant to outlive its starter: no ``Popen`` left to warn at exit."""
    repo = make_repo(tmp_path / "r", {"app/billing.py": "def total(lines):\n    return 1\n"})
    (repo / ".librarian").mkdir(exist_ok=True)
    code = (
        "import sys; from pathlib import Path; from codelibrarian.index import background;"
        "pid = background.start_background(Path(sys.argv[1])); print(pid)"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code, str(repo)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ResourceWarning" not in done.stderr and "still running" not in done.stderr
    pid = int(done.stdout)
    deadline = time.monotonic() + 120  # the orphan finishes on its own (init reaps it)
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the background indexer did not finish")


def test_the_resident_server_ignores_modules_of_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", SHADOW)
    env = {k: v for k, v in os.environ.items() if k != "LIBRARIAN_NO_RESIDENT"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        # the client from outside the repository: only the server works in it
        return subprocess.run(
            [sys.executable, "-m", "codelibrarian", *args, "--repo", str(repo)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    try:
        started = cli("serve", "--daemon")
        assert started.returncode == 0, started.stderr[-2000:]
        answer = request(repo, {"op": "ping"}, timeout=10)
        assert int(answer["pid"]) > 0
        composed = cli("compose", "total of the invoice lines", "--budget", "2000")
        assert composed.returncode == 0, composed.stderr[-2000:]
        assert int(request(repo, {"op": "ping"}, timeout=10)["served"]) >= 1
    finally:
        cli("serve", "--stop")
