"""Freshness check of a kept session: inotify watch against git, alternated in one process.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_freshness.py REPO [--calls 30]

Two ``WorkspaceSession``s on the same indexed git repository: one may arm its quiet
watch (``service/quietwatch.py``), the other is kept to ``git status`` (with the tree
stamp, as before the watch). After four warm-up calls each, ``workspace_signature()``
is timed ``--calls`` times on each side, alternating which goes first; both must give
the same signature at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from codelibrarian.service.workspace import WorkspaceSession


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    on, off = WorkspaceSession(args.repo), WorkspaceSession(args.repo)
    off._watchable = False
    for side in (on, off):
        for _ in range(4):
            side.workspace_signature()
    if on._quiet is None:
        raise SystemExit("the watch did not arm (not Linux, or the tree moved while warming)")
    times: dict[str, list[float]] = {"watch": [], "git": []}
    for i in range(args.calls):
        order = (("watch", on), ("git", off)) if i % 2 == 0 else (("git", off), ("watch", on))
        for name, side in order:
            start = time.perf_counter()
            side.workspace_signature()
            times[name].append(time.perf_counter() - start)
    if on.workspace_signature() != off.workspace_signature():
        raise SystemExit("the two sides disagree")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    for name, values in times.items():
        values.sort()
        p95 = values[round(0.95 * (len(values) - 1))]
        print(f"{name}: p50 {statistics.median(values) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms")


if __name__ == "__main__":
    main()
