"""SIGKILL and SIGTERM at random points never leave a hang or a damaged index (#17, #18).

Each case starts a real ``librarian`` process on a copy of a ~60-module
repository, signals it after a delay drawn from a seeded generator (so a failure
replays), and then checks what a user would hit next:

* the killed process is gone, and so is every process it had started (the parse
  workers die with their parent, and none keeps the index lock);
* the next command finishes within 10 s and succeeds;
* the index passes ``PRAGMA integrity_check`` and is complete.

The cases vary what the killed run was doing: a cold index (parsing in a pool),
an index started from a sibling checkout's copy, an incremental run after edits,
and, for ``compose``, the index it builds on first use. Stage traces
(``LIBRARIAN_TRACE=stages``) let some cases strike right as a named stage starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.config import Config, IndexConfig
from codelibrarian.index.indexer import index_workspace

from .conftest import (
    NEXT_COMMAND_S,
    assert_sound,
    descendants,
    fresh_copy,
    librarian,
    lock_is_free,
    start,
    wait_gone,
)

pytestmark = pytest.mark.reliability

SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM}
#: how long a signalled process may take to exit (its own clean-up, not the next
#: command's limit); past it the test fails after killing what is left
EXIT_S = 30.0
ROUNDS = 20
#: the named stages a case may strike at (in the order an index run goes through them)
STAGES = ("files", "parse", "resolve", "derived")


def _prepare(corpus: Path, tmp_path: Path, rng: random.Random) -> tuple[Path, str]:
    """A repository copy in one of several states; returns it and the state's name."""
    kind = rng.choice(("cold", "cold", "cold", "cold", "cold", "cold", "sibling", "edited"))
    if kind == "sibling":  # an index of another checkout exists: this one starts from it
        index_workspace(fresh_copy(corpus, tmp_path / "sibling"))
    repo = fresh_copy(corpus, tmp_path / "work")
    if kind == "edited":  # a complete index, then edits: the killed run is incremental
        index_workspace(repo)
        for n in rng.sample(range(60), 20):
            path = repo / "pkg" / f"mod_{n:03d}.py"
            path.write_text(path.read_text() + f"\n\ndef added_{n}() -> int:\n    return {n}\n")
    return repo, kind


def _strike(proc: subprocess.Popen[str], sig: int, rng: random.Random) -> None:
    """Signal ``proc`` at a random time, or right after a random stage starts."""
    if rng.random() < 0.5 and proc.stderr is not None:
        # strike as the stage starts, or after 5 s if this run never reaches it
        lines: queue.Queue[str] = queue.Queue()
        stream = proc.stderr
        threading.Thread(target=lambda: [lines.put(x) for x in stream], daemon=True).start()
        wanted = f"stage {rng.choice(STAGES)}"
        deadline = time.monotonic() + 5
        while (left := deadline - time.monotonic()) > 0:
            try:
                if lines.get(timeout=left).strip() == wanted:
                    break
            except queue.Empty:
                break
    else:
        time.sleep(rng.uniform(0.05, 1.2))
    kids = descendants(proc.pid)
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.wait(timeout=NEXT_COMMAND_S)
    for stream in (proc.stdin, proc.stderr):
        if stream is not None:
            stream.close()
    assert wait_gone(kids, 5.0) == set(), "processes outlived the killed librarian"


def _next_command_works(repo: Path, task: str | None = None) -> None:
    """The next index (or compose, given a task) finishes within 10 s and leaves it sound.

    It runs in this process (the library the CLI calls), which keeps the suite's
    time down; ``test_killed_mcp_server`` runs its next command through the CLI.
    """
    assert lock_is_free(repo)
    began = time.monotonic()
    if task is None:
        stats = index_workspace(repo, lock_timeout=NEXT_COMMAND_S)
        assert stats.pending == 0
    else:
        with Librarian(repo) as lib:
            assert lib.compose(task, budget=2000).tokens <= 2000
    assert time.monotonic() - began < NEXT_COMMAND_S
    assert_sound(repo)


@pytest.mark.parametrize("name", sorted(SIGNALS))
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_killed_index(corpus: Path, tmp_path: Path, name: str, round_: int) -> None:
    rng = random.Random(f"index-{name}-{round_}")
    repo, _kind = _prepare(corpus, tmp_path, rng)
    proc = start(repo, "index", "--json", env={"LIBRARIAN_TRACE": "stages"})
    _strike(proc, SIGNALS[name], rng)
    _next_command_works(repo)


