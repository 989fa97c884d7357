"""Time to the first pack on a fresh checkout, against Aider's first repository map.

    .venv/bin/python benchmarks/bench_first_pack.py --aider-python VENV/bin/python \\
        [--runs 3] [--budget 8000] [--task "..."] [--full]

The corpus is the CPython standard library's ``.py`` files (as ``bench_index.py``
copies them), committed to a git repository once. Every run clones it afresh for
each system, so nothing is cached, and times whole processes, alternating which
system goes first:

* **librarian**: ``librarian compose TASK --budget B --format json`` with an empty
  per-user parse cache and no resident server: it lists the files, parses the ones
  the task needs most, composes, and starts a background run for the rest. Also
  reported: when that background run has finished the whole index.
* **aider**: ``benchmarks/aider_first_map.py`` in Aider's venv (its first repo map of
  the checkout: imports, a tag parse of every file, the ranked map).
* with ``--full``, also **librarian index + compose**: the whole index first, then
  the pack (what the first pack cost before the staged index).

Medians of ``--runs``; the machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness.corpus import clone, make_origin
from harness.procs import BENCHMARKS, LIBRARIAN, no_resident_env, timed
from harness.stats import load_average

TASK = "json decoder: report the line and column of a trailing comma in an object"


def wait_complete(root: Path, started: float, timeout: float = 600) -> float:
    """Seconds from ``started`` until every listed file of ``root`` is parsed."""
    db = root / ".librarian" / "index.db"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
                listed, parsed = conn.execute(
                    "SELECT COUNT(*), COALESCE(SUM(stage = 2), 0) FROM files"
                ).fetchone()
            if listed and listed == parsed:
                # the background run ends with the co-change graph: wait for its lock
                lock = db.with_name("index.db.lock")
                if '"held"' not in lock.read_text(errors="replace"):
                    return time.perf_counter() - started
        except (sqlite3.Error, OSError):
            pass
        time.sleep(0.1)
    raise SystemExit("the background index did not finish")


def run_librarian(origin: Path, work: Path, task: str, budget: int, i: int) -> dict[str, object]:
    root = clone(origin, work / f"lib-{i}")
    env = {**no_resident_env(), "LIBRARIAN_CACHE_DIR": str(work / f"cache-{i}")}
    started = time.perf_counter()
    cmd = [LIBRARIAN, "compose", task, "--budget", str(budget)]
    wall, out = timed([*cmd, "--format", "json"], root, env)
    doc = json.loads(out)
    complete = wait_complete(root, started)
    return {
        "wall": wall,
        "complete": complete,
        "tokens": doc["tokens"],
        "files": list(dict.fromkeys(a["path"] for a in doc["artifacts"] if a["path"]))[:5],
        "degraded": [d["detail"] for d in doc["degraded"]],
    }


def run_full(origin: Path, work: Path, task: str, budget: int, i: int) -> float:
    root = clone(origin, work / f"full-{i}")
    env = {**no_resident_env(), "LIBRARIAN_CACHE_DIR": str(work / f"cache-full-{i}")}
    started = time.perf_counter()
    timed([LIBRARIAN, "index", str(root)], root, env)
    timed([LIBRARIAN, "compose", task, "--budget", str(budget)], root, env)
    return time.perf_counter() - started


def run_aider(origin: Path, work: Path, task: str, budget: int, i: int, *, python: str) -> float:
    root = clone(origin, work / f"aider-{i}")
    script = str(BENCHMARKS / "aider_first_map.py")
    wall, _ = timed([python, script, str(root), task, str(budget)], root, dict(os.environ))
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aider-python", required=True, help="the Python of a venv with aider-chat")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--full", action="store_true", help="also time a whole index, then compose")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-first-"))
    origin = make_origin(work)
    print(f"cores: {os.cpu_count()}; load average before: {load_average():.2f}")
    ours: list[dict[str, object]] = []
    aider: list[float] = []
    full: list[float] = []
    for i in range(args.runs):
        order = ("librarian", "aider") if i % 2 == 0 else ("aider", "librarian")
        for name in order:
            if name == "librarian":
                ours.append(run_librarian(origin, work, args.task, args.budget, i))
            else:
                aider.append(
                    run_aider(origin, work, args.task, args.budget, i, python=args.aider_python)
                )
        if args.full:
            full.append(run_full(origin, work, args.task, args.budget, i))
        print(
            f"run {i + 1} ({' then '.join(order)}): librarian first pack "
            f"{ours[-1]['wall']:.2f}s (whole index done {ours[-1]['complete']:.2f}s), "
            f"aider first map {aider[-1]:.2f}s"
            + (f", librarian index + compose {full[-1]:.2f}s" if args.full else "")
        )
    first = statistics.median(float(str(r["wall"])) for r in ours)
    done = statistics.median(float(str(r["complete"])) for r in ours)
    am = statistics.median(aider)
    print(f"\nmedian of {args.runs}: librarian first pack {first:.2f}s, aider first map {am:.2f}s")
    print(f"ratio librarian / aider: {first / am:.2f} (goal <= 0.33; first pack <= 5 s)")
    print(f"whole index finished in the background after {done:.2f}s (median)")
    if full:
        print(f"librarian index then compose (no staging): {statistics.median(full):.2f}s")
    print(f"first pack files (run 1): {ours[0]['files']}; degraded: {ours[0]['degraded']}")
    print(f"load average after: {load_average():.2f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
