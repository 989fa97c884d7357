"""Compose right after an edit, as an agent's edit-then-compose loop meets it.

    .venv/bin/python benchmarks/bench_edit_loop.py [--rounds 8] [--runs 3]
        [--baseline-src OTHER_CHECKOUT/src]

On a copy of the stdlib's ``.py`` files committed to git (as ``bench_first_pack.py``
makes it), indexed first: one ``Librarian`` per run composes once to warm up, then
``--rounds`` times appends a small function to one file (a different file each round)
and composes (8,000 tokens, no pack cache) — the index update the compose triggers is
part of the measured call — then composes again with nothing changed (a warm call, for
comparison). Each run is a fresh process with this checkout's ``src/``, or with
``--baseline-src`` on its own copy of the corpus, alternated A B A B. Medians over all
rounds of all runs; load averages printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_first_pack import clone, make_origin  # noqa: E402
from bench_scale import run_side  # noqa: E402

TASK = "json decoder: report the line and column of a trailing comma"
FILES = (
    "json/decoder.py",
    "logging/__init__.py",
    "email/header.py",
    "csv.py",
    "argparse.py",
    "pathlib.py",
    "asyncio/subprocess.py",
    "zipfile/__init__.py",
    "http/client.py",
    "sqlite3/dbapi2.py",
)

_CHILD = r"""
import json, os, statistics, sys, time
from pathlib import Path
from codelibrarian.api import Librarian
root, rounds, files, task = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
files = [f for f in files if (root / f).exists()]
edited, warm = [], []
with Librarian(root) as lib:
    lib.compose(task, budget=8000, use_cache=False)
    for i in range(rounds):
        path = root / files[i % len(files)]
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n\ndef _bench_edit_{os.getpid()}_{i}():\n    return {i}\n")
        start = time.perf_counter()
        lib.compose(task, budget=8000, use_cache=False)
        edited.append(time.perf_counter() - start)
        start = time.perf_counter()
        lib.compose(task, budget=8000, use_cache=False)
        warm.append(time.perf_counter() - start)
print(json.dumps({"edited": edited, "warm": warm}))
"""


def run(src: Path, repo: Path, rounds: int) -> dict[str, list[float]]:
    os.environ["LIBRARIAN_NO_RESIDENT"] = "1"  # passed on to the run's interpreter
    out: dict[str, list[float]] = run_side(
        _CHILD, [str(repo), str(rounds), ",".join(FILES), TASK], src, "the edit loop"
    )
    return out


def index(src: Path, repo: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(src), "LIBRARIAN_NO_RESIDENT": "1"}
    subprocess.run(
        [sys.executable, "-m", "codelibrarian", "index", str(repo)],
        env=env,
        capture_output=True,
        check=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path)
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()}")
    sides = {"this checkout": REPO / "src"}
    if args.baseline_src is not None:
        sides["baseline"] = args.baseline_src.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        origin = make_origin(Path(tmp))
        results: dict[str, dict[str, list[float]]] = {}
        for i in range(args.runs):
            names = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in names:
                repo = clone(origin, Path(tmp) / f"copy-{name.replace(' ', '-')}-{i}")
                index(sides[name], repo)
                started = time.perf_counter()
                got = run(sides[name], repo, args.rounds)
                took = time.perf_counter() - started
                for key, xs in got.items():
                    results.setdefault(name, {}).setdefault(key, []).extend(xs)
                print(f"run {i + 1} {name}: {took:.1f}s")
    for name, got in results.items():
        for key in ("edited", "warm"):
            xs = got[key]
            print(
                f"{name:14s} compose {'after an edit' if key == 'edited' else 'unchanged'}: "
                f"median {statistics.median(xs) * 1000:6.0f} ms, max {max(xs) * 1000:6.0f} ms "
                f"({len(xs)} calls)"
            )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
