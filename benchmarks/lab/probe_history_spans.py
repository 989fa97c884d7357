"""Probe: would the repository's own history find the edited definition of a file?

On the dev2 split of benchmarks/ctxbench.md most misses are "the right file, the
wrong part": the gold file is shown, its edited definition ranks 9th or lower among
the file's spans (``query.locate.rank_spans``). Tasks read like commit messages, and
git history up to the task's parent commit is in place (no leak). For each intent
task this probe reads the newest ``--commits`` commits before the task
(``harness.history.read_definitions``: per commit, the definitions its hunks were in)
and scores each span of each gold file by three history signals:

* ``similar``: the past commits whose messages are most like the task (BM25 over
  message words, the ``--top`` best), each weighted by its score per mille of the
  best, summed over the commits that edited a definition of the span's name in the
  file;
* ``churn``: how many of the commits edited that definition of the file;
* ``coedit``: how many commits edited it together with the file's best span under
  ``rank_spans`` (in the same file).

Each signal is scaled per mille of the file's largest and fused into the span's
``rank_spans`` score (``score + weight * signal // 1000``, before the 1000 cap, as a
new key of its signal dict would be). Counted: gold files whose best edited span is
first / in the first three / first five (the gold files with at least two spans,
some but not all holding an edit line). At file level: where the gold files rank
among ``locate``'s code files, and with ``similar`` at file level (the commits' files)
fused in. A span "holds" an edit line when one of the pre-image lines the task's
commit removes (or, for an insertion, the two non-blank lines either side) is among
its own lines. The runner's cached index copies are read, so run that first::

    .venv/bin/python benchmarks/lab/probe_history_spans.py --bench SCRATCH/ctxbench \\
        --repos flask,ripgrep,sphinx [--max-tasks 20] [--commits 1000] [--cache FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codelibrarian.index.history_edits import message_words
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
    snapshots,
    span_record,
)


def collect(args: argparse.Namespace) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _run, repo, src, task, db in snapshots(args.bench, args.repos, args.max_tasks):
        history = read_definitions(src, rev=task["parent"], limit=args.commits)
        _, request = request_of(task)
        store = SqliteStore(db, readonly=True)
        try:
            located = locate(store, request, {})
            golds = []
            for gold in task["gold"]:
                lines = set(locus_lines(src, task["parent"], task["commit"], gold))
                spans = gold_spans(store, request, located, gold)
                golds.append({"path": gold, "spans": [span_record(s, lines) for s in spans]})
            out.append(
                {
                    "repo": repo,
                    "id": task["id"],
                    "query": task["query"],
                    "gold": task["gold"],
                    "files": [[f.path, f.score, f.is_code] for f in located.files[:40]],
                    "golds": golds,
                    "history": [
                        [c.order, c.message, [[p, list(n)] for p, n in c.edits]] for c in history
                    ],
                }
            )
        finally:
            store.close()
    return out


def bm25_top(query: str, history: list[Any], top: int) -> list[tuple[int, int]]:
    """``(commit order, weight per mille of the best)`` of the ``top`` best messages."""
    q = set(message_words(query))
    docs = [Counter(message_words(msg)) for _, msg, _ in history]
    if not q or not docs:
        return []
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n or 1.0
    df = Counter(w for d in docs for w in set(d) if w in q)
    scores: list[tuple[float, int]] = []
    for (order, _, _), d in zip(history, docs, strict=True):
        length = sum(d.values())
        s = 0.0
        for w in q:
            tf = d.get(w, 0)
            if tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
        if s > 0:
            scores.append((s, order))
    scores.sort(key=lambda x: (-x[0], x[1]))
    best = scores[:top]
    if not best:
        return []
    return [(order, max(1, int(1000 * s / best[0][0]))) for s, order in best]


def signals(task: dict[str, Any], gold: dict[str, Any], top: int) -> dict[str, dict[str, int]]:
    """Per signal, per definition name of the gold file: its raw value."""
    path = gold["path"]
    edits = {order: {p: set(n) for p, n in e} for order, _, e in task["history"]}
    sim: Counter[str] = Counter()
    for order, w in bm25_top(task["query"], task["history"], top):
        for name in edits[order].get(path, ()):
            sim[name] += w
    churn: Counter[str] = Counter()
    for e in edits.values():
        for name in e.get(path, ()):
            churn[name] += 1
    lead = gold["spans"][0]["name"] if gold["spans"] else None
    co: Counter[str] = Counter()
    if lead:
        for e in edits.values():
            names = e.get(path, set())
            if lead in names:
                for name in names:
                    if name != lead:
                        co[name] += 1
    return {"similar": dict(sim), "churn": dict(churn), "coedit": dict(co)}


def rank_of(spans: list[dict[str, Any]], extra: dict[str, int], weight: int) -> int:
    top = max(extra.values(), default=0)
    order = []
    for i, s in enumerate(spans):
        raw = raw_score(tuple(s["sig"].items()))
        if top and s["name"] in extra:
            raw += weight * (extra[s["name"]] * 1000 // top) // 1000
        score = min(1000, raw)
        if s["container"]:
            score = score * 600 // 1000
        order.append((-score, s["start"], i))
    order.sort()
    return min(pos for pos, (_, _, i) in enumerate(order) if spans[i]["hit"])


def file_rank(task: dict[str, Any], gold: str, weight: int, top: int) -> int | None:
    files = [(p, s) for p, s, code in task["files"] if code]
    sim: Counter[str] = Counter()
    for order, w in bm25_top(task["query"], task["history"], top) if weight else []:
        for p, _ in task["history"][order][2]:
            sim[p] += w
    most = max((sim[p] for p, _ in files), default=0)
    keyed = sorted(
        (-(s + (weight * (sim[p] * 1000 // most) // 1000 if most else 0)), p) for p, s in files
    )
    for pos, (_, p) in enumerate(keyed):
        if p == gold:
            return pos
    return None


def evaluate(data: list[dict[str, Any]], top: int) -> None:
    variants = [("main", "", 0)] + [
        (f"{sig} {w}", sig, w)
        for sig in ("similar", "churn", "coedit")
        for w in (100, 200, 400, 800)
    ]
    for split in ("tuning", "dev2"):
        rows = of_split(data, split)
        if not rows:
            continue
        counts: dict[str, Counter[str]] = {v[0]: Counter() for v in variants}
        for task in rows:
            for gold in golds_with_a_choice(task):
                sigs = signals(task, gold, top)
                for name, sig, w in variants:
                    count_place(counts[name], rank_of(gold["spans"], sigs.get(sig, {}), w))
        print(f"\nspan level, {split} (commits {len(rows)} tasks; gold files with a span choice)")
        print(places_table(counts))
        print(f"\nfile level, {split}: gold files' place among locate's code files")
        print("| variant | gold files | @1 | @3 | @5 | @8 | not in the top 40 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for w in (0, 100, 200, 400):
            fc: Counter[str] = Counter()
            for task in rows:
                for gold in task["gold"]:
                    place = file_rank(task, gold, w, top)
                    fc["files"] += 1
                    if place is None:
                        fc["none"] += 1
                        continue
                    for k in (1, 3, 5, 8):
                        fc[f"@{k}"] += place < k
            name = "main" if not w else f"similar {w}"
            print(
                f"| {name} | {fc['files']} | {fc['@1']} | {fc['@3']} | {fc['@5']} | "
                f"{fc['@8']} | {fc['none']} |"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--repos", required=True)
    ap.add_argument("--max-tasks", type=int, default=20)
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--top", type=int, default=20, help="similar commits counted")
    ap.add_argument("--cache", type=Path, default=None, help="keep the collected data here")
    args = ap.parse_args(argv)
    if args.cache is not None and args.cache.is_file():
        data = json.loads(args.cache.read_text(encoding="utf-8"))
    else:
        data = collect(args)
        if args.cache is not None:
            args.cache.write_text(json.dumps(data), encoding="utf-8")
    evaluate(data, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
