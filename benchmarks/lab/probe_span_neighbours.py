"""Probe: do signals from outside the task's words find a file's edited definition?

``probe_history_spans.py`` tried the history of which definitions changed (*similar*,
*churn*, *coedit*) and ``probe_span_rank.py`` every lexical feature of a span; neither
beat ``query.locate.rank_spans`` at putting a gold file's edited definition first. This
probe counts the same thing (gold files whose best edited span is first / in the first
three / five / nine, among the gold files with at least two spans, some but not all
holding an edit line) for two signals not tried:

* **recency** — how recently each definition was last edited before the task's parent
  (no leak): ``blame``, the newest commit time among the definition's own lines
  (``git blame`` at the parent), or ``hunk``, the newest of the last ``--commits``
  commits whose hunk header (git's function context) names the definition. The file's
  definitions are ranked by it (newest first); a span gains ``weight`` when it is among
  the ``k`` newest (``top k``), or ``weight * (n - rank) / n`` (``slope``), or recency
  only breaks ties of ``rank_spans``' score (``tie``).
* **graph** — definitions linked to a *seed*: a span is linked when its own lines
  reference a seed's name, or a seed's lines reference the span's name (the index's
  ``refs`` rows). Seeds: ``best``, the file's first span under ``rank_spans``; ``named``,
  the definitions anywhere in the index whose name the task's words give exactly (its
  identifiers, or a keyword equal to the name); ``both``. A linked span gains ``weight``.

``--add-cutoffs`` adds, per task, the time of the 100th / 300th / 1,000th newest
non-merge commit before the parent, for the windowed variants (``last N commits``: a
line last edited before the window counts as not recent, as an index that reads only
the last N commits would see it). ``--graph`` prints the graph variants (slow on large
files). The layout-word form of the graph link (a chunk's words instead of the index's
references; ``ctxbench.md``, "Recency and the call graph at intent 2,000 tokens") read
``query/locate.py``'s private span layout and is no longer computed here.

Scores are fused as ``rank_spans`` fuses its own signals (``score + weight * signal //
1000`` before the 1000 cap; a class's own lines scaled 6/10). The runner's cached index
copies are read (run the runner first)::

    .venv/bin/python benchmarks/lab/probe_span_neighbours.py --bench SCRATCH/ctxbench \\
        --repos click,httpx,logrus,express --cache SCRATCH/nb-tuning.json
    .venv/bin/python benchmarks/lab/probe_span_neighbours.py --bench SCRATCH/ctxbench \\
        --cache SCRATCH/nb-tuning.json --add-cutoffs --graph
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codelibrarian.index.store import SqliteStore
from codelibrarian.query.locate import locate
from harness.ctxbench import locus_lines
from harness.history import read_definitions
from harness.spans import (
    count_place,
    gold_spans,
    golds_with_a_choice,
    of_split,
    places_table,
    raw_score,
    request_of,
    short,
    snapshots,
    span_record,
)


def blame_times(src: Path, parent: str, path: str) -> list[int]:
    """Per line of ``path`` at ``parent`` (1-based, index 0 unused): its commit's time."""
    out = subprocess.run(
        ["git", "blame", "--porcelain", parent, "--", path],
        cwd=src,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    ).stdout
    times: dict[str, int] = {}
    lines: list[int] = [0]
    sha = ""
    for line in out.split("\n"):
        if not line:
            continue
        if line[0] == "\t":
            lines.append(times.get(sha, 0))
            continue
        head = line.split(" ")
        if len(head[0]) == 40 and len(head) >= 3 and head[1].isdigit():
            sha = head[0]
        elif head[0] == "committer-time" and sha not in times:
            times[sha] = int(head[1])
    return lines


