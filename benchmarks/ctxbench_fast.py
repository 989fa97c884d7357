"""In-process runner for the history-mined context benchmark (``benchmarks/ctxbench.md``).

The harness (``SCRATCH/ctxbench/run.py``) starts one process per compose call,
which is the right measure of s/call but slow to iterate with. This runner
scores the same tasks with the harness's own scoring functions (imported from
``run.py``: edit locus, unique lines, path presence), composing in-process with
one :class:`~codelibrarian.api.Librarian` per task snapshot, and keeps a copy of
the index per snapshot so a second run skips indexing::

    .venv/bin/python benchmarks/ctxbench_fast.py --bench SCRATCH/ctxbench \\
        --repos click,httpx --max-tasks 10 --tag dev [--ablate SIGNAL] [--dump DIR]

Results: ``SCRATCH/ctxbench/results/fast-TAG.md`` and ``fast-TAG-raw.jsonl``.
``--ablate`` switches retrieval signals off (``Librarian.compose``'s ``signals_off``; the
names are listed in docs/compose.md). Figures recorded in ctxbench.md come from the
harness.

A sweep of a ranking constant is a build per value: edit the constant in a scratch
checkout and run this with that checkout's package installed (the library's modules
are not patched from here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from codelibrarian.api import Librarian
from codelibrarian.config import load_config
from harness.ctxbench import (
    as_of,
    checkout,
    index_key,
    load_harness,
    prepare,
    read_tasks,
)


def _first_pack_librarian(work: Path, limit: int, cache_dir: Path) -> Librarian:
    """A ``Librarian`` on ``work`` as a user's first ``compose`` meets it: no index, an
    empty per-user parse cache, at most ``limit`` files parsed before the answer (0: the
    configured default) and no background run finishing the rest meanwhile."""
    shutil.rmtree(work / ".librarian", ignore_errors=True)
    shutil.rmtree(cache_dir, ignore_errors=True)
    os.environ["LIBRARIAN_CACHE_DIR"] = str(cache_dir)
    config = load_config(work)
    update: dict[str, Any] = {"background": False}
    if limit > 0:
        update["first_files"] = limit
    config = config.model_copy(update={"index": config.index.model_copy(update=update)})
    return Librarian(work, config)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bench", required=True, type=Path, help="the harness copy (ctxbench/)")
    ap.add_argument("--repos", required=True)
    ap.add_argument("--budgets", default="2000,8000")
    ap.add_argument("--modes", default="intent,diff")
    ap.add_argument("--max-tasks", type=int, default=None)
    ap.add_argument("--tag", default="fast")
    ap.add_argument("--ablate", default="", help="comma list of signals to switch off")
    ap.add_argument(
        "--first-pack",
        type=int,
        default=None,
        metavar="FILES",
        help="compose every pack in the first-pack state: no index, an empty parse cache, "
        "the answer-first index parsing at most FILES files (0: the configured default) "
        "and no background run",
    )
    ap.add_argument("--dump", type=Path, default=None, help="write every pack under DIR")
    ap.add_argument("--tasks-dir", type=Path, default=None, help="default: BENCH/tasks")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
    signals_off = frozenset(s.strip() for s in args.ablate.split(",") if s.strip())

    bench = args.bench.resolve()
    run = load_harness(bench)
    budgets = [int(b) for b in args.budgets.split(",")]
    modes = args.modes.split(",")
    key = index_key()
    results = bench / "results"
    results.mkdir(exist_ok=True)
    with open(results / f"fast-{args.tag}-raw.jsonl", "w", encoding="utf-8") as raw:
        rows: list[dict[str, Any]] = []
        report: list[str] = []
        started = time.time()
        for repo in args.repos.split(","):
            src = bench / ".data" / "repos" / repo
            work = bench / ".data" / "fastwork" / repo
            cache = bench / ".data" / "fastcache" / repo / key
            if not work.is_dir():
                subprocess.run(
                    ["git", "clone", "-q", "--no-checkout", str(src), str(work)], check=True
                )
            tasks = read_tasks(bench, repo, args.tasks_dir)
            chosen = {
                m: {
                    t["id"] for t in run.pick([t for t in tasks if m in t["modes"]], args.max_tasks)
                }
                for m in modes
            }
            tasks = [t for t in tasks if any(t["id"] in chosen[m] for m in modes)]
            repo_rows: list[dict[str, Any]] = []
            index_s: list[float] = []
            for task in tasks:
                checkout(run, work, task["parent"])
                files = run.tracked_files(str(work))
                contents = {}
                for p in files:
                    t = run.read_text_file(str(work / p))
                    if t is not None:
                        contents[p] = t
                uniq = {g: run.unique_lines(g, contents) for g in task["gold"]}
                locus = run.locus_data(str(src), task, contents)
                diff_text = None
                if "diff" in task["modes"]:
                    diff_text = run.git(
                        str(src), "diff", task["parent"], task["commit"], "--", task["gold"][0]
                    )
                lib = Librarian(work)
                if args.first_pack is None:
                    index_s.append(prepare(lib, work, cache, task["parent"]))
                fixed = as_of(work)
                for mode in modes:
                    if task["id"] not in chosen[mode]:
                        continue
                    gold_eval = task["gold"] if mode == "intent" else task["gold"][1:]
                    for budget in budgets:
                        if args.first_pack is not None:
                            lib.close()
                            lib = _first_pack_librarian(
                                work, args.first_pack, bench / ".data" / "first-pack-cache"
                            )
                        t1 = time.perf_counter()
                        error = None
                        try:
                            result = lib.compose(
                                task["query"],
                                budget=budget,
                                diff_text=diff_text if mode == "diff" else None,
                                fmt="markdown",
                                as_of=fixed,
                                use_cache=False,
                                record=False,
                                signals_off=signals_off,
                            )
                            text = result.text
                        except Exception as exc:  # scored as an empty pack, like the harness
                            text, error = "", repr(exc)
                        secs = time.perf_counter() - t1
                        ntok = run.count_tokens(text)
                        viol = ntok > budget
                        present = [g for g in gold_eval if run.path_present(text, g)]
                        plines = run.norm_lines(text)
                        shown = [
                            g
                            for g in gold_eval
                            if uniq[g] and len(uniq[g] & plines) >= min(2, len(uniq[g]))
                        ]
                        ok = 0 if viol else 1
                        escores = [ok * x for x in run.edit_scores(gold_eval, locus, text, plines)]
                        row = {
                            "repo": repo,
                            "task": task["id"],
                            "system": "librarian",
                            "mode": mode,
                            "budget": budget,
                            "gold": gold_eval,
                            "present": present,
                            "tokens": ntok,
                            "violation": viol,
                            "recall": ok * len(present) / len(gold_eval),
                            "hit": ok * int(bool(present)),
                            "code_recall": ok * len(shown) / len(gold_eval),
                            "edit_recall": statistics.mean(escores),
                            "edit_hits": sum(x >= 0.5 for x in escores),
                            "edit_file_scores": [round(x, 4) for x in escores],
                            "query_s": secs,
                            "error": error,
                        }
                        repo_rows.append(row)
                        raw.write(json.dumps(row) + "\n")
                        if args.dump is not None:
                            out = args.dump / repo
                            out.mkdir(parents=True, exist_ok=True)
                            name = f"{task['id']}.{mode}.{budget}.txt"
                            (out / name).write_text(text, encoding="utf-8")
                lib.close()
                raw.flush()
            summary = run.summarize(repo_rows)
            idx = {"librarian": statistics.median(index_s)} if index_s else {}
            report.append(run.table(summary, idx, {}, f"{repo} ({len(tasks)} task commits)"))
            rows += repo_rows
        report.append(run.table(run.summarize(rows), {}, {}, "all repos pooled (task-weighted)"))
    text = "\n".join(report) + f"\nwall time: {time.time() - started:.0f}s\n"
    (results / f"fast-{args.tag}.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
