"""Runs SIGKILLed at random points and resumed: every step is worked exactly once.

Each run is the crash-test composition (six model steps, three builtin ones) worked
unattended through a loopback Ollama-compatible server that counts, per
idempotency key (``<run>:<dispatch>``), how often a step was *executed* and how
often a request was a repeat answered from its store. A worker process starting a
run is killed with SIGKILL at a random moment of its work (seeded); the killed runs
are then resumed by a worker that is itself killed at random moments a few times
(each kill lands in some run's resumption), and finally resumed to the end. Then,
for every run: each model dispatch was executed once at the server, the ledger has
exactly one result per dispatch and one dispatch entry per step, the run succeeded,
and its chain verifies.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.execution.ledger import read_entries, verify
from tests.helpers import make_repo

from .conftest import BUGGY_FILES, PY, ROOT, subprocess_env
from .ollama_server import MODEL_CONFIG, OllamaServer

#: ~27 worker processes: minutes on a loaded 2-core machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RUNS = 20
RESUME_KILLS = 5
MODEL_STEPS = {"t1", "t2", "t3", "t4", "t5", "t6"}
ALL_STEPS = MODEL_STEPS | {"n1", "n2", "n3"}


def _answer(primitive: str, prompt: str, schema: Any) -> dict[str, Any]:
    assert primitive == "test_think", primitive
    return {"conclusion": "add subtracts b instead of adding it", "confidence": 800}


def _worker(repo: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PY, "-m", "tests.execution.crash_worker", str(repo), *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _runs(repo: Path) -> set[str]:
    folder = repo / ".librarian" / "runs"
    return (
        {p.name for p in folder.iterdir() if (p / "ledger.jsonl").exists()}
        if folder.is_dir()
        else set()
    )


def _go(proc: subprocess.Popen[str]) -> float:
    """Wait until the worker's imports are done; the time it said so."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "go", (line, proc.stderr.read() if proc.stderr else "")
    return time.monotonic()


def _finish(proc: subprocess.Popen[str]) -> list[dict[str, str]]:
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    views = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert views and all(v["status"] == "succeeded" for v in views), out
    return views


def _kill_at(proc: subprocess.Popen[str], delay: float) -> bool:
    """SIGKILL ``proc`` ``delay`` seconds into its work; False if it finished first."""
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        return True
    _finish(proc)
    return False


def test_runs_killed_at_random_points_resume_and_work_each_step_once(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    server = OllamaServer(_answer, delay_s=0.03)
    try:
        repo = make_repo(tmp_path / "repo", {**BUGGY_FILES, "librarian.toml": MODEL_CONFIG})
        env = subprocess_env(tmp_path, OLLAMA_HOST=server.url)
        # how long an uninterrupted run works here: the window kills are drawn from
        proc = _worker(repo, env, "start")
        began = _go(proc)
        _finish(proc)
        window = time.monotonic() - began
        (baseline,) = _runs(repo)
        kills = 0
        killed_runs: list[str] = []
        while len(killed_runs) < RUNS:  # each run started, then killed mid-work
            before = _runs(repo)
            proc = _worker(repo, env, "start")
            _go(proc)
            if not _kill_at(proc, rng.uniform(0.0, window)):
                continue  # it finished before the kill: not a crash, try again
            new = _runs(repo) - before
            if not new:
                continue  # killed before the run's ledger existed: nothing to resume
            kills += 1
            killed_runs.extend(new)
        # resumed in one process per pass, which is itself killed at random points
        # (each kill lands in the middle of some run's resumption) until all finish
        for _ in range(RESUME_KILLS):
            proc = _worker(repo, env, "resume", *killed_runs)
            _go(proc)
            if _kill_at(proc, rng.uniform(0.0, window)):
                kills += 1
        proc = _worker(repo, env, "resume", *killed_runs)
        _go(proc)
        assert {v["run_id"] for v in _finish(proc)} == set(killed_runs)
    finally:
        server.close()
    assert len(killed_runs) == RUNS and kills >= RUNS + 1
    repeats = sum(server.repeats.values())
    sys.stderr.write(f"\n{RUNS} runs, {kills} kills, {repeats} requests repeated after a kill\n")

    for run_id in [baseline, *killed_runs]:
        path = repo / ".librarian" / "runs" / run_id / "ledger.jsonl"
        check = verify(path)
        assert check.ok, (run_id, check.reason)
        entries, _ = read_entries(path)
        dispatched = Counter(e["dispatch"] for e in entries if e["kind"] == "primitive_dispatch")
        results = Counter(e["dispatch"] for e in entries if e["kind"] == "step_result")
        assert set(dispatched.values()) == {1} and dispatched == results, run_id
        assert {d.rsplit(".", 1)[0] for d in dispatched} == ALL_STEPS, run_id
        assert entries[-1]["kind"] == "run_finished" and entries[-1]["status"] == "succeeded"
        keys = {k: n for k, n in server.executed.items() if k.startswith(f"{run_id}:")}
        model_dispatches = {d for d in dispatched if d.rsplit(".", 1)[0] in MODEL_STEPS}
        assert keys == {f"{run_id}:{d}": 1 for d in model_dispatches}, run_id
