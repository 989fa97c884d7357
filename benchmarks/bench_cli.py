"""CLI start-up and warm CLI compose latency, as an agent calling ``librarian`` sees them.

    .venv/bin/python benchmarks/bench_cli.py [--runs 20] [--calls 20] [--repo PATH]
        [--baseline-src OTHER_CHECKOUT/src]

* start-up: ``python -c pass`` (the same interpreter) against ``librarian --help``
  and ``librarian --version``, whole processes, alternated, ``--runs`` times each.
* warm compose: on ``--repo`` (default: a copy of the stdlib's ``.py`` files, as
  ``bench_index.py`` makes it, committed to git and indexed first), ``librarian
  compose TASK --budget 8000 --no-cache`` as a fresh process, ``--calls`` times with
  tasks in rotation, three ways: **in-process** (``LIBRARIAN_RESIDENT=off``), the
  **default** (no variable: the first call in the repository starts a resident
  server in the background, timed apart; later calls reach it) and an **explicit
  server** (``librarian serve --daemon`` started first). Phase one alternates
  in-process and default calls; phase two, after ``serve --stop``, in-process and
  explicit-server calls. ``--no-cache`` makes every call compose for real.
* ``--baseline-src``: the same warm calls, alternated call by call, also with another
  checkout's ``src/`` first on ``PYTHONPATH`` (e.g. main's), on its own copy of the
  corpus (made and indexed by that code): an A/B in the same minutes. Only the
  stdlib corpus (no ``--repo``). A baseline without auto-start answers its
  "default" calls in-process. Compile both ``src/`` folders first (``python -m
  compileall``) when ``PYTHONDONTWRITEBYTECODE`` is set, or one side pays for
  compiling its modules on every call.

Medians (p50) and p95 of whole-process wall times; load averages printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
LIBRARIAN = str(Path(PYTHON).with_name("librarian"))

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_first_pack import make_origin  # noqa: E402

TASKS = (
    "json decoder: report the line and column of a trailing comma",
    "make the http client retry a request after a timeout",
    "add timezone support to the logging formatter",
    "speed up pathlib glob on large trees",
    "fix asyncio subprocess pipes leaking on cancel",
    "email header parser mishandles folded lines",
    "csv sniffer guesses the wrong delimiter for quoted fields",
    "argparse: show choices for subcommands in help",
    "sqlite3 adapters for datetime are deprecated",
    "zipfile: extract members with unicode names on windows",
)


def wall(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed: {done.stderr.decode()[-1500:]}")
    return took


def p95(xs: list[float]) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def startup(runs: int, cwd: Path) -> None:
    env = dict(os.environ)
    times: dict[str, list[float]] = {"python -c pass": [], "--help": [], "--version": []}
    cmds = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "--help": [LIBRARIAN, "--help"],
        "--version": [LIBRARIAN, "--version"],
    }
    for i in range(runs):
        names = list(cmds) if i % 2 == 0 else list(reversed(cmds))
        for name in names:
            times[name].append(wall(cmds[name], cwd, env))
    base = statistics.median(times["python -c pass"])
    for name, xs in times.items():
        med = statistics.median(xs)
        print(f"{name:16s} median {med * 1000:6.1f} ms  ({med / base:4.1f}x python -c pass)")


def _envs(src: Path | None) -> dict[str, dict[str, str]]:
    """The environment of each way of calling, with ``src`` first on PYTHONPATH if given:
    in-process (no server used or started), the default (no variable: an auto-started
    server where the code has one) and an explicit server (``serve --daemon``)."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LIBRARIAN_NO_RESIDENT", "LIBRARIAN_RESIDENT", "PYTHONPATH")
    }
    if src is not None:
        base["PYTHONPATH"] = str(src)
    return {
        "in-process": {**base, "LIBRARIAN_NO_RESIDENT": "1", "LIBRARIAN_RESIDENT": "off"},
        "default": base,
        "explicit server": {**base, "LIBRARIAN_RESIDENT": "manual"},
    }


def _alternate(
    calls: int,
    sides: dict[str, tuple[Path, Path | None]],
    modes: tuple[str, ...],
    times: dict[tuple[str, str], list[float]],
) -> None:
    """``calls`` rounds of one call per side and mode, the order reversed every round."""
    for i in range(calls):
        task = TASKS[i % len(TASKS)]
        cmd = [LIBRARIAN, "compose", task, "--budget", "8000", "--no-cache"]
        runs = [(name, mode, repo) for name, (repo, _) in sides.items() for mode in modes]
        for name, mode, repo in runs if i % 2 == 0 else reversed(runs):
            env = _envs(sides[name][1])[mode]
            times.setdefault((name, mode), []).append(wall(cmd, repo, env))


def _stop_all(sides: dict[str, tuple[Path, Path | None]]) -> None:
    for _name, (repo, src) in sides.items():
        wall([LIBRARIAN, "serve", "--stop"], repo, _envs(src)["explicit server"])


def warm_compose(calls: int, sides: dict[str, tuple[Path, Path | None]]) -> None:
    """``sides``: name -> (corpus copy, src on PYTHONPATH or None for this checkout).

    Two phases, each alternating call by call: in-process against the default (the
    first default call in a repository starts a server where the code does so; it is
    timed apart, and the calls after it are not delayed to let the server come up),
    then in-process against an explicitly started server (``serve --daemon``).
    """
    for _name, (repo, src) in sides.items():
        env = _envs(src)["in-process"]
        wall([LIBRARIAN, "index", str(repo)], repo, env)
        wall([LIBRARIAN, "compose", "warm the page cache", "--no-cache"], repo, env)
    times: dict[tuple[str, str], list[float]] = {}
    firsts: dict[str, float] = {}
    try:
        for name, (repo, src) in sides.items():
            cmd = [LIBRARIAN, "compose", "the first call", "--no-cache"]
            firsts[name] = wall(cmd, repo, _envs(src)["default"])
        _alternate(calls, sides, ("in-process", "default"), times)
        _stop_all(sides)
        for _name, (repo, src) in sides.items():
            env = _envs(src)["explicit server"]
            wall([LIBRARIAN, "serve", "--daemon"], repo, env)
            wall([LIBRARIAN, "compose", "warm the server", "--no-cache"], repo, env)
        _alternate(calls, sides, ("explicit server",), times)
    finally:
        _stop_all(sides)
    for name, took in firsts.items():
        print(f"warm CLI compose, first default call [{name}]: {took * 1000:6.0f} ms")
    for (name, mode), xs in sorted(times.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(
            f"warm CLI compose, {mode:15s} [{name}]: p50 {statistics.median(xs) * 1000:6.0f} ms, "
            f"p95 {p95(xs) * 1000:6.0f} ms ({len(xs)} calls)"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src/ to alternate with")
    args = ap.parse_args()
    if args.baseline_src is not None and args.repo is not None:
        ap.error("--baseline-src needs the stdlib corpus (no --repo)")
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()}")
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        startup(args.runs, work)
        repo = args.repo.resolve() if args.repo else make_origin(work)
        sides: dict[str, tuple[Path, Path | None]] = {"this checkout": (repo, None)}
        if args.baseline_src is not None:
            other = work / "baseline"
            other.mkdir()
            sides["baseline"] = (make_origin(other), args.baseline_src.resolve())
        warm_compose(args.calls, sides)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
