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

import contextlib
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.execution.ledger import read_entries, verify
from tests.helpers import make_repo

from .conftest import BUGGY_FILES, PY, ROOT, subprocess_env
from .ollama_server import MODEL_CONFIG, OllamaServer

#: ~27 worker processes (forked from one that imported once): a minute or more
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RUNS = 20
RESUME_KILLS = 5
MODEL_STEPS = {"t1", "t2", "t3", "t4", "t5", "t6"}
ALL_STEPS = MODEL_STEPS | {"n1", "n2", "n3"}


def _answer(primitive: str, prompt: str, schema: Any) -> dict[str, Any]:
    assert primitive == "test_think", primitive
    return {"conclusion": "add subtracts b instead of adding it", "confidence": 800}


class Workers:
    """Crash workers forked by one ``crash_worker serve`` process (imports paid once).

    ``start`` begins a worker (a process of its own, killed on its own) and returns
    the moment it was forked; ``wait`` gives its exit code, or None if it still runs
    after the timeout; ``kill`` SIGKILLs it.
    """

    def __init__(self, env: dict[str, str], tmp: Path) -> None:
        self.tmp = tmp
        self.count = 0
        self.pid = 0
        self.running = False
        self._err = (tmp / "serve.err").open("w")
        self.proc = subprocess.Popen(
            [PY, "-m", "tests.execution.crash_worker", "serve"],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._err, text=True,
        )  # fmt: skip
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        assert self._line(240.0) == "ready", self._said()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in self.proc.stdout:
                self._lines.put(line.strip())
        self._lines.put(None)

    def _line(self, timeout: float) -> str | None:
        line = self._lines.get(timeout=timeout)
        assert line is not None, f"the worker server ended: {self._said()}"
        return line

    def _said(self) -> str:
        self._err.flush()
        return (self.tmp / "serve.err").read_text()

    def start(self, repo: Path, *args: str) -> float:
        self.count += 1
        self.out = self.tmp / f"worker-{self.count}.out"
        self.err = self.tmp / f"worker-{self.count}.err"
        request = {"argv": [str(repo), *args], "out": str(self.out), "err": str(self.err)}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self._line(60.0)
        assert line is not None and line.startswith("pid "), line
        self.pid = int(line.split()[1])
        self.running = True
        return time.monotonic()

    def wait(self, timeout: float) -> int | None:
        try:
            line = self._line(timeout)
        except queue.Empty:
            return None
        assert line is not None and line.startswith("exit "), line
        self.running = False
        return int(line.split()[1])

    def kill(self) -> None:
        """SIGKILL the running worker (not yet reaped, so its pid is still its own)."""
        assert self.running
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def finish(self, code: int | None = None) -> list[dict[str, str]]:
        """The views a worker printed; it must have ended well."""
        code = self.wait(240.0) if code is None else code
        out, err = self.out.read_text(), self.err.read_text()
        assert code == 0, (code, err)
        views = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert views and all(v["status"] == "succeeded" for v in views), out
        return views

    def close(self) -> None:
        if self.proc.poll() is None and self.running:
            self.kill()  # a worker left running by a failure
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._pump_thread.join(timeout=10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self._err.close()


def _runs(repo: Path) -> set[str]:
    folder = repo / ".librarian" / "runs"
    return (
        {p.name for p in folder.iterdir() if (p / "ledger.jsonl").exists()}
        if folder.is_dir()
        else set()
    )


def _kill_at(workers: Workers, delay: float) -> bool:
    """SIGKILL the running worker ``delay`` seconds into its work; False if it finished first."""
    code = workers.wait(delay)
    if code is None:
        workers.kill()
        code = workers.wait(240.0)
        if code == -signal.SIGKILL:
            return True
    workers.finish(code)  # it ended before the kill landed: it must have ended well
    return False


def test_runs_killed_at_random_points_resume_and_work_each_step_once(tmp_path: Path) -> None:
    rng = random.Random(20261123)
    server = OllamaServer(_answer, delay_s=0.03)
    repo = make_repo(tmp_path / "repo", {**BUGGY_FILES, "librarian.toml": MODEL_CONFIG})
    workers = Workers(subprocess_env(tmp_path, OLLAMA_HOST=server.url), tmp_path)
    try:
        # how long an uninterrupted run works here: the window kills are drawn from
        began = workers.start(repo, "start")
        workers.finish()
        window = time.monotonic() - began
        (baseline,) = _runs(repo)
        kills = 0
        killed_runs: list[str] = []
        while len(killed_runs) < RUNS:  # each run started, then killed mid-work
            before = _runs(repo)
            workers.start(repo, "start")
            if not _kill_at(workers, rng.uniform(0.0, window)):
                continue  # it finished before the kill: not a crash, try again
            new = _runs(repo) - before
            if not new:
                continue  # killed before the run's ledger existed: nothing to resume
            kills += 1
            killed_runs.extend(new)
        # resumed in one process per pass, which is itself killed at random points
        # (each kill lands in the middle of some run's resumption) until all finish
        for _ in range(RESUME_KILLS):
            workers.start(repo, "resume", *killed_runs)
            if _kill_at(workers, rng.uniform(0.0, window)):
                kills += 1
        workers.start(repo, "resume", *killed_runs)
        assert {v["run_id"] for v in workers.finish()} == set(killed_runs)
    finally:
        workers.close()
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
