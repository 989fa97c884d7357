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
import ctypes
import functools
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def stdlib_files() -> tuple[Path, list[str]]:
    base = Path(sysconfig.get_paths()["stdlib"])
    rels = sorted(
        p.relative_to(base).as_posix()
        for p in base.rglob("*.py")
        if "site-packages" not in p.parts and "dist-packages" not in p.parts and p.is_file()
    )
    return base, rels


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


def _tree_memory_kb(pid: int) -> tuple[int, int]:
    """``(RSS, PSS)`` in KiB summed over ``pid`` and every process below it.

    A child that shares its parent's address space (``vfork``) is not counted again.
    """
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


#: peak PSS of the last ``run_measured`` call (KiB)
LAST_PSS = [0]


def run_measured(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user+sys, incl. workers), peak tree RSS (KiB), stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = peak_pss = 0
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss
        while not done.is_set():
            rss, pss = _tree_memory_kb(proc.pid)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            time.sleep(0.02)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    t.join()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    LAST_PSS[0] = peak_pss
    return wall, cpu, peak, out.decode()


def fresh_cache_env(parent: Path, name: str) -> dict[str, str]:
    """The environment of a librarian run with an empty per-user cache of its own."""
    folder = parent / f"cache-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    return {**os.environ, "LIBRARIAN_CACHE_DIR": str(folder), "LIBRARIAN_NO_RESIDENT": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


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
        wall, _, _, out = run_measured(
            [PYTHON, "-m", "codelibrarian", "index", str(second), "--json"], second, env
        )
        doc = json.loads(out)
        print(
            f"second checkout {i + 1}: {wall:.2f}s (seeded {doc['seeded']}, "
            f"parsed {doc['parsed']}, cache hits {doc['cache_hits']})"
        )
        times.append(wall)
        for clone in (first, second):
            shutil.rmtree(clone, ignore_errors=True)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--workers", type=int, default=0)
    args = ap.parse_args()

    base, rels = stdlib_files()
    work = Path(tempfile.mkdtemp(prefix="bench-index-")) / "stdlib"
    work.mkdir()
    total_bytes = 0
    for rel in rels:
        dst = work / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base / rel, dst)
        total_bytes += dst.stat().st_size
    (work / "filelist").write_text("\n".join(rels) + "\n", encoding="utf-8")
    # the file list is the same for both tools: keep the index from reading "filelist"
    (work / ".librarianignore").write_text("filelist\nctags.out\n", encoding="utf-8")
    print(f"stdlib: {len(rels)} .py files, {total_bytes / 1e6:.1f} MB, copied to {work}")
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()}")

    floor_cmd = [PYTHON, str(REPO / "benchmarks" / "parse_floor.py"), str(work), "filelist"]
    parse_times: list[float] = []
    query_times: list[float] = []
    ctags_times, ours_times, ours_peaks, ctags_peaks, ours_pss = [], [], [], [], []
    ctags_cpu, ours_cpu = [], []
    stats: dict[str, object] = {}
    env_cmd = [PYTHON, "-m", "codelibrarian", "index", str(work), "--json"]
    if args.workers:
        (work / "librarian.toml").write_text(f"[index]\nworkers = {args.workers}\n")
    for i in range(args.runs):
        wall, cpu, peak, _ = run_measured(["ctags", "-L", "filelist", "-f", "ctags.out"], work)
        ctags_times.append(wall)
        ctags_cpu.append(cpu)
        ctags_peaks.append(peak)
        shutil.rmtree(work / ".librarian", ignore_errors=True)
        parse_times.append(run_measured(floor_cmd, work)[0])
        query_times.append(run_measured([*floor_cmd, "--queries"], work)[0])
        wall, cpu, peak, out = run_measured(env_cmd, work, fresh_cache_env(work.parent, str(i)))
        ours_times.append(wall)
        ours_cpu.append(cpu)
        ours_peaks.append(peak)
        ours_pss.append(LAST_PSS[0])
        stats = json.loads(out)
        print(
            f"run {i + 1}: ctags {ctags_times[-1]:.2f}s, tree-sitter parse only "
            f"{parse_times[-1]:.2f}s, parse + tags queries {query_times[-1]:.2f}s, "
            f"librarian {wall:.2f}s, peak RSS {peak / 1024:.0f} MiB, "
            f"PSS {LAST_PSS[0] / 1024:.0f} MiB"
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
        json.dumps(
            {
                k: (len(stats[k]) if k == "parse_errors" else stats[k])  # type: ignore[arg-type]
                for k in keys
            }
        ),
    )

    # incremental, warm process
    sys.path.insert(0, str(REPO / "src"))
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
    print(f"load average after: {os.getloadavg()}")
    shutil.rmtree(work.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
