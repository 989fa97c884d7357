"""Resident mode: CLI calls answered by a warm server, and the fallback without one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codelibrarian.cli.resident import auto_start, request, socket_path
from tests.helpers import make_repo

FILES = {
    "app/billing.py": (
        "def invoice_total(lines):\n"
        '    """Sum the invoice lines."""\n'
        "    return sum(line.amount for line in lines)\n"
    ),
    "app/shipping.py": "def ship(order):\n    return order.address\n",
    "README.md": "# Shop\n\nBilling and shipping.\n",
}
AS_OF = "1767225600"


def librarian(
    repo: Path, *args: str, resident: bool = True, timeout: float = 120, auto: bool = False
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("LIBRARIAN_NO_RESIDENT", None)
    if not resident:
        env["LIBRARIAN_NO_RESIDENT"] = "1"
    if auto:
        env["LIBRARIAN_RESIDENT"] = "auto"
        env["LIBRARIAN_RESIDENT_IDLE"] = "120"  # ends by itself should the test's stop fail
    return subprocess.run(
        [sys.executable, "-m", "codelibrarian", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    root = make_repo(tmp_path / "shop", FILES)
    yield root
    librarian(root, "serve", "--stop", timeout=30)


def _served(root: Path) -> int:
    return int(request(root, {"op": "ping"}, timeout=5)["served"])


@pytest.mark.slow
def test_calls_go_to_the_resident_server_and_answer_the_same(repo: Path) -> None:
    alone = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF, resident=False)
    assert alone.returncode == 0, alone.stderr
    started = librarian(repo, "serve", "--daemon", "--json")
    assert started.returncode == 0, started.stderr
    assert socket_path(repo).exists()
    assert socket_path(repo).stat().st_mode & 0o077 == 0  # only its owner can connect
    before = _served(repo)
    warm = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF)
    assert warm.returncode == 0, warm.stderr
    assert _served(repo) == before + 1
    assert warm.stdout == alone.stdout
    # errors come back with their exit code and message
    bad = librarian(repo, "compose", "x", "--budget", "0")
    assert bad.returncode == 2 and "budget" in bad.stderr
    again = librarian(repo, "serve", "--daemon")
    assert "already running" in again.stdout
    stopped = librarian(repo, "serve", "--stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    deadline = time.monotonic() + 10
    while socket_path(repo).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not socket_path(repo).exists()


def test_a_stale_socket_falls_back_to_running_in_process(repo: Path) -> None:
    path = socket_path(repo)
    path.parent.mkdir(exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens
    result = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF)
    assert result.returncode == 0, result.stderr
    assert "app/billing.py" in result.stdout


@pytest.mark.slow
def test_a_killed_resident_server_leaves_calls_working(repo: Path) -> None:
    started = librarian(repo, "serve", "--daemon", "--json")
    assert started.returncode == 0, started.stderr
    pid = int(request(repo, {"op": "ping"}, timeout=5)["pid"])
    os.kill(pid, signal.SIGKILL)
    t0 = time.monotonic()
    result = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - t0 < 10
    assert "app/billing.py" in result.stdout


@pytest.mark.slow
def test_auto_mode_starts_a_server_for_the_next_calls(repo: Path) -> None:
    # off by default: a call without the variable leaves nothing running
    plain = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF)
    assert plain.returncode == 0, plain.stderr
    assert not socket_path(repo).exists()
    first = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF, auto=True)
    assert first.returncode == 0, first.stderr  # answered here while the server starts
    assert "invoice_total" in first.stdout
    deadline = time.monotonic() + 90  # a loaded machine: start-up takes seconds
    while time.monotonic() < deadline:
        try:
            before = _served(repo)
            break
        except OSError:
            time.sleep(0.1)
    else:
        pytest.fail("the auto-started resident server never answered")
    second = librarian(repo, "compose", "fix the invoice total", "--as-of", AS_OF, auto=True)
    assert second.returncode == 0, second.stderr
    assert _served(repo) == before + 1
    assert "invoice_total" in second.stdout


def test_auto_start_needs_the_variable_and_an_indexed_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["compose", "x", "-C", str(tmp_path)]
    (tmp_path / ".librarian").mkdir()
    monkeypatch.delenv("LIBRARIAN_RESIDENT", raising=False)
    assert auto_start(argv) is False
    monkeypatch.setenv("LIBRARIAN_RESIDENT", "auto")
    (tmp_path / ".librarian" / "resident.starting").touch()  # another call is starting one
    assert auto_start(argv) is False
    bare = tmp_path / "bare"
    bare.mkdir()
    assert auto_start(["compose", "x", "-C", str(bare)]) is False  # not indexed: no server
    assert not (bare / ".librarian").exists()
