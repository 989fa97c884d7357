"""Probe: inside a gold file, which chunk scoring puts an edited chunk first?

The misses of benchmarks/ctxbench.md's dev2 split are mostly "the right file, the
wrong part": the file is shown and the edited definition is not. Before span ranking
gets a semantic signal, this probe asks whether the embedding model the project ships
would find that definition at all. For each intent task, each gold file with at least
four leaf chunks (chunks that hold no other chunk), some but not all of which contain
an edit-locus line, it ranks the file's leaf chunks three ways against the task text:

* ``emb``: cosine of the static embedding (``query.embed.load_embedder``), per mille;
* ``lex``: how many of the task's word parts (identifier parts of three letters or
  more) the chunk contains;
* ``fused``: reciprocal-rank fusion of the two (integer weights ``1000 // (10 + rank)``).

and counts the gold files whose best edited chunk is first / among the first three.
Ties break by line order, so nothing depends on float order. It reads the index
copies ``ctxbench_fast.py`` cached (any indexer version), so run that first:

    .venv/bin/python benchmarks/lab/probe_span_embedding.py --bench SCRATCH/ctxbench \
        --repos flask,ripgrep,sphinx [--max-tasks 20]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codelibrarian.index.store import SqliteStore
from codelibrarian.query.embed import load_embedder
from harness.ctxbench import Harness, load_harness, norm_line

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_PART = re.compile(r"_|(?<=[a-z])(?=[A-Z])")


def word_parts(text: str) -> set[str]:
    """Lower-cased identifier parts of three letters or more."""
    return {p.lower() for w in _IDENT.findall(text) for p in _PART.split(w) if len(p) > 2}


def leaves(chunks: Sequence[Any]) -> list[Any]:
    """The chunks (module chunks aside) that hold no other chunk."""
    spans = [c for c in chunks if c.kind != "module"]

    def holds(c: Any, o: Any) -> bool:
        inside = c.start_line <= o.start_line and o.end_line <= c.end_line
        return o is not c and inside and (o.start_line, o.end_line) != (c.start_line, c.end_line)

    return [c for c in spans if not any(holds(c, o) for o in spans)]


def best_rank(scores: Sequence[int], hit: Sequence[bool]) -> int:
    """Position of the best-placed edited chunk when ordered by ``scores`` (ties: line order)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return min(pos for pos, i in enumerate(order) if hit[i])


def fuse(*rankings: Sequence[int]) -> list[int]:
    """Reciprocal-rank fusion with integer weights."""
    out = [0] * len(rankings[0])
    for scores in rankings:
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        for pos, i in enumerate(order):
            out[i] += 1000 // (10 + pos)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--repos", required=True)
    ap.add_argument("--max-tasks", type=int, default=20)
    args = ap.parse_args(argv)
    run = load_harness(args.bench)
    embedder = load_embedder()
    if embedder is None:
        print("no embedding model installed", file=sys.stderr)
        return 2
    pooled: Counter[str] = Counter()
    for repo in args.repos.split(","):
        tasks = [json.loads(line) for line in (args.bench / "tasks" / f"{repo}.jsonl").open()]
        intent = [t for t in tasks if "intent" in t["modes"]]
        chosen = {t["id"] for t in run.pick(intent, args.max_tasks)}
        caches = sorted((args.bench / ".data" / "fastcache" / repo).iterdir())
        src = args.bench / ".data" / "repos" / repo
        counts: Counter[str] = Counter()
        for task in (t for t in tasks if t["id"] in chosen):
            dbs = [
                c / f"{task['parent']}.db" for c in caches if (c / f"{task['parent']}.db").is_file()
            ]
            if not dbs:
                continue
            store = SqliteStore(dbs[0], readonly=True)
            try:
                _probe_task(run, store, src, task, embed=embedder.embed, counts=counts)
            finally:
                store.close()
        pooled.update(counts)
        print(repo, _line(counts), flush=True)
    print("pooled", _line(pooled))
    return 0


def _probe_task(
    run: Harness,
    store: SqliteStore,
    src: Path,
    task: dict[str, Any],
    *,
    embed: Callable[[Sequence[str]], np.ndarray[Any, Any]],
    counts: Counter[str],
) -> None:
    query = task["query"]
    task_words = word_parts(query)
    qv = embed([query])[0]
    for gold in task["gold"]:
        locus = {
            norm_line(run, line)
            for line in run.edit_locus(str(src), task["parent"], task["commit"], gold)
        }
        locus = {line for line in locus if len(line) >= 10}
        leaf = leaves(store.chunks_for(gold))
        hit = [any(norm_line(run, line) in locus for line in c.text.splitlines()) for c in leaf]
        if len(leaf) < 4 or not any(hit) or all(hit):
            continue
        vecs = embed([f"{gold} {c.symbol or ''}\n{c.text[:2000]}" for c in leaf])
        norms = np.linalg.norm(vecs, axis=1) * float(np.linalg.norm(qv))
        emb = [
            round(1000 * float(v @ qv) / n) if n else 0 for v, n in zip(vecs, norms, strict=True)
        ]
        lex = [len(task_words & word_parts(c.text)) for c in leaf]
        counts["files"] += 1
        for name, scores in (("emb", emb), ("lex", lex), ("fused", fuse(emb, lex))):
            rank = best_rank(scores, hit)
            counts[f"{name}@1"] += rank == 0
            counts[f"{name}@3"] += rank < 3


def _line(c: Counter[str]) -> str:
    n = c["files"]
    parts = [f"{k} {c[k]}" for k in ("emb@1", "lex@1", "fused@1", "emb@3", "lex@3", "fused@3")]
    return f"gold files {n}: " + ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
