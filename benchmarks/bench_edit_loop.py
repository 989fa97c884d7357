"""Compose right after an edit, as an agent's edit-then-compose loop meets it.

    .venv/bin/python benchmarks/bench_edit_loop.py [--rounds 8] [--runs 3]
        [--baseline-src OTHER_CHECKOUT/src]

On a copy of the stdlib's ``.py`` files committed to git (``harness.corpus.make_origin``),
indexed first: one ``Librarian`` per run composes once to warm up, then ``--rounds``
times appends a small function to one file (a different file each round) and composes
(8,000 tokens, no pack cache) — the index update the compose triggers is part of the
measured call — then composes again with nothing changed (a warm call, for
comparison). Each run is a fresh process with this checkout's ``src/``, or with
``--baseline-src`` on its own copy of the corpus, alternated A B A B. Medians over all
rounds of all runs; load averages printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.corpus import clone, make_origin
from harness.procs import PYTHON, REPO, no_resident_env, run_side
from harness.stats import load_average, median_ms

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


def run(src: Path, repo: Path, rounds: int) -> dict[str, list[float]]:
    """The edit loop in a fresh process with ``src`` first on PYTHONPATH."""
    out: dict[str, list[float]] = run_side(
        "edit-loop", [str(repo), str(rounds), ",".join(FILES), TASK], src, "the edit loop"
    )
    return out


def index(src: Path, repo: Path) -> None:
    env = {**no_resident_env(), "PYTHONPATH": str(src)}
    subprocess.run(
        [PYTHON, "-m", "codelibrarian", "index", str(repo)],
        env=env,
        capture_output=True,
        check=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=8, help="edits per run")
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per side")
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src/ to alternate with")
    args = ap.parse_args(argv)
    print(f"cores: {os.cpu_count()}; load average before: {load_average():.2f}")
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
                f"median {median_ms(xs):6.0f} ms, max {max(xs) * 1000:6.0f} ms "
                f"({len(xs)} calls)"
            )
    print(f"load average after: {load_average():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