def collect(args: argparse.Namespace) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _run, repo, src, task, db in snapshots(args.bench, args.repos, args.max_tasks):
        history = read_definitions(src, rev=task["parent"], limit=args.commits)
        trig, request = request_of(task)
        exact = {w.lower() for w in (*trig.identifiers, *trig.keywords)}
        store = SqliteStore(db, readonly=True)
        try:
            located = locate(store, request, {})
            named = []
            for sym in store.symbols():
                if sym.name.lower() not in exact:
                    continue
                refs = {
                    r.name
                    for r in store.references(path=sym.path)
                    if sym.start_line <= r.line <= sym.end_line
                }
                named.append([sym.path, sym.name, sorted(refs)])
            golds = []
            for gold in task["gold"]:
                lines = set(locus_lines(src, task["parent"], task["commit"], gold))
                spans = gold_spans(store, request, located, gold)
                golds.append(
                    {
                        "path": gold,
                        "refs": [[r.name, r.line] for r in store.references(path=gold)],
                        "blame": blame_times(src, task["parent"], gold),
                        "hunks": [
                            [c.order, list(names)]
                            for c in history
                            for p, names in c.edits
                            if p == gold
                        ],
                        "spans": [span_record(s, lines) for s in spans],
                    }
                )
            out.append(
                {
                    "repo": repo,
                    "id": task["id"],
                    "query": task["query"],
                    "named": named,
                    "golds": golds,
                }
            )
        finally:
            store.close()
    add_cutoffs(args, out)
    return out


