"""File recall of the query pipeline's feature ablation on history-mined tasks.

Uses the task files of ``../shared/bench`` (``make_tasks.py``: a commit's message
is the query, the non-test source files it changed are the gold files; the
repository is seen at the parent commit). For each task the repository is
checked out at the parent in a scratch clone, indexed incrementally, and
``run_query`` answers with each feature set:

* ``bm25``   — BM25 alone, in retrieval order;
* ``+graph`` — plus graph expansion and scoring;
* ``+dense`` — plus dense vectors (needs the `semantic` extra);
* ``full``   — plus reranking and the defeater check;
* ``full-dense`` — everything but dense vectors.

Reported: mean file recall in the top 5 and top 10 files, and under chunk-token
budgets of 2,000 and 8,000 (``budget=``: the summed tokens of the cited chunks,
a proxy for a pack; the ctxbench harness measures real packs). This is a quick
directional check, not the ctxbench score.

    .venv/bin/python benchmarks/lab/query_ablation.py --tasks SCRATCH/ctxbench/tasks/click.jsonl \\
        --repo-dir SCRATCH/ctxbench/.data/repos/click --work /tmp/abl-click [--max-tasks 30]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from codelibrarian.index.indexer import index_workspace
from codelibrarian.query import run_query
from codelibrarian.query.embed import load_embedder

CONFIGS: dict[str, frozenset[str]] = {
    "bm25": frozenset({"bm25"}),
    "+graph": frozenset({"bm25", "graph", "scoring"}),
    "+dense": frozenset({"bm25", "graph", "scoring", "dense"}),
    "full": frozenset({"bm25", "graph", "scoring", "dense", "rerank", "defeaters"}),
    "full-dense": frozenset({"bm25", "graph", "scoring", "rerank", "defeaters"}),
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def recall(found: list[str], gold: list[str]) -> float:
    return sum(1 for g in gold if g in found) / len(gold)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=Path, required=True, help="a task file (NAME.jsonl)")
    ap.add_argument("--repo-dir", type=Path, required=True, help="a full clone of NAME")
    ap.add_argument("--work", type=Path, required=True, help="scratch folder")
    ap.add_argument("--max-tasks", type=int, default=30)
    ap.add_argument("--depth", default="L1")
    args = ap.parse_args(argv)

    tasks = [json.loads(line) for line in args.tasks.read_text().splitlines() if line.strip()]
    tasks = [t for t in tasks if "intent" in t["modes"]][: args.max_tasks]
    work = args.work
    if not (work / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(args.repo_dir), str(work)], check=True)
    embedder = load_embedder()
    if embedder is None:
        print("the semantic extra is missing: +dense equals +graph", file=sys.stderr)

    scores: dict[str, dict[str, list[float]]] = {
        c: {"r@5": [], "r@10": [], "b2000": [], "b8000": []} for c in CONFIGS
    }
    seconds: dict[str, float] = dict.fromkeys(CONFIGS, 0.0)
    for n, task in enumerate(tasks, start=1):
        git(work, "checkout", "-q", "-f", task["parent"])
        git(work, "clean", "-q", "-fd", "-e", ".librarian")
        index_workspace(work)
        for name, features in CONFIGS.items():
            t0 = time.perf_counter()
            kw = {"stages": features, "depth": args.depth, "as_of": task["time"]}
            ranked = run_query(work, task["query"], limit=10, embedder=embedder, **kw)
            b2 = run_query(work, task["query"], limit=50, budget=2000, embedder=embedder, **kw)
            b8 = run_query(work, task["query"], limit=50, budget=8000, embedder=embedder, **kw)
            seconds[name] += time.perf_counter() - t0
            s = scores[name]
            s["r@5"].append(recall(ranked[:5], task["gold"]))
            s["r@10"].append(recall(ranked[:10], task["gold"]))
            s["b2000"].append(recall(b2, task["gold"]))
            s["b8000"].append(recall(b8, task["gold"]))
        print(f"{n}/{len(tasks)} {task['id']}", file=sys.stderr)

    print(f"\n{len(tasks)} intent tasks from {args.tasks.name}, depth {args.depth}\n")
    print("| features | recall@5 | recall@10 | recall, 2k tokens | recall, 8k tokens | s/query |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in CONFIGS:
        s = scores[name]
        mean = {k: sum(v) / len(v) for k, v in s.items()}
        per_query = seconds[name] / (3 * len(tasks))
        print(
            f"| {name} | {mean['r@5']:.3f} | {mean['r@10']:.3f} | {mean['b2000']:.3f} "
            f"| {mean['b8000']:.3f} | {per_query:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
