"""Check that this checkout composes byte-identical packs to another checkout's ``src/``.

    .venv/bin/python benchmarks/check_same_packs.py --repo PATH --baseline-src OTHER/src \\
        [--tasks 10] [--diffs 4] [--budgets 2000,8000]

A speed change to ranking, spans or digests must not change what a pack holds. Each
side runs in its own process (``src`` first on ``PYTHONPATH``: ``harness.procs.run_side``)
on the same index, with a fixed ``as_of`` and the cache off, and composes the
same list: task sentences built from the repository's folder names, and diff-mode
tasks whose diff adds a line to one of its source files. Per pack it compares the
rendered text, the cache key (which covers the candidate digest), the decision id,
the packed artifact ids and the candidate count. Prints the number of packs and the
first differences; exits 1 when any pack differs.

``--baseline-repo``: the baseline side composes in this copy of ``--repo`` (same files,
same commit, its own index) instead: for a change that moves the index schema, which
an older ``src/`` refuses to open. Pack texts name files relative to the root, so the
two copies compose comparable packs; ids and cache keys are keyed by the workspace's
secret, so give the copy the same ``.librarian/secret`` (copy the file, mode 0600,
before its first index) or only ``text`` and ``candidates`` can match. Index both
copies before comparing (a first compose on an unindexed copy answers from a partial,
staged index).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.corpus import tasks_for, tracked
from harness.procs import REPO, run_side

_CODE = (".py", ".go", ".js", ".ts", ".java", ".rs", ".c", ".rb")


def _jobs(repo: Path, n_tasks: int, n_diffs: int, budgets: list[int]) -> list[list[object]]:
    files = tracked(repo)
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
    return list(run_side("packs", [str(repo), json.dumps(jobs)], src, f"compose with {src}"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, type=Path, help="an indexed git repository")
    ap.add_argument("--baseline-src", required=True, type=Path, help="another checkout's src/")
    ap.add_argument("--tasks", type=int, default=10, help="task sentences per budget")
    ap.add_argument("--diffs", type=int, default=4, help="diff-mode tasks per budget")
    ap.add_argument("--budgets", default="2000,8000")
    ap.add_argument("--baseline-repo", type=Path, help="a copy of --repo for the baseline side")
    args = ap.parse_args(argv)
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
    sys.exit(main())