def add_cutoffs(args: argparse.Namespace, data: list[dict[str, Any]]) -> None:
    """Add ``cutoff``: per window size, the time of the oldest of the newest N non-merge
    commits before the task's parent (a line last edited before it is "not recent")."""
    for task in data:
        repo = task["repo"]
        tasks = {
            t["id"]: t for t in map(json.loads, (args.bench / "tasks" / f"{repo}.jsonl").open())
        }
        parent = tasks[task["id"]]["parent"]
        src = args.bench / ".data" / "repos" / repo
        times = subprocess.run(
            ["git", "log", "--no-merges", "--format=%ct", "--max-count=1000", parent],
            cwd=src,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        task["cutoff"] = {str(n): int(times[min(n, len(times)) - 1]) for n in WINDOWS}


WINDOWS = (100, 300, 1000)


# ------------------------------------------------------------------ signals


def recency_blame(gold: dict[str, Any]) -> list[int]:
    """Per span: the newest commit time among its own lines (0: none known)."""
    times = gold["blame"]
    return [
        max(
            (times[ln] for a, b in s["own"] for ln in range(a, b + 1) if ln < len(times)), default=0
        )
        for s in gold["spans"]
    ]


def windowed(n: int) -> Any:
    """``recency_blame`` with the lines older than the newest ``n`` commits unknown."""

    def fn(gold: dict[str, Any], task: dict[str, Any]) -> list[int]:
        cut = task["cutoff"][str(n)]
        return [v if v >= cut else 0 for v in recency_blame(gold)]

    return fn


def recency_hunk(gold: dict[str, Any]) -> list[int]:
    """Per span: larger the newer the last commit whose hunk header named it (0: none)."""
    newest: dict[str, int] = {}
    for order, names in gold["hunks"]:
        for name in names:
            newest[name] = max(newest.get(name, 0), 100_000 - order)
    return [newest.get(s["name"] or "", 0) for s in gold["spans"]]


def recency_ranks(values: list[int], spans: list[dict[str, Any]]) -> list[int | None]:
    """Each span's place among the file's spans by recency (0 = newest; None: unknown)."""
    known = sorted(
        (-v, s["start"], i) for i, (v, s) in enumerate(zip(values, spans, strict=True)) if v
    )
    out: list[int | None] = [None] * len(spans)
    for r, (_, _, i) in enumerate(known):
        out[i] = r
    return out


def linked(task: dict[str, Any], gold: dict[str, Any], seeds: str) -> list[bool]:
    """Per span: whether it references a seed's name or a seed references its name."""
    spans = gold["spans"]
    refs = gold["refs"]
    seed_names: set[str] = set()
    seed_refs: set[str] = set()
    if seeds in ("best", "both") and spans:
        best = spans[0]
        if best["name"]:
            seed_names.add(best["name"])
        for name, line in refs:
            if any(a <= line <= b for a, b in best["own"]):
                seed_refs.add(name)
    if seeds in ("named", "both"):
        for _, name, called in task["named"]:
            seed_names.add(short(name) or name)
            seed_refs.update(called)
    out = []
    for k, s in enumerate(spans):
        if seeds in ("best", "both") and k == 0:
            out.append(False)
            continue
        own_refs = {name for name, line in refs if any(a <= line <= b for a, b in s["own"])}
        calls_seed = bool(own_refs & seed_names)
        called = bool(s["name"]) and s["name"] in seed_refs
        out.append(calls_seed or called)
    return out


def rank_with(spans: list[dict[str, Any]], lift: list[int], tie: list[int] | None = None) -> int:
    order = []
    for i, s in enumerate(spans):
        raw = raw_score(tuple(s["sig"].items())) + lift[i]
        score = min(1000, raw)
        if s["container"]:
            score = score * 600 // 1000
        order.append((-score, -(tie[i] if tie else 0), s["start"], i))
    order.sort()
    return min(pos for pos, (*_, i) in enumerate(order) if spans[i]["hit"])


def variants(graph: bool) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [("main", lambda t, g: ([0] * len(g["spans"]), None))]
    for n in WINDOWS:
        for w in (100, 200):

            def wslope(t: Any, g: Any, n: int = n, w: int = w) -> Any:
                ranks = recency_ranks(windowed(n)(g, t), g["spans"])
                size = len(g["spans"])
                return [0 if r is None else w * (size - r) // size for r in ranks], None

            out.append((f"recency blame, last {n} commits, slope +{w}", wslope))
    for kind, fn in (("blame", recency_blame), ("hunk", recency_hunk)):
        out.append((f"recency {kind}, tie", lambda t, g, fn=fn: ([0] * len(g["spans"]), fn(g))))
        for k in (1, 3):
            for w in (100, 200, 400):

                def top(t: Any, g: Any, fn: Any = fn, k: int = k, w: int = w) -> Any:
                    ranks = recency_ranks(fn(g), g["spans"])
                    return [w if r is not None and r < k else 0 for r in ranks], None

                out.append((f"recency {kind}, top {k}, +{w}", top))
        for w in (100, 200):

            def slope(t: Any, g: Any, fn: Any = fn, w: int = w) -> Any:
                ranks = recency_ranks(fn(g), g["spans"])
                n = len(g["spans"])
                return [0 if r is None else w * (n - r) // n for r in ranks], None

            out.append((f"recency {kind}, slope +{w}", slope))
    if not graph:
        return out
    for seeds in ("best", "named", "both"):
        for w in (50, 100, 200, 400):

            def lift(t: Any, g: Any, seeds: str = seeds, w: int = w) -> Any:
                return [w if x else 0 for x in linked(t, g, seeds)], None

            out.append((f"graph {seeds}, +{w}", lift))
    return out


def evaluate(data: list[dict[str, Any]], graph: bool) -> None:
    vs = variants(graph)
    for split in ("tuning", "dev2"):
        rows = of_split(data, split)
        if not rows:
            continue
        counts: dict[str, Counter[str]] = {name: Counter() for name, _ in vs}
        linked_hits: Counter[str] = Counter()
        for task in rows:
            for gold in golds_with_a_choice(task):
                spans = gold["spans"]
                hits = [s["hit"] for s in spans]
                for seeds in ("best", "named") if graph else ():
                    flags = linked(task, gold, seeds)
                    linked_hits[f"{seeds} linked"] += sum(flags)
                    linked_hits[f"{seeds} linked and edited"] += sum(
                        f and h for f, h in zip(flags, hits, strict=True)
                    )
                    linked_hits["spans"] += len(spans) if seeds == "best" else 0
                    linked_hits["edited"] += sum(hits) if seeds == "best" else 0
                for name, fn in vs:
                    lift, tie = fn(task, gold)
                    count_place(counts[name], rank_with(spans, lift, tie))
        print(f"\n{split}: {len(rows)} tasks; {dict(linked_hits)}")
        print(places_table(counts))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", type=Path)
    ap.add_argument("--repos", default="")
    ap.add_argument("--max-tasks", type=int, default=20)
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--cache", type=Path, action="append", default=[])
    ap.add_argument("--add-cutoffs", action="store_true", help="add window cutoffs")
    ap.add_argument("--graph", action="store_true", help="also the graph variants (slow)")
    args = ap.parse_args(argv)
    data: list[dict[str, Any]] = []
    for cache in args.cache:
        if cache.is_file():
            got = json.loads(cache.read_text(encoding="utf-8"))
            if args.add_cutoffs:
                add_cutoffs(args, got)
            if args.add_cutoffs:
                cache.write_text(json.dumps(got), encoding="utf-8")
            data.extend(got)
        else:
            got = collect(args)
            cache.write_text(json.dumps(got), encoding="utf-8")
            data.extend(got)
    if not args.cache:
        data = collect(args)
    evaluate(data, args.graph)
    return 0


if __name__ == "__main__":
    sys.exit(main())
