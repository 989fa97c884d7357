"""The programs a side runs: one fresh interpreter, one build of ``codelibrarian``.

    PYTHONPATH=SOME/src python -P benchmarks/harness/sides.py PROGRAM ARGS...

Started by :func:`harness.procs.run_side` with the chosen ``src/`` first on
``PYTHONPATH`` and nothing of ``benchmarks/`` on ``sys.path`` (``-P``): this file imports
only the standard library and that build's ``codelibrarian.api``, which is why it may
also run an older checkout's code. Each program prints one JSON line:

* ``warm ROOT TASKS_JSON``: a ``Librarian`` kept open (as the resident server keeps
  it), one warm-up compose, then each task composed with the cache off; the wall and
  CPU seconds of each call (``bench_scale.py``, ``warm_ab.py``);
* ``packs ROOT JOBS_JSON``: each ``[task, budget, diff]`` composed with a fixed
  ``as_of`` and the cache off; per pack the SHA-256 of its text, its cache key, decision
  id, artifact ids and candidate count (``check_same_packs.py``);
* ``edit-loop ROOT ROUNDS FILES TASK``: compose, then per round append a function to
  one of the comma-separated ``FILES`` and compose (the index update included), then
  compose again unchanged; the seconds of both (``bench_edit_loop.py``);
* ``first-plan MODE``: a fresh process's first pattern selection (``keywords`` or
  ``embeddings``): milliseconds of the whole (imports, technique library, matchers, one
  selection) and of the matchers and the selection alone (``bench_selection.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

#: the budget of every side's compositions
BUDGET = 8000
#: the ``as_of`` of the packs comparison (fixed: recency must not differ between sides)
AS_OF = 1_800_000_000


def warm(root: str, tasks: list[str]) -> dict[str, list[float]]:
    from codelibrarian.api import Librarian

    times: list[float] = []
    cpu: list[float] = []
    with Librarian(root) as lib:
        lib.compose("warm the caches", budget=BUDGET, use_cache=False)
        for task in tasks:
            start, start_cpu = time.perf_counter(), time.process_time()
            lib.compose(task, budget=BUDGET, use_cache=False)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    return {"wall": times, "cpu": cpu}


def packs(root: str, jobs: list[tuple[str, int, str | None]]) -> list[dict[str, object]]:
    from codelibrarian.api import Librarian

    out: list[dict[str, object]] = []
    with Librarian(root) as lib:
        lib.compose("warm the caches", budget=BUDGET, use_cache=False, record=False)
        for task, budget, diff in jobs:
            r = lib.compose(task, budget=budget, use_cache=False, as_of=AS_OF, diff_text=diff)
            out.append(
                {
                    "text": hashlib.sha256(r.text.encode()).hexdigest(),
                    "cache_key": r.cache_key,
                    "decision": r.decision_id,
                    "artifacts": [a.id for a in r.artifacts],
                    "candidates": r.candidate_count,
                }
            )
    return out


def edit_loop(root: Path, rounds: int, files: list[str], task: str) -> dict[str, list[float]]:
    from codelibrarian.api import Librarian

    present = [f for f in files if (root / f).exists()]
    edited: list[float] = []
    unchanged: list[float] = []
    with Librarian(root) as lib:
        lib.compose(task, budget=BUDGET, use_cache=False)
        for i in range(rounds):
            with open(root / present[i % len(present)], "a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef _bench_edit_{os.getpid()}_{i}():\n    return {i}\n")
            start = time.perf_counter()
            lib.compose(task, budget=BUDGET, use_cache=False)
            edited.append(time.perf_counter() - start)
            start = time.perf_counter()
            lib.compose(task, budget=BUDGET, use_cache=False)
            unchanged.append(time.perf_counter() - start)
    return {"edited": edited, "warm": unchanged}


def first_plan(mode: str) -> list[float]:
    started = time.perf_counter()
    from codelibrarian.planning.selector import select
    from codelibrarian.service.planning import matchers
    from codelibrarian.techniques.registry import default_library

    lib = default_library()
    loaded = time.perf_counter()
    pm, cm = matchers(lib, embeddings=mode == "embeddings")
    select("why does checkout fail since Tuesday's deploy", lib, pm, cm)
    done = time.perf_counter()
    return [(done - started) * 1000, (done - loaded) * 1000]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="program", required=True)
    p = sub.add_parser("warm", help="warm compositions in a kept Librarian")
    p.add_argument("root")
    p.add_argument("tasks", type=json.loads)
    p = sub.add_parser("packs", help="what each pack holds, hashed")
    p.add_argument("root")
    p.add_argument("jobs", type=json.loads)
    p = sub.add_parser("edit-loop", help="compose after an edit, and again unchanged")
    p.add_argument("root", type=Path)
    p.add_argument("rounds", type=int)
    p.add_argument("files", type=lambda s: s.split(","))
    p.add_argument("task")
    p = sub.add_parser("first-plan", help="a fresh process's first pattern selection")
    p.add_argument("mode", choices=("keywords", "embeddings"))
    args = ap.parse_args(argv)
    if args.program == "warm":
        got: object = warm(args.root, args.tasks)
    elif args.program == "packs":
        got = packs(args.root, args.jobs)
    elif args.program == "edit-loop":
        got = edit_loop(args.root, args.rounds, args.files, args.task)
    else:
        got = first_plan(args.mode)
    sys.stdout.write(json.dumps(got) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
