"""Execution engine overhead: what the engine adds to each step beyond the step's work.

A bounded loop of builtin no-op steps (``loop(test_noop, max_iterations=N)``) is run
to completion through the real service on a real git repository with a real run
store: every iteration is journaled before and after (hash-chained ledger entries,
the step's output written beside the ledger, the public summary updated at the end).
The no-op's own work is timed separately (calling its executor N times) and
subtracted, so ``overhead/step`` is what the engine costs per dispatch.

The same tree is also driven through the pure core alone (no I/O, scripted
outcomes) to show how the overhead splits between deciding and recording.

Run: .venv/bin/python benchmarks/bench_execution.py [--iterations 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.execution.conftest import BUGGY_FILES, make_service
from tests.execution.library import compiled
from tests.execution.plugin_steps import executors
from tests.execution.sim import op, s, simulate
from tests.helpers import make_repo

from harness.stats import machine


def run_service(repo: Path, n: int) -> tuple[float, int]:
    service = make_service(repo)
    tree = op("loop", s("test_noop"), max_iterations=n)
    start = time.perf_counter()
    view = service.start(compiled(tree, "bench_loop"), "engine overhead benchmark")
    elapsed = time.perf_counter() - start
    if view.status != "succeeded":
        raise SystemExit(f"the benchmark run ended {view.status}")
    check = service.verify(view.run_id)
    if not check.ok:
        raise SystemExit(f"the benchmark run's chain does not verify: {check.reason}")
    return elapsed, check.entries


def run_core(n: int) -> float:
    tree = op("loop", s("noop"), max_iterations=n)
    start = time.perf_counter()
    sim = simulate(tree)
    elapsed = time.perf_counter() - start
    if len(sim.dispatches) != n:
        raise SystemExit(f"the core dispatched {len(sim.dispatches)} steps, not {n}")
    return elapsed


def noop_work(n: int) -> float:
    fn = executors()["test_noop"]
    start = time.perf_counter()
    for _ in range(n):
        fn(None)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    n = args.iterations
    walls: list[float] = []
    cores: list[float] = []
    works: list[float] = []
    entries = 0
    cpu0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            repo = make_repo(Path(tmp) / f"repo{i}", BUGGY_FILES)
            # alternate the two measurements so load drifts hit both alike
            cores.append(run_core(n))
            wall, entries = run_service(repo, n)
            walls.append(wall)
            works.append(noop_work(n))
    cpu = time.process_time() - cpu0
    wall_med = statistics.median(walls)
    work_med = statistics.median(works)
    core_med = statistics.median(cores)
    per_step_ms = (wall_med - work_med) / n * 1000
    print(f"## Execution engine overhead ({time.strftime('%Y-%m-%d')})\n")
    print(f"- machine: {machine()} (shared machine)")
    print(f"- command: `.venv/bin/python benchmarks/bench_execution.py --iterations {n} "
          f"--runs {args.runs}`")  # fmt: skip
    print(f"- median of {args.runs} runs, CPU time of the whole script {cpu:.1f} s\n")
    print("| measure | median | all runs |")
    print("|---|---|---|")
    print(f"| {n}-iteration loop of builtin no-op steps, whole run (start → succeeded) | "
          f"{wall_med:.2f} s | {', '.join(f'{w:.2f}' for w in walls)} |")  # fmt: skip
    print(f"| engine overhead per step (run − no-op work) / {n} | {per_step_ms:.2f} ms | |")
    print(f"| of which the pure core's decisions (no I/O) | {core_med / n * 1000:.3f} ms | |")
    print(f"| the no-op's own work, {n} calls | {work_med * 1000:.2f} ms | |")
    print(f"| ledger entries written per run (chain verified) | {entries} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
