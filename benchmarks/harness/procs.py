"""Whole processes: wall time, CPU and peak memory of a process tree, and "sides".

A *side* is a fresh interpreter with a chosen ``src/`` first on ``PYTHONPATH`` (this
checkout's by default, or another checkout's, e.g. main's), running one of the programs
of :mod:`harness.sides` and answering with one JSON line: how the A/B benchmarks
compare two builds in the same minutes.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "BENCHMARKS",
    "LIBRARIAN",
    "PYTHON",
    "REPO",
    "SIDES",
    "Measured",
    "fresh_cache_env",
    "no_resident_env",
    "run_measured",
    "run_side",
    "timed",
]

#: the checkout these benchmarks belong to, and its ``benchmarks/`` folder
REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
#: the interpreter running the benchmark, and the console script a user runs beside it
#: (``python -m codelibrarian`` would put the working folder on ``sys.path``)
PYTHON = sys.executable
LIBRARIAN = str(Path(PYTHON).with_name("librarian"))
#: the programs a side runs (see :func:`run_side`)
SIDES = Path(__file__).resolve().with_name("sides.py")


def no_resident_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (else this process's environment) with the resident mode off: every
    call is answered by the process that makes it."""
    env = dict(os.environ if base is None else base)
    env["LIBRARIAN_NO_RESIDENT"] = "1"
    env["LIBRARIAN_RESIDENT"] = "off"
    return env


def fresh_cache_env(parent: Path, name: str) -> dict[str, str]:
    """The environment of a ``librarian`` run with an empty per-user cache of its own
    (``parent/cache-NAME``, emptied here) and no resident server."""
    folder = parent / f"cache-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    return {**no_resident_env(), "LIBRARIAN_CACHE_DIR": str(folder)}


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Wall seconds of the whole process and its standard output; a failure stops the
    benchmark with the end of its standard error."""
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, done.stdout


def run_side(
    program: str, args: list[str], src: Path | None, what: str, *, env: dict[str, str] | None = None
) -> Any:
    """Run ``harness/sides.py PROGRAM ARGS`` in a fresh interpreter with ``src`` (else this
    checkout's ``src/``) first on ``PYTHONPATH`` and nothing of this folder on
    ``sys.path``; returns its last line of output, read as JSON."""
    base = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONPATH"}
    base["PYTHONPATH"] = str(src if src is not None else REPO / "src")
    done = subprocess.run(
        [PYTHON, "-P", str(SIDES), program, *args],
        env=no_resident_env(base),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ CPU and memory


@dataclass(frozen=True, slots=True)
class Measured:
    """A finished process: wall and CPU seconds (user + system, its children included),
    peak RSS and PSS in KiB summed over its tree, and its standard output."""

    wall: float
    cpu: float
    rss_kib: int
    pss_kib: int
    stdout: str


#: the ``kcmp`` system call's number, by machine (Linux); None: not known here
_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())
_KCMP_VM = 1


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _same_memory(a: int, b: int) -> bool:
    """Processes ``a`` and ``b`` share one address space (a ``vfork`` child before exec).

    Such a child's ``/proc`` figures are its parent's; summing both would count the
    parent twice (``subprocess`` starts ``git`` this way: a sample taken in that
    millisecond reported twice the indexing process).
    """
    if _KCMP is None or not sys.platform.startswith("linux"):
        return False
    return int(_libc().syscall(_KCMP, a, b, _KCMP_VM, 0, 0)) == 0


def _tree_memory_kib(pid: int) -> tuple[int, int]:
    """``(RSS, PSS)`` in KiB summed over ``pid`` and every process below it; a child
    sharing its parent's address space (``vfork``) is not counted again."""
    rss = pss = 0
    stack = [(pid, 0)]
    seen: set[int] = set()
    while stack:
        p, parent = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            if parent and _same_memory(parent, p):
                continue
            with open(f"/proc/{p}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                        break
            with open(f"/proc/{p}/smaps_rollup", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    stack.extend((int(c), p) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return rss, pss


def run_measured(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``cmd`` to its end, sampling its tree's memory every 20 ms from ``/proc``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = peak_pss = 0
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss
        while not done.is_set():
            rss, pss = _tree_memory_kib(proc.pid)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(wall, cpu, peak, peak_pss, out.decode())
