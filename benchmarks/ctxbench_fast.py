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
``--ablate`` switches retrieval signals off (``Librarian.compose``'s ``signals_off``;
the names are listed in docs/compose.md). Figures recorded in ctxbench.md come from the harness.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path
from typing import Any

warnings.simplefilter("ignore", DeprecationWarning)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from ctxbench_adapter import _as_of  # noqa: E402  (the harness adapter's as_of rule)


def _harness(bench: Path) -> Any:
    """The harness's ``run.py`` as a module (its scoring functions), without re-exec."""
    sys.modules.setdefault("rank_bm25", types.ModuleType("rank_bm25"))  # unused here
    spec = importlib.util.spec_from_file_location("ctxbench_run", bench / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _index_key() -> str:
    """Changes whenever the indexer's code does: cached index copies are keyed by it."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "src" / "codelibrarian" / "index").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".scm"):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


def _checkout(run: Any, work: Path, commit: str) -> None:
    """The harness's checkout, tried again after a pause when ``git clean`` fails (it
    exits 1 when a folder it removes is not empty yet, e.g. while the file system
    settles after the previous task's index was closed)."""
    for attempt in range(3):
        try:
            run.checkout(str(work), commit)
            return
        except subprocess.CalledProcessError:
            if attempt == 2:
                raise
            print(f"checkout of {commit[:10]} failed; trying again", file=sys.stderr)
            time.sleep(2.0)


def _prepare(lib: Any, work: Path, cache: Path, parent: str) -> float:
    """Index the snapshot, from a cached copy when there is one; seconds spent."""
    state = work / ".librarian"
    db = state / "index.db"
    saved = cache / f"{parent}.db"
    started = time.perf_counter()
    if saved.is_file():
        state.mkdir(exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        shutil.copyfile(saved, db)
    lib.index()
    lib.close()
    if not saved.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        import sqlite3

        con = sqlite3.connect(db)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        shutil.copyfile(db, saved)
    return time.perf_counter() - started


def _first_pack_librarian(work: Path, limit: int, cache_dir: Path) -> Any:
    """A ``Librarian`` on ``work`` as a user's first ``compose`` meets it: no index, an
    empty per-user parse cache, at most ``limit`` files parsed before the answer (0: the
    configured default) and no background run finishing the rest meanwhile."""
    from codelibrarian.api import Librarian
    from codelibrarian.config import load_config

    shutil.rmtree(work / ".librarian", ignore_errors=True)
    shutil.rmtree(cache_dir, ignore_errors=True)
    os.environ["LIBRARIAN_CACHE_DIR"] = str(cache_dir)
    config = load_config(work)
    update: dict[str, Any] = {"background": False}
    if limit > 0:
        update["first_files"] = limit
    config = config.model_copy(update={"index": config.index.model_copy(update=update)})
    return Librarian(work, config)


def _drop_lane(lane: str) -> None:
    """Every workspace of this run gathers from all its sources but ``lane`` (a
    benchmark-only switch: the library has no option to silence a built-in lane)."""
    from codelibrarian.service.workspace import WorkspaceSession
    from codelibrarian.sources import load_sources

    loaded = WorkspaceSession.sources
    names = {s.name for s in load_sources()}
    if lane not in names:
        raise SystemExit(f"--drop-lane: unknown lane {lane!r} (lanes: {', '.join(sorted(names))})")

    def sources(self: Any) -> tuple[Any, ...]:
        return tuple(s for s in loaded(self) if s.name != lane)

    WorkspaceSession.sources = sources  # type: ignore[method-assign]


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
        "--drop-lane",
        default="",
        metavar="LANE",
        help="leave one source lane out (structure, rules, local, history...): its "
        "share of the budget goes to the others, as when it has nothing to offer",
    )
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
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="override a module constant for a sweep (a Python literal)",
    )
    args = ap.parse_args(argv)
    for item in args.set:
        import ast
        import importlib

        target, _, value = item.partition("=")
        module, _, name = target.rpartition(".")
        setattr(importlib.import_module(module), name, ast.literal_eval(value))
    if args.drop_lane:
        _drop_lane(args.drop_lane)

    bench = args.bench.resolve()
    run = _harness(bench)
    from codelibrarian.api import Librarian

    signals_off = frozenset(s.strip() for s in args.ablate.split(",") if s.strip())
    budgets = [int(b) for b in args.budgets.split(",")]
    modes = args.modes.split(",")
    key = _index_key()
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
            tasks_dir = args.tasks_dir or bench / "tasks"
            lines = (tasks_dir / f"{repo}.jsonl").read_text(encoding="utf-8").splitlines()
            tasks = [json.loads(line) for line in lines if line.strip()]
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
                _checkout(run, work, task["parent"])
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
                    index_s.append(_prepare(lib, work, cache, task["parent"]))
                as_of = _as_of(work)
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
                                as_of=as_of,
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
    raise SystemExit(main())
