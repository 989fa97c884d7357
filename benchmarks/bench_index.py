"""Index benchmarks: cold index of the stdlib vs Universal Ctags, a second checkout,
incremental update, memory.

    .venv/bin/python benchmarks/bench_index.py [--runs 3] [--edits 10] [--workers N]

* cold: the stdlib's ``.py`` files (``sysconfig.get_paths()["stdlib"]``, without
  site-packages) are copied into a temp folder; ``ctags -L filelist -f out`` and
  ``librarian index --json`` (a fresh process, empty index, an empty per-user
  parse cache of its own) run on the same file list, alternately, ``--runs``
  times; medians reported. Beside them, the floor: ``parse_floor.py`` parses the
  same files with tree-sitter alone (and with our tags queries), a process per
  core, keeping nothing.
* second checkout: the copy becomes a git repository with two commits (the
  second edits 2% of the files); a clone at the new commit is indexed, then a
  second clone at the old commit is indexed with the same per-user cache (what a
  second clone, a ``git worktree add`` or a branch switch costs), ``--runs`` times.
* peak memory: the largest sum of RSS, and of PSS (shared pages counted once),
  over the indexing process and its pool workers, sampled every 20 ms from /proc.
* incremental: in one warm process, edit one file and re-index, ``--edits`` times,
  both with ``update_paths`` (what ``--watch`` does) and with a full
  ``index_workspace`` (re-scan of every file's size/mtime).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.corpus import copy_stdlib, git
from harness.procs import BENCHMARKS, PYTHON, fresh_cache_env, run_measured
from harness.stats import load_average


def second_checkout(work: Path, rels: list[str], runs: int) -> list[float]:
    """Seconds to index a second clone at another commit, its sibling indexed first."""
    origin = work.parent / "origin"
    shutil.rmtree(origin, ignore_errors=True)
    shutil.copytree(work, origin, ignore=shutil.ignore_patterns(".librarian", "ctags.out"))
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "old")
    for rel in rels[::50]:  # every 50th file: 2%
        with open(origin / rel, "a", encoding="utf-8") as fh:
            fh.write("\n\ndef _bench_added() -> int:\n    return 1\n")
    git(origin, "commit", "-q", "-a", "-m", "new: 2% of the files edited")
    times: list[float] = []
    for i in range(runs):
        env = fresh_cache_env(work.parent, f"second-{i}")
        first, second = work.parent / f"first-{i}", work.parent / f"second-{i}"
        for clone in (first, second):
            shutil.rmtree(clone, ignore_errors=True)
            git(work.parent, "clone", "-q", str(origin), str(clone))
        git(second, "checkout", "-q", "HEAD~1")
        run_measured([PYTHON, "-m", "codelibrarian", "index", str(first), "--json"], first, env)
        got = run_measured(
            [PYTHON, "-m", "codelibrarian", "index", str(second), "--json"], second, env
        )
        wall, doc = got.wall, json.loads(got.stdout)
        print(
            f"second checkout {i + 1}: {wall:.2f}s (seeded {doc['seeded']}, "
            f"parsed {doc['parsed']}, cache hits {doc['cache_hits']})"
        )
        times.append(wall)
        for clone in (first, second):
            shutil.rmtree(clone, ignore_errors=True)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="cold index and second checkout runs")
    ap.add_argument("--edits", type=int, default=10, help="one-file updates timed")
    ap.add_argument("--workers", type=int, default=0, help="[index] workers (0: the default)")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-index-")) / "stdlib"
    rels, total_bytes = copy_stdlib(work)
    (work / "filelist").write_text("\n".join(rels) + "\n", encoding="utf-8")
    # the file list is the same for both tools: keep the index from reading "filelist"
    (work / ".librarianignore").write_text("filelist\nctags.out\n", encoding="utf-8")
    print(f"stdlib: {len(rels)} .py files, {total_bytes / 1e6:.1f} MB, copied to {work}")
    print(f"cores: {os.cpu_count()}; load average before: {load_average():.2f}")

    floor_cmd = [PYTHON, str(BENCHMARKS / "parse_floor.py"), str(work), "filelist"]
    parse_times: list[float] = []
    query_times: list[float] = []
    ctags_times: list[float] = []
    ours_times: list[float] = []
    ctags_cpu: list[float] = []
    ours_cpu: list[float] = []
    ctags_peaks: list[int] = []
    ours_peaks: list[int] = []
    ours_pss: list[int] = []
    stats: dict[str, Any] = {}
    env_cmd = [PYTHON, "-m", "codelibrarian", "index", str(work), "--json"]
    if args.workers:
        (work / "librarian.toml").write_text(f"[index]\nworkers = {args.workers}\n")
    for i in range(args.runs):
        ctags = run_measured(["ctags", "-L", "filelist", "-f", "ctags.out"], work)
        ctags_times.append(ctags.wall)
        ctags_cpu.append(ctags.cpu)
        ctags_peaks.append(ctags.rss_kib)
        shutil.rmtree(work / ".librarian", ignore_errors=True)
        parse_times.append(run_measured(floor_cmd, work).wall)
        query_times.append(run_measured([*floor_cmd, "--queries"], work).wall)
        ours = run_measured(env_cmd, work, fresh_cache_env(work.parent, str(i)))
        ours_times.append(ours.wall)
        ours_cpu.append(ours.cpu)
        ours_peaks.append(ours.rss_kib)
        ours_pss.append(ours.pss_kib)
        stats = json.loads(ours.stdout)
        print(
            f"run {i + 1}: ctags {ctags_times[-1]:.2f}s, tree-sitter parse only "
            f"{parse_times[-1]:.2f}s, parse + tags queries {query_times[-1]:.2f}s, "
            f"librarian {ours.wall:.2f}s, peak RSS {ours.rss_kib / 1024:.0f} MiB, "
            f"PSS {ours.pss_kib / 1024:.0f} MiB"
        )
    tags = sum(
        1
        for line in (work / "ctags.out").read_text(errors="replace").splitlines()
        if not line.startswith("!")
    )
    ct, ou = statistics.median(ctags_times), statistics.median(ours_times)
    print(
        f"\ncold index, median of {args.runs}: ctags {ct:.2f}s ({tags} tags); librarian {ou:.2f}s "
        f"-> {ou / ct:.1f}x ctags"
    )
    pt, qt = statistics.median(parse_times), statistics.median(query_times)
    print(
        f"floor (same files, a process per core, nothing kept): tree-sitter parse only "
        f"{pt:.2f}s -> {pt / ct:.1f}x ctags; parse + tags queries {qt:.2f}s -> {qt / ct:.1f}x"
    )
    cc, oc = statistics.median(ctags_cpu), statistics.median(ours_cpu)
    print(
        f"cpu seconds (user+sys incl. workers), median: ctags {cc:.2f}s; librarian {oc:.2f}s "
        f"-> {oc / cc:.1f}x ctags"
    )
    print(
        f"librarian peak memory incl. workers: median RSS sum "
        f"{statistics.median(ours_peaks) / 1024:.0f} MiB, PSS sum "
        f"{statistics.median(ours_pss) / 1024:.0f} MiB "
        f"(ctags {statistics.median(ctags_peaks) / 1024:.0f} MiB)"
    )
    seconds = second_checkout(work, rels, args.runs)
    sc = statistics.median(seconds)
    print(
        f"second checkout at another commit, median of {args.runs}: {sc:.2f}s "
        f"-> {sc / ou * 100:.0f}% of a cold index"
    )
    keys = (
        "files",
        "symbols",
        "references",
        "imports",
        "chunks",
        "edges",
        "workers",
        "parse_errors",
    )
    print(
        "index holds:",
        json.dumps({k: (len(stats[k]) if k == "parse_errors" else stats[k]) for k in keys}),
    )

    # incremental, warm process
    from codelibrarian.config import load_config
    from codelibrarian.index.indexer import index_workspace, update_paths
    from codelibrarian.index.store import open_store

    os.environ["LIBRARIAN_CACHE_DIR"] = str(work.parent / "cache-incremental")
    cfg = load_config(work)
    target = "json/decoder.py" if "json/decoder.py" in rels else rels[len(rels) // 2]
    original = (work / target).read_text(encoding="utf-8")
    index_workspace(work, cfg)  # nothing to do: opens the index
    (work / target).write_text(original + "\n# warm-up edit: loads the grammar and query\n")
    update_paths(work, [target], cfg)
    one, watched, full = [], [], []
    with open_store(work) as store:  # what --watch does: the index stays open
        for i in range(args.edits):
            (work / target).write_text(original + f"\n\ndef _bench_watch_{i}():\n    return {i}\n")
            t0 = time.perf_counter()
            res = update_paths(work, [target], cfg, store=store)
            watched.append(time.perf_counter() - t0)
            assert res.changed == (target,), res
    for i in range(args.edits):
        (work / target).write_text(original + f"\n\ndef _bench_edit_{i}():\n    return {i}\n")
        t0 = time.perf_counter()
        res = update_paths(work, [target], cfg)
        one.append(time.perf_counter() - t0)
        assert res.changed == (target,), res
        (work / target).write_text(original + f"\n\ndef _bench_again_{i}():\n    return {i}\n")
        t0 = time.perf_counter()
        st = index_workspace(work, cfg)
        full.append(time.perf_counter() - t0)
        assert st.parsed == 1, st

    def ms(xs: list[float]) -> str:
        return (
            f"median {statistics.median(xs) * 1000:.1f} ms "
            f"(min {min(xs) * 1000:.1f}, max {max(xs) * 1000:.1f})"
        )

    print(f"incremental ({target}, {args.edits} edits each):")
    print(f"  update_paths, index kept open (--watch): {ms(watched)}")
    print(f"  update_paths, opening the index:         {ms(one)}")
    print(f"  index_workspace (full rescan):           {ms(full)}")
    print(f"load average after: {load_average():.2f}")
    shutil.rmtree(work.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
