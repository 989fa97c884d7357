"""Warm ``compose`` latency: p50/p95 of ``Librarian.compose`` once the index is built.

    python benchmarks/bench_compose.py --repo PATH [--runs 30] [--budget 8000]

Builds (or refreshes) the index first, then composes a fixed list of tasks in one
process, round-robin, with the cache off (``use_cache=False``) so every call does
the whole job: workspace check, git change, sources, policy, selection, render.
``as_of`` is fixed. Wall-clock and CPU time (this process plus its git children)
are both reported, with the 1-minute load average: on a shared machine the wall
clock mostly measures the queue. Prints one JSON line; ``--markdown`` prints a RESULTS.md row.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

from codelibrarian.api import Librarian
from harness.corpus import tracked
from harness.stats import p95

TASKS = (
    "fix the parser so that nested directives keep their options",
    "add a configuration option to disable the search index",
    "the HTML builder writes broken links for images in subdirectories",
    "speed up reading the environment pickle on incremental builds",
    "support type hints in the autodoc signature formatter",
    "translate warning messages in the i18n catalog loader",
)


def _cpu() -> float:
    """CPU seconds of this process and its finished children (git)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, type=Path, help="a git repository")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--markdown", action="store_true", help="a RESULTS.md row, not JSON")
    args = ap.parse_args(argv)
    root = args.repo.resolve()
    files = len(tracked(root))
    warnings.simplefilter("ignore", DeprecationWarning)
    lib = Librarian(root)
    t0 = time.perf_counter()
    lib.index()
    index_s = time.perf_counter() - t0
    as_of = 2_000_000_000
    # first call pays imports, tokenizer load and graph caches: reported apart
    t0 = time.perf_counter()
    lib.compose(TASKS[0], budget=args.budget, as_of=as_of, use_cache=False, record=False)
    first_ms = (time.perf_counter() - t0) * 1000
    times: list[float] = []
    cpu: list[float] = []
    for i in range(args.runs):
        task = TASKS[i % len(TASKS)]
        c0, t0 = _cpu(), time.perf_counter()
        result = lib.compose(task, budget=args.budget, as_of=as_of, use_cache=False, record=False)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((_cpu() - c0) * 1000)
        assert result.tokens <= args.budget
    cached: list[float] = []
    for task in TASKS:
        lib.compose(task, budget=args.budget, as_of=as_of)
        t0 = time.perf_counter()
        lib.compose(task, budget=args.budget, as_of=as_of)
        cached.append((time.perf_counter() - t0) * 1000)
    lib.close()
    out = {
        "repo": root.name,
        "files": files,
        "budget": args.budget,
        "runs": args.runs,
        "index_refresh_s": round(index_s, 2),
        "first_ms": round(first_ms),
        "p50_ms": round(statistics.median(times)),
        "p95_ms": round(p95(times)),
        "max_ms": round(max(times)),
        "cpu_p50_ms": round(statistics.median(cpu)),
        "cpu_p95_ms": round(p95(cpu)),
        "load_avg_1m": round(os.getloadavg()[0], 1),
        "cache_hit_p50_ms": round(statistics.median(cached)),
    }
    if args.markdown:
        print(
            f"| {out['repo']} | {files} | {args.budget} | {args.runs} | {out['p50_ms']} | "
            f"{out['p95_ms']} | {out['cpu_p50_ms']} | {out['cpu_p95_ms']} | "
            f"{out['cache_hit_p50_ms']} | {out['first_ms']} | {out['load_avg_1m']} |"
        )
    else:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
