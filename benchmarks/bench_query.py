"""Warm query latency of the six-stage pipeline on a ~1,800-file repository.

The repository is a git copy of the Python standard library found at
``sysconfig.get_paths()["stdlib"]`` (site-packages excluded), indexed once with
the real indexer. Then one ``QuerySession`` (index open, capabilities probed,
graph loaded) answers a warm-up query and ``--rounds`` x 24 timed queries;
per-stage times come from an observer (``perf_counter_ns`` at stage start and
completion), the total from around ``QuerySession.run``.

    .venv/bin/python benchmarks/bench_query.py [--work /tmp/bench_query] [--rounds 1]
        [--dense] [--depth L1]

``--dense`` adds dense retrieval with the `semantic` extra (the vector sync is
timed separately). Prints a Markdown table to paste into RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from codelibrarian.index.indexer import index_workspace
from codelibrarian.query import QuerySession
from codelibrarian.query.types import STAGE_NAMES

INTENTS = (
    "parse command line arguments with subcommands",
    "http request headers and status codes",
    "json decode error position",
    "thread pool executor shutdown",
    "compress a file with gzip",
    "email message mime multipart attachment",
    "sqlite connection cursor execute",
    "regular expression compile flags",
    "asyncio event loop run until complete",
    "extract members from a tar archive",
    "url quote and unquote",
    "logging handler that rotates files",
    "csv writer dialect quoting",
    "timezone aware datetime utc offset",
    "pickle protocol load and dump",
    "subprocess pipe communicate timeout",
    "unittest mock patch object",
    "decimal rounding context precision",
    "xml element tree parse",
    "read members of a zip file",
    "tcp socket server request handler",
    "sha256 digest of bytes",
    "read ini file sections",
    "copy a directory tree",
)


def make_repo(work: Path) -> Path:
    root = work / "stdlib"
    if (root / ".git").exists():
        return root
    src = Path(sysconfig.get_paths()["stdlib"])
    count = 0
    for f in sorted(src.rglob("*.py")):
        rel = f.relative_to(src)
        if "site-packages" in rel.parts or "__pycache__" in rel.parts:
            continue
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dst)
        count += 1
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "stdlib"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
    print(f"copied {count} files into {root}", file=sys.stderr)
    return root


class Timer:
    """Observer recording each stage's wall time and CPU time in microseconds.

    CPU time (``thread_time``; the pipeline runs on one thread, SQLite included)
    is what the stage would take on an idle machine; wall time on a shared,
    overloaded one is larger.
    """

    def __init__(self) -> None:
        self.start: dict[str, tuple[int, int]] = {}
        self.us: dict[str, int] = {}
        self.cpu_us: dict[str, int] = {}

    def on_stage_start(self, stage: str, input_summary: str, estimate: Any) -> None:
        self.start[stage] = (time.perf_counter_ns(), time.thread_time_ns())

    def on_stage_progress(self, stage: str, permille: int, message: str) -> None:
        return None

    def on_stage_complete(self, stage: str, result: Any, output_summary: str) -> None:
        wall, cpu = self.start[stage]
        self.us[stage] = (time.perf_counter_ns() - wall) // 1000
        self.cpu_us[stage] = (time.thread_time_ns() - cpu) // 1000

    def on_stage_error(self, stage: str, error: BaseException, localized: Any = None) -> None:
        raise RuntimeError(f"stage {stage} failed in the benchmark: {error}")

    def on_stage_skipped(self, stage: str, reason: str) -> None:
        self.us[stage] = 0
        self.cpu_us[stage] = 0


def pct(values: list[int], p: int) -> int:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, (len(ordered) * p + 99) // 100 - 1))
    return ordered[k]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_query"), help="scratch folder")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of the 24 intents")
    ap.add_argument("--dense", action="store_true", help="add dense retrieval")
    ap.add_argument("--depth", default="L1")
    args = ap.parse_args(argv)
    root = make_repo(args.work)

    t0 = time.perf_counter()
    stats = index_workspace(root)
    print(
        f"index: {stats.files} files, {stats.parsed} parsed, {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )

    features: tuple[str, ...] = ("bm25", "dense", "graph", "scoring", "rerank", "defeaters")
    if not args.dense:
        features = tuple(f for f in features if f != "dense")
    t0 = time.perf_counter()
    session = QuerySession(root, features=features, embedder="auto" if args.dense else None)
    open_s = time.perf_counter() - t0
    print(f"session open (probe + graph + vector sync): {open_s:.2f} s", file=sys.stderr)
    if session.sync_stats is not None:
        print(f"vector sync: {session.sync_stats.to_dict()}", file=sys.stderr)
    try:
        session.run("warm up the caches", depth=args.depth, as_of=1_767_225_600)
        per_stage: dict[str, list[int]] = {s: [] for s in STAGE_NAMES}
        per_stage_cpu: dict[str, list[int]] = {s: [] for s in STAGE_NAMES}
        totals: list[int] = []
        totals_cpu: list[int] = []
        for _ in range(args.rounds):
            for intent in INTENTS:
                timer = Timer()
                t, c = time.perf_counter_ns(), time.thread_time_ns()
                res = session.run(intent, depth=args.depth, as_of=1_767_225_600, observer=timer)
                totals.append((time.perf_counter_ns() - t) // 1000)
                totals_cpu.append((time.thread_time_ns() - c) // 1000)
                if res.status != "completed":
                    raise SystemExit(f"query {intent!r} ended {res.status}")
                for s in STAGE_NAMES:
                    per_stage[s].append(timer.us.get(s, 0))
                    per_stage_cpu[s].append(timer.cpu_us.get(s, 0))
    finally:
        session.close()

    mode = "BM25 + graph" + (" + dense" if args.dense else "") + f", depth {args.depth}"
    print(f"\n{len(totals)} warm queries, {stats.files} files ({mode}); times in ms\n")
    print("| stage | wall p50 | wall p95 | wall max | CPU p50 | CPU p95 |")
    print("|---|---:|---:|---:|---:|---:|")

    def row(name: str, wall: list[int], cpu: list[int]) -> str:
        return (
            f"| {name} | {pct(wall, 50) / 1000:.1f} | {pct(wall, 95) / 1000:.1f} "
            f"| {max(wall) / 1000:.1f} | {pct(cpu, 50) / 1000:.1f} | {pct(cpu, 95) / 1000:.1f} |"
        )

    for s in STAGE_NAMES:
        print(row(s, per_stage[s], per_stage_cpu[s]))
    print(row("**total**", totals, totals_cpu))
    print(
        f"\nmean total {statistics.mean(totals) / 1000:.1f} ms wall, "
        f"{statistics.mean(totals_cpu) / 1000:.1f} ms CPU; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
