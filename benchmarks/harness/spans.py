"""What the span probes of ``benchmarks/lab/`` share: a gold file's spans, ranked.

The probes ask where a gold file's edited definition lands among the file's spans as
compose ranks them (``rank_spans`` over ``locate``'s answer for the task's intent), on
the in-process runner's cached index of each task's parent commit
(``ctxbench_fast.py``; run it first). A span is recorded with its signals, its own
lines and whether one of them holds an edit-locus line.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from codelibrarian.index.store import SqliteStore
from codelibrarian.query.locate import (
    SPAN_WEIGHTS,
    Located,
    LocatedFile,
    LocateRequest,
    Span,
    rank_spans,
)
from codelibrarian.trigger import Trigger
from harness.ctxbench import TUNING, Harness, Task, index_key, load_harness

__all__ = [
    "count_place",
    "gold_spans",
    "golds_with_a_choice",
    "of_split",
    "places_table",
    "raw_score",
    "request_of",
    "short",
    "snapshots",
    "span_record",
    "task_db",
]


def short(symbol: str | None) -> str | None:
    """A symbol's own name (``Foo.bar`` and ``a::b`` give ``bar``, ``b``)."""
    return None if not symbol else re.split(r"\.|::", symbol)[-1]


def task_db(bench: Path, repo: str, parent: str) -> Path | None:
    """The runner's cached index of the snapshot at ``parent``: the present indexer's
    copy when there is one, else another version's."""
    caches = [bench / ".data" / "fastcache" / repo / index_key()]
    caches += sorted((bench / ".data" / "fastcache" / repo).iterdir())
    return next((c / f"{parent}.db" for c in caches if (c / f"{parent}.db").is_file()), None)


def request_of(task: Task) -> tuple[Trigger, LocateRequest]:
    """The task's trigger and the locate request compose would make of it (intent)."""
    trig = Trigger.create(task["query"], as_of=0)
    return trig, LocateRequest(
        task=task["query"], keywords=trig.keywords, identifiers=trig.identifiers
    )


def snapshots(
    bench: Path, repos: str, max_tasks: int
) -> Iterator[tuple[Harness, str, Path, Task, Path]]:
    """``(harness, repo, its clone, task, cached index)`` for the runner's pick of each
    repository's intent tasks that have a cached index."""
    run = load_harness(bench)
    for repo in repos.split(","):
        lines = (bench / "tasks" / f"{repo}.jsonl").read_text(encoding="utf-8").splitlines()
        tasks = [json.loads(line) for line in lines if line.strip()]
        intent = [t for t in tasks if "intent" in t["modes"]]
        for task in run.pick(intent, max_tasks):
            db = task_db(bench, repo, task["parent"])
            if db is None:
                print("no index for", task["id"], file=sys.stderr)
                continue
            yield run, repo, bench / ".data" / "repos" / repo, task, db
        print("collected", repo, file=sys.stderr, flush=True)


def gold_spans(
    store: SqliteStore, request: LocateRequest, located: Located, path: str
) -> tuple[Span, ...]:
    """``rank_spans`` of a gold file as compose ranks it (unranked: with no hits)."""
    ranked = next((f for f in located.files if f.path == path), None)
    file = ranked or LocatedFile(path, 0, (), (), False, True)
    return rank_spans(store, request, file, quoted_chunks=located.quoted_chunks)


def of_split(data: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """The collected tasks of ``split``: ``tuning`` or ``dev2`` (every other repository)."""
    return [t for t in data if (t["repo"] in TUNING) == (split == "tuning")]


def golds_with_a_choice(task: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The task's gold files whose spans give the ranking a choice: two spans or more,
    some but not all holding an edit line."""
    for gold in task["golds"]:
        hits = [s["hit"] for s in gold["spans"]]
        if len(hits) >= 2 and any(hits) and not all(hits):
            yield gold


#: the places counted: the best edited span first, in the first three, five, nine
PLACES = (1, 3, 5, 9)


def count_place(counts: Counter[str], place: int) -> None:
    """Count one gold file whose best edited span came at ``place`` (0 = first)."""
    counts["files"] += 1
    for k in PLACES:
        counts[f"@{k}"] += place < k


def places_table(counts: Mapping[str, Counter[str]]) -> str:
    """One Markdown row per variant: gold files and how many at each of :data:`PLACES`."""
    head = "| variant | gold files | " + " | ".join(f"@{k}" for k in PLACES) + " |"
    rows = [head, "|---|---:|" + "---:|" * len(PLACES)]
    for name, c in counts.items():
        rows.append(
            f"| {name} | {c['files']} | " + " | ".join(str(c[f"@{k}"]) for k in PLACES) + " |"
        )
    return "\n".join(rows)


def raw_score(signals: Sequence[tuple[str, int]]) -> int:
    """A span's score from its signals before the 1000 cap (intent weights)."""
    weights = SPAN_WEIGHTS["intent"]
    return sum(weights.get(k, 0) * v for k, v in signals) // 1000


def span_record(span: Span, lines: set[int]) -> dict[str, Any]:
    """What the probes keep of a ranked span; ``hit``: one of ``lines`` is its own."""
    return {
        "name": short(span.symbol),
        "score": span.score,
        "sig": dict(span.signals),
        # a class's own lines: scaled down by rank_spans
        "container": span.score != min(1000, raw_score(span.signals)),
        "start": span.start,
        "end": span.end,
        "own": [list(r) for r in span.own],
        "hit": any(a <= ln <= b for a, b in span.own for ln in lines),
    }
