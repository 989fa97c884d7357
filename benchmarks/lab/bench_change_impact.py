"""tp_change_impact on real history: does it name the other files a change needed?

Uses the diff-mode tasks of the history-mined context benchmark (``../shared/bench``:
a real commit C, its parent P, the non-test source files C changed, at least two).
For each task the repository is checked out at P and indexed (incrementally, tasks
in commit order), then C's version of the *first* changed file is written into the
work tree, so the working change is exactly that file's diff, as an agent
mid-change would have it. ``tp_change_impact``'s computation (``impact`` over the
index and the working change, as the builtin step runs it) ranks the affected files;
the score of a task is the share of C's *other* changed files among its top 10.

Baseline, **co-change only**: the files that changed together with the first file
in the same history window the index keeps (its ``cochange`` edges), by weight —
what "files that usually change with this one" alone would name.

Run (task files from a copy of the benchmark; repositories cloned with full history):

    .venv/bin/python benchmarks/lab/bench_change_impact.py \\
        --tasks SCRATCH/ctxbench/tasks --repos-dir SCRATCH/ctxbench/.data/repos \\
        --work SCRATCH/change-impact --names click,httpx,logrus --max-tasks 15

Each repository is cloned (``git clone --shared``) into ``--work`` once; nothing is
written to the source clones.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from codelibrarian.api import Librarian
from codelibrarian.execution.builtins.analysis import impact, inputs_from_store
from codelibrarian.index.store import open_store
from codelibrarian.sources.ranking import is_test_path
from codelibrarian.workspace.git import working_diff

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.stats import machine

TOP = 10


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    out = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, check=True)
    return out.stdout.decode("utf-8", "replace")


def load_tasks(path: Path, max_tasks: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "diff" in r.get("modes", ()) and len(r["gold"]) >= 2]
    rows.sort(key=lambda r: (r["time"], r["id"]))
    if max_tasks and len(rows) > max_tasks:  # evenly over the history, not the newest
        step = len(rows) / max_tasks
        rows = [rows[int(i * step)] for i in range(max_tasks)]
    return rows


def cochange_top(edges: list[tuple[str, str, int]], first: str, files: set[str]) -> list[str]:
    weights: dict[str, int] = {}
    for a, b, w in edges:
        if a == first and b != first and b in files and not is_test_path(b):
            weights[b] = max(weights.get(b, 0), w)
    return sorted(weights, key=lambda p: (-weights[p], p))[:TOP]


def run_task(repo: Path, task: dict[str, Any]) -> dict[str, Any]:
    git(repo, "checkout", "-q", "-f", task["parent"])
    git(repo, "clean", "-fdq", "-e", ".librarian")
    lib = Librarian(repo)
    began = time.perf_counter()
    lib.index()
    index_s = time.perf_counter() - began
    lib.close()
    first, rest = task["gold"][0], set(task["gold"][1:])
    (repo / first).write_bytes(
        subprocess.run(
            ["git", "-C", str(repo), "show", f"{task['commit']}:{first}"],
            capture_output=True,
            check=True,
        ).stdout
    )
    try:
        store = open_store(repo, readonly=True)
        try:
            began = time.perf_counter()
            inputs = inputs_from_store(store)
            out = impact(inputs, working_diff(repo), root=repo)
            impact_s = time.perf_counter() - began
            edges = list(store.edges("cochange"))
            files = set(inputs.files)
        finally:
            store.close()
    finally:
        git(repo, "checkout", "-q", "-f", "--", first)
    named = [a["path"] for a in out["affected"]][:TOP]
    base = cochange_top(edges, first, files)
    return {
        "id": task["id"],
        "rest": len(rest),
        "impact": len(rest & set(named)) / len(rest),
        "cochange": len(rest & set(base)) / len(rest),
        "impact_any": bool(rest & set(named)),
        "cochange_any": bool(rest & set(base)),
        "index_s": index_s,
        "impact_s": impact_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, required=True, help="folder of NAME.jsonl")
    parser.add_argument("--repos-dir", type=Path, required=True, help="full clones, NAME/")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder")
    parser.add_argument("--names", default="click,httpx,logrus")
    parser.add_argument("--max-tasks", type=int, default=15)
    parser.add_argument("--json", type=Path, help="write per-task rows here")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    per_repo: list[tuple[str, list[dict[str, Any]]]] = []
    for name in args.names.split(","):
        repo = args.work / name
        if not repo.exists():
            args.work.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["git", "clone", "-q", "--shared", "--no-checkout",
                 str(args.repos_dir / name), str(repo)],
                check=True,
            )  # fmt: skip
        mine = []
        for task in load_tasks(args.tasks / f"{name}.jsonl", args.max_tasks):
            try:
                mine.append(run_task(repo, task))
            except subprocess.CalledProcessError as exc:
                print(f"skipped {task['id']}: {exc}", file=sys.stderr)
        per_repo.append((name, mine))
        rows.extend(mine)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))

    def line(label: str, rs: list[dict[str, Any]]) -> str:
        n = len(rs)
        if not n:
            return f"| {label} | 0 | | | | | |"
        imp = sum(r["impact"] for r in rs) / n
        co = sum(r["cochange"] for r in rs) / n
        imp_any = sum(r["impact_any"] for r in rs) / n
        co_any = sum(r["cochange_any"] for r in rs) / n
        ms = sorted(r["impact_s"] for r in rs)[n // 2] * 1000
        a, b = f"{imp:.3f}", f"{co:.3f}"
        a, b = (f"**{a}**", b) if imp > co else ((a, f"**{b}**") if co > imp else (a, b))
        return f"| {label} | {n} | {a} | {b} | {imp_any:.2f} | {co_any:.2f} | {ms:.0f} ms |"

    print(f"### tp_change_impact vs co-change only ({time.strftime('%Y-%m-%d')})\n")
    print(f"- machine: {machine()} (shared machine)")
    print(
        "- command: `.venv/bin/python benchmarks/lab/bench_change_impact.py "
        f"--names {args.names} --max-tasks {args.max_tasks} --tasks … --repos-dir … --work …`"
    )
    print(
        f"- tasks: diff-mode tasks of the history-mined benchmark, at most {args.max_tasks} "
        "per repository spread evenly over its history; score = share of the commit's "
        f"other changed files among the top {TOP} named, mean over tasks\n"
    )
    print(
        f"| repository | tasks | tp_change_impact top {TOP} | co-change only top {TOP} "
        "| impact names ≥ 1 | co-change names ≥ 1 | impact time (median) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, rs in per_repo:
        print(line(name, rs))
    print(line("**all**", rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
