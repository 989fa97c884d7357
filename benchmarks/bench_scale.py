"""The scale curve: index time, peak memory and warm compose latency from 250 to 20,000 files.

    .venv/bin/python benchmarks/bench_scale.py --source BARE_GIT_DIR \\
        [--sizes 250,1000,5000,20000] [--calls 20] [--seed 20] [--baseline-src OTHER/src]

``--source`` is a git repository (a bare mirror is fine) of a large multi-language
monorepo; its HEAD tree is exported once. Give ``--source`` several times to build the
monorepo from several repositories: each HEAD tree is exported under a folder named
after its repository (the folder above ``.git``/``repo`` for a mirror).

Each size is a seeded random sample of the tracked files, nested (the 1,000 hold the
250), so the mix of languages stays the same along the curve; each sample is committed
to its own git repository.

For each size: a cold ``librarian index --json`` (fresh process, empty per-user
cache): wall, CPU (user+sys incl. workers), peak RSS and PSS summed over the
process and its workers; then ``--calls`` warm compositions in one process (a
``Librarian`` kept open, as the resident server keeps it; cache off, so each call
composes for real; tasks built from the sample's own directory names), p50 and p95.

``--baseline-src``: the warm compositions (wall and CPU time of each call) also run
with another checkout's ``src/`` first on ``PYTHONPATH`` (e.g. main's), on the same
index (it must read the same schema), alternated with this checkout's in two rounds
of half the calls each: an A/B in the same minutes. Each side runs in its own
process, ``Librarian`` kept open.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.corpus import git, tasks_for
from harness.procs import PYTHON, fresh_cache_env, run_measured, run_side
from harness.stats import load_average, markdown_table, median_ms, p95


def folder_name(source: Path) -> str:
    """``/x/owner+name/repo``, ``/x/name.git`` and ``/x/name/.git`` all give ``name``."""
    parts = [p for p in source.parts if p not in (".git", "repo")]
    return parts[-1].removesuffix(".git").split("+")[-1]


def export(source: Path, target: Path) -> list[str]:
    """Write HEAD's regular files under ``target`` (blobs absent from a partial mirror are
    left out); returns their paths, sorted."""
    listed = subprocess.run(
        ["git", "--git-dir", str(source), "ls-tree", "-r", "-z", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    entries = []
    for item in listed.decode("utf-8", "surrogateescape").split("\0"):
        if not item:
            continue
        meta, path = item.split("\t", 1)
        mode, kind, oid = meta.split()
        if kind == "blob" and mode in ("100644", "100755"):
            entries.append((path, oid))
    proc = subprocess.Popen(
        ["git", "--git-dir", str(source), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    written: list[str] = []
    for path, oid in entries:
        proc.stdin.write(oid.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue  # missing from this mirror
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the content
        dst = target / path
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        written.append(path)
    proc.stdin.close()
    proc.wait()
    return sorted(written)


def sample(tree: Path, files: list[str], target: Path) -> None:
    for rel in files:
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / rel, dst, follow_symlinks=False)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", f"{len(files)} files")


def warm_compose(root: Path, tasks: list[str], src: Path | None = None) -> dict[str, list[float]]:
    """Warm compositions in a fresh process (``src`` first on PYTHONPATH when given, else
    this checkout's), a ``Librarian`` kept open as the resident server keeps it: the wall
    and CPU seconds of each call."""
    got: dict[str, list[float]] = run_side("warm", [str(root), json.dumps(tasks)], src, "warm")
    return got


def warm_ab(
    root: Path, tasks: list[str], baseline: Path | None
) -> dict[str, dict[str, list[float]]]:
    """Per side (``this``, and ``baseline`` when given), the wall and CPU seconds of each
    warm call; with a baseline the sides alternate in two rounds of half the tasks."""
    if baseline is None:
        return {"this": warm_compose(root, tasks)}
    half = (len(tasks) + 1) // 2
    out: dict[str, dict[str, list[float]]] = {
        side: {"wall": [], "cpu": []} for side in ("this", "baseline")
    }
    for part, order in ((tasks[:half], ("this", "baseline")), (tasks[half:], ("baseline", "this"))):
        for side in order:
            got = warm_compose(root, part, None if side == "this" else baseline)
            for key in ("wall", "cpu"):
                out[side][key] += got[key]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, action="append", required=True, help="a git repository")
    ap.add_argument("--sizes", default="250,1000,5000,20000")
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src/ to alternate with")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    print(f"cores: {os.cpu_count()}; load average before: {load_average():.2f}")
    tree = work / "tree"
    files: list[str] = []
    for source in args.source:
        prefix = folder_name(source.resolve()) if len(args.source) > 1 else ""
        got = export(source.resolve(), tree / prefix)
        files += [f"{prefix}/{f}" if prefix else f for f in got]
        print(f"source: {source} HEAD, {len(got)} files" + (f" under {prefix}/" if prefix else ""))
    files.sort()
    order = files[:]
    random.Random(args.seed).shuffle(order)
    print(f"{len(files)} files in all")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        chosen = sorted(order[:size])
        root = work / f"n{size}"
        sample(tree, chosen, root)
        env = fresh_cache_env(work, f"n{size}")
        cold = run_measured(
            [PYTHON, "-m", "codelibrarian", "index", str(root), "--json"], root, env
        )
        doc = json.loads(cold.stdout)
        os.environ["LIBRARIAN_CACHE_DIR"] = env["LIBRARIAN_CACHE_DIR"]
        warm = warm_ab(root, tasks_for(chosen, args.calls, args.seed), args.baseline_src)
        times, cpu = warm["this"]["wall"], warm["this"]["cpu"]
        if "baseline" in warm:
            base, bcpu = warm["baseline"]["wall"], warm["baseline"]["cpu"]
            print(
                f"  baseline warm compose at {size}: p50 {median_ms(base):.0f} ms,"
                f" p95 {p95(base) * 1000:.0f} ms (CPU p50 {median_ms(bcpu):.0f} ms,"
                f" p95 {p95(bcpu) * 1000:.0f} ms; {len(base)} calls)",
                flush=True,
            )
        row = {
            "files": size,
            "indexed": doc["files"],
            "skipped": sum(doc["skipped"].values()),
            "chunks": doc["chunks"],
            "index_s": round(cold.wall, 2),
            "cpu_s": round(cold.cpu, 2),
            "ms_per_file": round(cold.wall * 1000 / size, 1),
            "peak_rss_mib": round(cold.rss_kib / 1024),
            "peak_pss_mib": round(cold.pss_kib / 1024),
            "compose_p50_ms": round(median_ms(times)),
            "compose_p95_ms": round(p95(times) * 1000),
            "compose_cpu_p50_ms": round(median_ms(cpu)),
            "compose_cpu_p95_ms": round(p95(cpu) * 1000),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
        shutil.rmtree(root, ignore_errors=True)
    columns = {
        "files": "files",
        "indexed": "indexed",
        "skipped": "skipped",
        "index_s": "index s",
        "cpu_s": "CPU s",
        "ms_per_file": "ms/file",
        "peak_rss_mib": "peak RSS MiB",
        "peak_pss_mib": "peak PSS MiB",
        "compose_p50_ms": "compose p50 ms",
        "compose_p95_ms": "compose p95 ms",
    }
    cells = [[f"{r[k]:,}" if isinstance(r[k], int) else r[k] for k in columns] for r in rows]
    print("\n" + markdown_table(list(columns.values()), cells, right=range(len(columns))))
    print(f"load average after: {load_average():.2f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
