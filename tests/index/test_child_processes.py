"""Processes the CLI starts in a repository run our code, not the repository's.

The background indexer and the resident server work in the repository's folder.
Started as ``python -m codelibrarian`` there, a module of the repository named like
one we import (a copy of the stdlib, a package named like a dependency) would be
imported instead: they start with ``-P``, which keeps that folder off ``sys.path``.
"""

from __future__ import annotations

import os
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


def _wait_exit(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            return code
        time.sleep(0.05)
    return None


def test_the_background_indexer_ignores_modules_of_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", SHADOW)
    (repo / ".librarian").mkdir(exist_ok=True)
    pid = background.start_background(repo)
    assert pid is not None
    child = next(c for c in background._CHILDREN if c.pid == pid)
    try:
        code = _wait_exit(child, 120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
    log = (repo / ".librarian" / "index.log").read_text(errors="replace")
    assert code == 0, log[-2000:]
    assert "shadowed" not in log


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
