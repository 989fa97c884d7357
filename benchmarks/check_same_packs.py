"""Check that this checkout composes byte-identical packs to another checkout's ``src/``.

    .venv/bin/python benchmarks/check_same_packs.py --repo PATH --baseline-src OTHER/src \\
        [--tasks 10] [--diffs 4] [--budgets 2000,8000]

A speed change to ranking, spans or digests must not change what a pack holds. Each
side runs in its own process (``src`` first on ``PYTHONPATH``, as ``bench_scale.py``
does) on the same index, with a fixed ``as_of`` and the cache off, and composes the
same list: task sentences built from the repository's folder names, and diff-mode
tasks whose diff adds a line to one of its source files. Per pack it compares the
rendered text, the cache key (which covers the candidate digest), the decision id,
the packed artifact ids and the candidate count. Prints the number of packs and the
first differences; exits 1 when any pack differs.

``--baseline-repo``: the baseline side composes in this copy of ``--repo`` (same files,
same commit, its own index) instead: for a change that moves the index schema, which
an older ``src/`` refuses to open. Pack texts name files relative to the root, so the
two copies compose comparable packs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_scale import run_side, tasks_for  # noqa: E402

_SIDE = r"""
import hashlib, json, os, sys
os.environ["LIBRARIAN_NO_RESIDENT"] = "1"
from codelibrarian.api import Librarian
root, jobs = sys.argv[1], json.loads(sys.argv[2])
out = []
with Librarian(root) as lib:
    lib.compose("warm the caches", budget=8000, use_cache=False, record=False)
    for task, budget, diff in jobs:
        r = lib.compose(task, budget=budget, use_cache=False, as_of=1_800_000_000, diff_text=diff)
        out.append({
            "text": hashlib.sha256(r.text.encode()).hexdigest(),
            "cache_key": r.cache_key,
            "decision": r.decision_id,
            "artifacts": [a.id for a in r.artifacts],
            "candidates": r.candidate_count,
        })
print(json.dumps(out))
"""

_CODE = (".py", ".go", ".js", ".ts", ".java", ".rs", ".c", ".rb")


def _jobs(repo: Path, n_tasks: int, n_diffs: int, budgets: list[int]) -> list[list[object]]:
    files = subprocess.run(
        ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    diffs: list[tuple[str, str]] = []
    code = [f for f in files if f.endswith(_CODE)]
    for rel in code[:: max(1, len(code) // max(1, n_diffs))]:
        lines = (repo / rel).read_text(errors="replace").splitlines()
        if len(diffs) >= n_diffs or len(lines) < 12:
            continue
        at = len(lines) // 2
        body = f"--- a/{rel}\n+++ b/{rel}\n@@ -{at + 1},1 +{at + 1},2 @@\n {lines[at]}\n"
        diffs.append((rel, body + "+    retry_count = compute_timeout(handler)\n"))
    jobs: list[list[object]] = []
    for budget in budgets:
        jobs += [[task, budget, None] for task in tasks_for(files, n_tasks, 20)]
        jobs += [[f"change {rel}", budget, body] for rel, body in diffs]
    return jobs


def _side(repo: Path, src: Path, jobs: list[list[object]]) -> list[dict[str, object]]:
    return list(run_side(_SIDE, [str(repo), json.dumps(jobs)], src, f"compose with {src}"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--baseline-src", required=True, type=Path)
    ap.add_argument("--tasks", type=int, default=10)
    ap.add_argument("--diffs", type=int, default=4)
    ap.add_argument("--budgets", default="2000,8000")
    ap.add_argument("--baseline-repo", type=Path, help="a copy of --repo for the baseline side")
    args = ap.parse_args()
    jobs = _jobs(args.repo, args.tasks, args.diffs, [int(b) for b in args.budgets.split(",")])
    this = _side(args.repo, REPO / "src", jobs)
    base = _side(args.baseline_repo or args.repo, args.baseline_src.resolve(), jobs)
    differ = [i for i, (a, b) in enumerate(zip(this, base, strict=True)) if a != b]
    print(f"{len(jobs)} packs ({sum(1 for j in jobs if j[2])} diff mode): {len(differ)} differ")
    for i in differ[:5]:
        task, budget, _ = jobs[i]
        fields = sorted(k for k in this[i] if this[i][k] != base[i][k])
        print(f"  differs: {task!r} at {budget} tokens: {', '.join(fields)}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
