"""Warm compose, this checkout against another ``src/``, each side on its own copy.

    .venv/bin/python benchmarks/warm_ab.py --root COPY_A --baseline-root COPY_B \\
        --baseline-src OTHER/src [--src THIS/src] [--calls 20] [--seed 20] [--runs 1] [--out FILE]

``bench_scale.py``'s alternation (two rounds, the sides swapped between them; each
side a fresh process with a ``Librarian`` kept open, one warm-up compose, then
distinct tasks from ``harness.corpus.tasks_for``), but each side composes in its own
copy of the sample: the copies hold the same files and index, and neither side finds
the other's per-repository caches (``.librarian/cache``) warm. Prints each side's wall
and CPU p50 / p95 (``harness.stats.p95``: the 19th of 20) and the load average before and
after, and the three slowest calls of each side (wall ms, CPU ms, the task). ``--runs N``
repeats the whole alternation N times and ends with the median over the runs of each
side's wall p95 and p50. ``--out`` keeps every call's times, in order, as JSON (with
``--runs`` above 1, a list: one such document a run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from harness.corpus import tasks_for, tracked
from harness.procs import REPO, run_side
from harness.stats import load_average, median_ms, p95


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, type=Path, help="this side's copy of the sample")
    ap.add_argument("--baseline-root", required=True, type=Path, help="the baseline's copy")
    ap.add_argument("--baseline-src", required=True, type=Path, help="the baseline's src/")
    ap.add_argument("--src", type=Path, default=REPO / "src", help="this side's src/")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--runs", type=int, default=1, help="whole alternations")
    ap.add_argument("--out", type=Path, help="every call's times, as JSON")
    args = ap.parse_args(argv)
    tasks = tasks_for(tracked(args.root), args.calls, args.seed)
    sides = {"this": (args.root, args.src), "baseline": (args.baseline_root, args.baseline_src)}
    docs = []
    for run in range(1, args.runs + 1):
        if args.runs > 1:
            print(f"run {run}", flush=True)
        docs.append(one_run(tasks, sides))
    if args.runs > 1:
        for side in ("this", "baseline"):
            p95s = [p95(d["wall"][side]) * 1000 for d in docs]
            p50s = [median_ms(d["wall"][side]) for d in docs]
            print(
                f"{side}: median of {args.runs} runs: wall p95 {statistics.median(p95s):.0f} ms "
                f"({min(p95s):.0f}-{max(p95s):.0f}), wall p50 {statistics.median(p50s):.0f} ms"
            )
    if args.out is not None:
        args.out.write_text(json.dumps(docs[0] if args.runs == 1 else docs), encoding="utf-8")
    return 0


def one_run(tasks: list[str], sides: dict[str, tuple[Path, Path]]) -> dict[str, Any]:
    """One alternation (two rounds, the sides swapped between them); prints its figures."""
    wall: dict[str, list[float]] = {"this": [], "baseline": []}
    cpu: dict[str, list[float]] = {"this": [], "baseline": []}
    load0 = load_average()
    half = (len(tasks) + 1) // 2
    for part, order in ((tasks[:half], ("this", "baseline")), (tasks[half:], ("baseline", "this"))):
        for side in order:
            root, src = sides[side]
            got = run_side("warm", [str(root), json.dumps(part)], src, side)
            wall[side] += got["wall"]
            cpu[side] += got["cpu"]
    load1 = load_average()
    print(f"load average {load0:.1f} -> {load1:.1f}")
    for side in ("this", "baseline"):
        w, c = wall[side], cpu[side]
        print(
            f"{side}: wall p50 {median_ms(w):.0f} p95 {p95(w) * 1000:.0f}; "
            f"cpu p50 {median_ms(c):.0f} p95 {p95(c) * 1000:.0f} ms "
            f"({len(w)} calls)",
            flush=True,
        )
        slow = sorted(range(len(w)), key=lambda k: -w[k])[:3]
        print(
            "  slowest: "
            + "; ".join(f"{w[k] * 1000:.0f}/{c[k] * 1000:.0f} ms {tasks[k][:40]}" for k in slow)
        )
    return {"tasks": tasks, "wall": wall, "cpu": cpu, "load": [load0, load1]}


if __name__ == "__main__":
    sys.exit(main())
