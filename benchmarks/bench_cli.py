"""CLI start-up and warm CLI compose latency, as an agent calling ``librarian`` sees them.

    .venv/bin/python benchmarks/bench_cli.py [--runs 20] [--calls 20] [--repo PATH]
        [--baseline-src OTHER_CHECKOUT/src]

* start-up: ``python -c pass`` (the same interpreter) against ``librarian --help``
  and ``librarian --version``, whole processes, alternated, ``--runs`` times each.
* warm compose: on ``--repo`` (default: a copy of the stdlib's ``.py`` files, as
  ``bench_index.py`` makes it, committed to git and indexed first), ``librarian
  compose TASK --budget 8000 --no-cache`` as a fresh process, ``--calls`` times, a
  different task each call (no server has seen it: no memo hit), three ways:
  **in-process** (``LIBRARIAN_RESIDENT=off``), the **default** (no variable: the
  first call in the repository starts a resident server in the background, timed
  apart; later calls reach it) and an **explicit server** (``librarian serve
  --daemon`` started first). Phase one alternates in-process and default calls;
  phase two, after ``serve --stop``, times explicit-server calls, then one task
  sent 10 times (memo hits after the first: reported apart). Before each phase's
  timed calls it waits until the servers have finished their idle-time warming
  (as an agent's seconds between calls allow); ``--no-settle`` times them right
  away. ``--no-cache`` makes every call compose for real.
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
import sys
import tempfile
import time
from pathlib import Path

from harness.corpus import make_origin
from harness.procs import LIBRARIAN, PYTHON, timed
from harness.stats import load_average, median_ms, p95

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
    "fix the tarfile extraction filter for links",
    "ssl context should load default certs lazily",
    "shutil.copytree ignores dangling symlinks",
    "unittest mock: autospec for async methods",
    "http cookies: parse the expires attribute in any case",
    "imaplib: support the IDLE command with a timeout",
    "decimal context: raise on inexact conversions from float",
    "gettext: fall back to the language without a region",
    "inspect.signature fails on builtins with text signatures",
    "multiprocessing pool hangs when a worker is killed",
    "pickle protocol 5 out-of-band buffers for numpy-like objects",
    "smtplib starttls should verify the server hostname",
    "traceback: show the exception notes of chained exceptions",
    "urllib.parse: urljoin drops the fragment of the base url",
    "xml.etree: iterparse leaks file handles on errors",
    "configparser: interpolation of values with percent signs",
    "threading.Timer cancel races with the function start",
    "statistics: median of an empty sequence raises the wrong error",
    "datetime.fromisoformat accepts week dates",
    "socketserver: shut down the threading server without waiting",
    "difflib unified diff with tabs in line content",
    "enum: flag members with aliases print wrong names",
    "textwrap.shorten counts wide characters wrong",
    "getpass falls back to stdin without a terminal warning",
    "functools.lru_cache with typed keyword arguments",
    "tempfile: NamedTemporaryFile delete on close on windows",
    "ipaddress: collapse addresses across ipv4 mapped ipv6",
    "codecs: incremental decoder for utf-16 with a bom",
    "random.sample with counts larger than the population",
    "dataclasses: kw_only fields with defaults ordering error",
)
#: the task the repeat figure sends again and again (a memo hit after the first)
REPEAT_TASK = TASKS[0]


def wall(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    return timed(cmd, cwd, env)[0]


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
    *,
    repeat: str | None = None,
) -> None:
    """``calls`` rounds of one call per side and mode, the order reversed every round:
    a different task each round (none seen before by that server), or ``repeat``."""
    for i in range(calls):
        task = TASKS[i % len(TASKS)] if repeat is None else repeat
        cmd = [LIBRARIAN, "compose", task, "--budget", "8000", "--no-cache"]
        runs = [(name, mode, repo) for name, (repo, _) in sides.items() for mode in modes]
        for name, mode, repo in runs if i % 2 == 0 else reversed(runs):
            env = _envs(sides[name][1])[mode]
            times.setdefault((name, mode), []).append(wall(cmd, repo, env))


def _settle(sides: dict[str, tuple[Path, Path | None]], deadline_s: float = 120.0) -> None:
    """Wait until every side's resident server has finished warming (a server that
    does not warm says nothing of it): an agent thinks for seconds between calls."""
    from codelibrarian.cli.resident import request

    for _name, (repo, _src) in sides.items():
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            try:
                state = request(repo, {"op": "ping"}, timeout=10.0)
            except OSError:
                time.sleep(0.2)  # not up yet (auto-start)
                continue
            if not state.get("warming"):
                break
            time.sleep(0.2)


def _stop_all(sides: dict[str, tuple[Path, Path | None]]) -> None:
    for _name, (repo, src) in sides.items():
        wall([LIBRARIAN, "serve", "--stop"], repo, _envs(src)["explicit server"])


def warm_compose(
    calls: int, sides: dict[str, tuple[Path, Path | None]], *, settle: bool = True
) -> None:
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
    repeats: dict[tuple[str, str], list[float]] = {}
    firsts: dict[str, float] = {}
    try:
        for name, (repo, src) in sides.items():
            cmd = [LIBRARIAN, "compose", "the first call", "--no-cache"]
            firsts[name] = wall(cmd, repo, _envs(src)["default"])
        if settle:
            _settle(sides)
        _alternate(calls, sides, ("in-process", "default"), times)
        _stop_all(sides)
        for _name, (repo, src) in sides.items():
            env = _envs(src)["explicit server"]
            wall([LIBRARIAN, "serve", "--daemon"], repo, env)
            wall([LIBRARIAN, "compose", "warm the server", "--no-cache"], repo, env)
        if settle:
            _settle(sides)
        _alternate(calls, sides, ("explicit server",), times)
        # the same task again and again: a memo hit in the server after the first
        _alternate(min(calls, 10), sides, ("explicit server",), repeats, repeat=REPEAT_TASK)
    finally:
        _stop_all(sides)
    for name, took in firsts.items():
        print(f"warm CLI compose, first default call [{name}]: {took * 1000:6.0f} ms")
    for label, table in (("distinct tasks", times), ("one task repeated", repeats)):
        for (name, mode), xs in sorted(table.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            print(
                f"warm CLI compose, {label}, {mode:15s} [{name}]: "
                f"p50 {median_ms(xs):6.0f} ms, "
                f"p95 {p95(xs) * 1000:6.0f} ms ({len(xs)} calls)"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="start-up runs of each command")
    ap.add_argument("--calls", type=int, default=20, help="warm compose calls per way")
    ap.add_argument("--repo", type=Path, help="default: a git copy of the stdlib's .py files")
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src/ to alternate with")
    ap.add_argument(
        "--no-settle",
        action="store_true",
        help="time calls right after a server starts (do not wait for it to finish warming)",
    )
    args = ap.parse_args(argv)
    if args.calls > len(TASKS):
        ap.error(f"--calls at most {len(TASKS)} (each call a task the server has not seen)")
    if args.baseline_src is not None and args.repo is not None:
        ap.error("--baseline-src needs the stdlib corpus (no --repo)")
    print(f"cores: {os.cpu_count()}; load average before: {load_average():.2f}")
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        startup(args.runs, work)
        repo = args.repo.resolve() if args.repo else make_origin(work)
        sides: dict[str, tuple[Path, Path | None]] = {"this checkout": (repo, None)}
        if args.baseline_src is not None:
            other = work / "baseline"
            other.mkdir()
            sides["baseline"] = (make_origin(other), args.baseline_src.resolve())
        warm_compose(args.calls, sides, settle=not args.no_settle)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {load_average():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
