#!/usr/bin/env python3
"""Pattern selection quality on the labelled intents (benchmarks/intents/).

    python benchmarks/bench_selection.py                    # dev .. dev7, every selector
    python benchmarks/bench_selection.py --split dev3 --errors  # dev3 misses, for tuning
    python benchmarks/bench_selection.py --split dev3 --train dev+dev2  # dev3 held out
    python benchmarks/bench_selection.py --rotation         # dev2 .. dev7 held out in turn
    python benchmarks/bench_selection.py --rotation --errors  # ... and their top-3 misses
    python benchmarks/bench_selection.py --split eval       # the held-out half: aggregates only
    python benchmarks/bench_selection.py --first-plan --runs 5  # cold cost of the first selection
    python benchmarks/bench_selection.py --first-plan --src ../other-checkout/src  # A/B
    python benchmarks/bench_selection.py --json

Selectors compared, on each half separately:

* ``embeddings`` — the planner as shipped: vocabulary decomposition, multi-aspect
  scoring, semantic similarity with the bundled static embedding model (needs the
  ``semantic`` extra);
* ``keywords`` — the same planner with no embedding model (its keyword fallback);
* ``baseline`` — a plain keyword matcher in the manner of the seed's
  ``COMPOSITION_KEYWORDS``: each pattern's keywords are the stemmed words of its
  name, actions and domains; the pattern with the most keywords in the intent wins
  (ties by id).

Top-1 counts the first pattern when it is the row's ``label`` or ``also``; top-3 when
either is among the first three; the strict figures count ``label`` only. Per-item
results are printed only for the tuning splits ``dev`` to ``dev7`` (``--errors``): the
``eval`` half is for measuring, never for tuning (benchmarks/intents/README.md), and runs
only when asked for by name.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from codelibrarian.planning.examples import ExampleModel
from codelibrarian.planning.ngrams import train as train_ngrams
from codelibrarian.planning.selector import select
from codelibrarian.planning.semantic import (
    EmbeddingMatcher,
    HybridMatcher,
    KeywordMatcher,
    catalog_texts,
    composition_texts,
    pattern_texts,
    words,
)
from codelibrarian.planning.training import Labelled
from codelibrarian.query.embed import load_embedder
from codelibrarian.techniques.registry import default_library
from harness.procs import BENCHMARKS, REPO, run_side

INTENTS = BENCHMARKS / "intents" / "intents.jsonl"
#: the later tuning splits, each in its own file
EXTRA = {
    s: BENCHMARKS / "intents" / f"{s}.jsonl"
    for s in ("dev2", "dev3", "dev4", "dev5", "dev6", "dev7")
}
TUNING = ("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7")


def load(split: str | None) -> list[dict[str, Any]]:
    path = EXTRA.get(split or "", INTENTS)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if split is None or r["split"] == split]


def baseline_ranker() -> Any:
    lib = default_library()
    keys: dict[str, set[str]] = {}
    for pid, p in lib.patterns.items():
        text = " ".join([p.name, *p.metadata.actions, *p.metadata.domains])
        keys[pid] = set(words(text))

    def rank(text: str) -> list[str]:
        got = set(words(text))
        return sorted(keys, key=lambda pid: (-len(keys[pid] & got), pid))

    return rank


def example_model(train: str) -> Any:
    """``bundled``: the shipped model (dev .. dev7); ``none``: no example vote;
    otherwise a model trained on the catalog and the named tuning splits only (``dev``,
    ``dev2`` .. ``dev7`` joined by ``+``), so that the other splits are held-out checks."""
    if train == "bundled":
        return True
    if train == "none":
        return None
    return ExampleModel(catalog_texts(default_library()), training(train))


def ngram_model(train: str) -> Any:
    """The n-gram model for ``train`` as :func:`example_model` reads it: the shipped
    weights, none, or weights trained on the catalog and the named tuning splits only."""
    if train == "bundled":
        return True
    if train == "none":
        return None
    return train_ngrams(catalog_texts(default_library()), training(train))


def training(train: str) -> list[Labelled]:
    rows = [r for split in train.split("+") for r in load(split)]
    assert all(r["split"] in TUNING for r in rows)
    return [Labelled(r["intent"], r["label"], r["also"]) for r in rows]


def matcher_texts(train: str) -> dict[str, tuple[str, ...]]:
    """Pattern texts for the matchers: with the training requests of the same subset the
    example vote was trained on, so a held-out split never meets its own rows."""
    lib = default_library()
    if train == "bundled":
        return pattern_texts(lib)
    out = {k: list(v) for k, v in catalog_texts(lib).items()}
    for row in training(train) if train != "none" else []:
        for key in (row.label, row.also):
            if key is not None:
                out[key].append(row.text)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def planner_ranker(mode: str, train: str = "bundled") -> Any:
    lib = default_library()
    model = example_model(train)
    linear = ngram_model(train)
    if mode == "embeddings":
        emb = load_embedder()
        if emb is None:
            raise SystemExit("the embeddings selector needs the `semantic` extra")
        pm: Any = HybridMatcher(
            EmbeddingMatcher(emb, matcher_texts(train)), KeywordMatcher(matcher_texts(train))
        )
        cm: Any = HybridMatcher(
            EmbeddingMatcher(emb, composition_texts(lib)), KeywordMatcher(composition_texts(lib))
        )
    else:
        pm = KeywordMatcher(matcher_texts(train))
        cm = KeywordMatcher(composition_texts(lib))

    def rank(text: str) -> list[str]:
        return [c.id for c in select(text, lib, pm, cm, examples=model, ngrams=linear).patterns]

    return rank


def score(rows: list[dict[str, Any]], rank: Any) -> dict[str, Any]:
    top1 = top3 = strict1 = strict3 = 0
    per: Counter[str] = Counter()
    per_total: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for r in rows:
        ranked = rank(r["intent"])
        ok = {r["label"], r["also"]} - {None}
        per_total[r["label"]] += 1
        if ranked[0] in ok:
            top1 += 1
            per[r["label"]] += 1
        else:
            misses.append({"intent": r["intent"], "label": r["label"], "also": r["also"],
                           "got": ranked[:3]})  # fmt: skip
        top3 += bool(ok & set(ranked[:3]))
        strict1 += ranked[0] == r["label"]
        strict3 += r["label"] in ranked[:3]
    n = len(rows)
    ms = (time.perf_counter() - t0) * 1000 / max(1, n)
    return {
        "n": n,
        "top1": round(100 * top1 / n, 1),
        "top3": round(100 * top3 / n, 1),
        "strict_top1": round(100 * strict1 / n, 1),
        "strict_top3": round(100 * strict3 / n, 1),
        "per_pattern_recall": {
            p.removeprefix("pattern_"): f"{per[p]}/{per_total[p]}" for p in sorted(per_total)
        },
        "ms_per_intent": round(ms, 2),
        "_misses": misses,
    }


#: the splits the rotation holds out in turn; each is scored with the vote and the
#: nearest-example texts trained on every other tuning split (``dev`` included)
ROTATION = ("dev2", "dev3", "dev4", "dev5", "dev6", "dev7")


def rotation(selectors: list[str], errors: bool) -> dict[str, dict[str, Any]]:
    """Each split of :data:`ROTATION` held out in turn, trained on the other tuning splits;
    with ``errors``, print the held-out top-3 misses (tuning splits only, never eval)."""
    out: dict[str, dict[str, Any]] = {}
    for name in selectors:
        means = Counter[str]()
        for held in ROTATION:
            train = "+".join(s for s in TUNING if s != held)
            res = score(load(held), planner_ranker(name, train))
            misses = res.pop("_misses")
            out[f"{name}/{held}"] = res
            for key in ("top1", "top3", "strict_top1", "strict_top3"):
                means[key] += res[key]
            for m in misses if errors else []:
                if not {m["label"], m["also"]} & set(m["got"]):
                    got = ", ".join(g.removeprefix("pattern_") for g in m["got"])
                    also = f"/{m['also'].removeprefix('pattern_')}" if m["also"] else ""
                    want = m["label"].removeprefix("pattern_") + also
                    print(f"[{name}/{held}] want {want}; got {got}: {m['intent']}")
        n = sum(len(load(h)) for h in ROTATION)
        out[f"{name}/mean"] = {"n": n, **{k: round(v / len(ROTATION), 2) for k, v in means.items()}}
    return out


def first_plan(runs: int, src: Path) -> dict[str, float]:
    """Median wall time (ms) of a fresh process's first selection against the package in
    ``src``: the whole of it (imports, library, matchers, one ``select``) and the part
    after the imports and the library (matchers and one ``select``); modes alternated."""
    import statistics

    got: dict[str, list[list[float]]] = {"keywords": [], "embeddings": []}
    for _ in range(runs):
        for mode in ("keywords", "embeddings"):
            got[mode].append(run_side("first-plan", [mode], src, "the first selection"))
    out: dict[str, float] = {}
    for mode, rows in got.items():
        out[f"{mode}_whole_ms"] = round(statistics.median(r[0] for r in rows), 1)
        out[f"{mode}_matchers_and_select_ms"] = round(statistics.median(r[1] for r in rows), 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--split",
        choices=("dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "tuning", "eval", "all"),
        default="tuning",
    )
    ap.add_argument("--selectors", default="embeddings,keywords,baseline")
    ap.add_argument("--errors", action="store_true", help="print misses (tuning splits only)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--first-plan", action="store_true", help="time a fresh process's first select")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--src", type=Path, default=REPO / "src", help="package tree --first-plan imports"
    )
    ap.add_argument(
        "--train",
        default="bundled",
        help="example vote and n-gram model: bundled (the shipped files), none, or tuning"
        " splits joined by + (dev, dev2, dev3, dev+dev2, ...)",
    )
    ap.add_argument(
        "--rotation",
        action="store_true",
        help="hold out dev2 .. dev7 in turn, training on the other tuning splits",
    )
    args = ap.parse_args(argv)
    if args.rotation:
        names = [n for n in args.selectors.split(",") if n != "baseline"]
        _print(rotation(names, args.errors), args.json)
        return 0
    if args.first_plan:
        print(json.dumps(first_plan(args.runs, args.src), indent=2))
        return 0
    splits = {"tuning": TUNING, "all": (*TUNING, "eval")}.get(args.split, (args.split,))
    if args.errors and "eval" in splits:
        raise SystemExit("--errors is for the tuning splits only: eval is never read item by item")
    rankers = {
        "embeddings": lambda: planner_ranker("embeddings", args.train),
        "keywords": lambda: planner_ranker("keywords", args.train),
        "baseline": baseline_ranker,
    }
    out: dict[str, dict[str, Any]] = {}
    for name in args.selectors.split(","):
        rank = rankers[name]()
        for split in splits:
            res = score(load(split), rank)
            misses = res.pop("_misses")
            out[f"{name}/{split}"] = res
            if args.errors and split in TUNING:
                for m in misses:
                    got = ", ".join(g.removeprefix("pattern_") for g in m["got"])
                    want = m["label"].removeprefix("pattern_")
                    also = f" (also {m['also'].removeprefix('pattern_')})" if m["also"] else ""
                    print(f"[{name}/{split}] want {want}{also}; got {got}: {m['intent']}")
    _print(out, args.json)
    return 0


def _print(out: dict[str, dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(out, indent=2))
        return
    print(f"{'selector/half':<22} {'n':>4} {'top1':>6} {'top3':>6} {'strict1':>8} {'strict3':>8}")
    for key, r in out.items():
        print(
            f"{key:<22} {r['n']:>4} {r['top1']:>6} {r['top3']:>6} "
            f"{r['strict_top1']:>8} {r['strict_top3']:>8}"
        )


if __name__ == "__main__":
    sys.exit(main())