@pytest.mark.parametrize("name", sorted(SIGNALS))
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_killed_compose(corpus: Path, tmp_path: Path, name: str, round_: int) -> None:
    rng = random.Random(f"compose-{name}-{round_}")
    repo, _kind = _prepare(corpus, tmp_path, rng)
    task = "scale the value in stage 7"
    proc = start(repo, "compose", task, "--budget", "2000", env={"LIBRARIAN_TRACE": "stages"})
    _strike(proc, SIGNALS[name], rng)
    _next_command_works(repo, task)


@pytest.mark.parametrize("name", sorted(SIGNALS))
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_killed_watch(corpus: Path, tmp_path: Path, name: str, round_: int) -> None:
    rng = random.Random(f"watch-{name}-{round_}")
    repo, _kind = _prepare(corpus, tmp_path, rng)
    proc = start(repo, "index", "--watch", env={"LIBRARIAN_TRACE": "stages"})
    if rng.random() < 0.5:  # strike while it re-indexes a saved file (holding the lock)
        time.sleep(rng.uniform(0.5, 1.5))
        target = repo / "pkg" / f"mod_{rng.randrange(60):03d}.py"
        target.write_text(target.read_text() + "\n\ndef saved() -> int:\n    return 1\n")
        time.sleep(rng.uniform(0.0, 0.6))
        kids = descendants(proc.pid)
        proc.send_signal(SIGNALS[name])
        proc.wait(timeout=NEXT_COMMAND_S)
        for stream in (proc.stdin, proc.stderr):
            if stream is not None:
                stream.close()
        assert wait_gone(kids, 5.0) == set()
    else:
        _strike(proc, SIGNALS[name], rng)
    _next_command_works(repo)


def _mcp_call(task: str) -> str:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reliability", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "compose_context", "arguments": {"task": task}},
        },
    ]
    return "".join(json.dumps(m) + "\n" for m in messages)


@pytest.mark.parametrize("name", sorted(SIGNALS))
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_killed_mcp_server(corpus: Path, tmp_path: Path, name: str, round_: int) -> None:
    rng = random.Random(f"mcp-{name}-{round_}")
    repo, _kind = _prepare(corpus, tmp_path, rng)
    proc = start(repo, "serve", env={"LIBRARIAN_TRACE": "stages"})
    assert proc.stdin is not None
    proc.stdin.write(_mcp_call("scale the value in stage 7"))
    proc.stdin.flush()  # the server indexes, then composes, while we strike
    time.sleep(rng.uniform(0.2, 2.5))
    kids = descendants(proc.pid)
    proc.send_signal(SIGNALS[name])
    proc.wait(timeout=NEXT_COMMAND_S)
    for stream in (proc.stdin, proc.stderr):
        if stream is not None:
            stream.close()
    assert wait_gone(kids, 5.0) == set()
    # the next CLI call may find the server's resident socket left behind: it must not
    # wait on it, and must complete the index the server was building
    began = time.monotonic()
    result = librarian(repo, "compose", "scale the value", env={"LIBRARIAN_NO_RESIDENT": ""})
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - began < NEXT_COMMAND_S
    assert_sound(repo)


@pytest.mark.parametrize("name", sorted(SIGNALS))
@pytest.mark.parametrize("round_", range(10))
def test_killed_background_run(corpus: Path, tmp_path: Path, name: str, round_: int) -> None:
    """compose answers from a partial index and starts a background run: kill that run."""
    rng = random.Random(f"background-{name}-{round_}")
    repo = fresh_copy(corpus, tmp_path / "work")
    with Librarian(repo, Config(index=IndexConfig(first_files=5))) as lib:
        first = lib.compose("scale the value in stage 7", budget=2000)
    detail = first.degraded[0].detail
    pid = int(detail.rsplit("(pid ", 1)[1].rstrip(")"))
    time.sleep(rng.uniform(0.0, 1.0))
    kids = descendants(pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, SIGNALS[name])
    assert wait_gone({pid, *kids}, NEXT_COMMAND_S) == set()
    began = time.monotonic()
    with Librarian(repo, Config(index=IndexConfig(first_files=0))) as lib:
        assert lib.compose("scale the value in stage 7", budget=2000).degraded == ()
    assert time.monotonic() - began < NEXT_COMMAND_S
    assert_sound(repo)
