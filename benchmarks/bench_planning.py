#!/usr/bin/env python3
"""Advisor and planner speed (and what the advisor says) on real repositories.

    python benchmarks/bench_planning.py advise REPO [REPO ...] [--runs 5]
    python benchmarks/bench_planning.py plan --repo REPO [--runs 5]
    python benchmarks/bench_planning.py evolve [--n 500] [--seed 3]

``advise``: for each repository the index is built first (its time is printed,
not counted), then ``Librarian.advise()`` runs ``--runs`` times in one process
(each call checks the index is fresh, reads files, imports and symbols from it and
weighs the ten features), then ``librarian advise --json`` runs ``--runs`` times as
a whole process (start-up included). The features found and the suggestions with
their evidence files are printed, so the answer can be judged, not only timed.

``plan``: the index is built first; the first ``Librarian.plan()`` in a process
loads the technique library, the embedding model and the tokenizer ("first call");
then the intents below run round-robin ``--runs`` times each ("warm": same
process, index built). ``librarian plan INTENT --json`` is then timed as a whole
process. ``as_of`` is fixed so runs are comparable. Times are wall clock; the
figures are medians and maxima.

``evolve``: ``--n`` simulated runs (``tests/planning/simulate.py``: a planted frequent
sequence and a planted failing composition) through ``planning.evolution.evolve``;
prints what was found, the time, and the SHA-256 of the JSON report (run it under
several ``PYTHONHASHSEED`` values: the digest must not change).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from codelibrarian.api import Librarian
from harness.procs import REPO

AS_OF = 1_800_000_000
INTENTS = (
    "Why does the build fail with a KeyError since the last release",
    "Add an option to export the results as JSON",
    "Review my change before I open a pull request",
    "Refactor the configuration loading into one module",
)
CLI = [sys.executable, "-m", "codelibrarian"]


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _stats(samples: list[float]) -> dict[str, int]:
    return {"median_ms": _ms(statistics.median(samples)), "max_ms": _ms(max(samples))}


def _whole_process(args: list[str], runs: int) -> dict[str, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([*CLI, *args], capture_output=True, env=env, check=False)
        samples.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.decode()[-800:]}")
    return _stats(samples)


def bench_advise(repo: Path, runs: int) -> dict[str, Any]:
    with Librarian(repo) as lib:
        t0 = time.perf_counter()
        lib.index()
        index_s = time.perf_counter() - t0
        samples = []
        advice = None
        for _ in range(runs):
            t0 = time.perf_counter()
            advice = lib.advise()
            samples.append(time.perf_counter() - t0)
    assert advice is not None
    return {
        "repo": repo.name,
        "files_indexed": advice.files,
        "index_ms": _ms(index_s),
        "advise_in_process": _stats(samples),
        "advise_whole_process": _whole_process(["advise", "-C", str(repo), "--json"], runs),
        "present": [
            {"feature": f.id, "confidence": f.confidence, "evidence": list(f.evidence[:3])}
            for f in advice.features
            if f.present
        ],
        "absent": [f"{f.id} ({f.confidence})" for f in advice.features if not f.present],
        "suggestions": [
            {
                "composition": s.composition,
                "priority": s.priority,
                "reason": s.reason,
                "evidence": list(s.evidence),
            }
            for s in advice.suggestions
        ],
    }


def bench_plan(repo: Path, runs: int) -> dict[str, Any]:
    with Librarian(repo) as lib:
        lib.index()
        t0 = time.perf_counter()
        lib.plan(INTENTS[0], as_of=AS_OF)
        first = time.perf_counter() - t0
        samples: list[float] = []
        chosen: dict[str, str] = {}
        for _ in range(runs):
            for intent in INTENTS:
                t0 = time.perf_counter()
                plan = lib.plan(intent, as_of=AS_OF)
                samples.append(time.perf_counter() - t0)
                chosen[intent] = f"{plan.selection.pattern.id} -> {plan.chosen.id}"
        files = lib.advise(refresh=False).files
    whole = _whole_process(
        ["plan", INTENTS[0], "-C", str(repo), "--json", "--as-of", str(AS_OF)], max(1, runs // 2)
    )
    return {
        "repo": repo.name,
        "files_indexed": files,
        "first_call_ms": _ms(first),
        "plan_warm": {**_stats(samples), "calls": len(samples)},
        "plan_whole_process": whole,
        "chosen": chosen,
    }


def bench_evolve(n: int, seed: int) -> dict[str, Any]:
    import hashlib

    sys.path.insert(0, str(REPO))  # the simulated runs are the tests' fixture
    from tests.planning.simulate import FAILING, PLANTED_SEQUENCE, simulate_runs

    from codelibrarian.planning.evolution import evolve
    from codelibrarian.techniques.registry import default_library

    comps = {cid: c.primitives for cid, c in default_library().compositions.items()}
    runs = simulate_runs(n, comps, as_of=AS_OF, seed=seed)
    t0 = time.perf_counter()
    report = evolve(runs, comps, as_of=AS_OF)
    took = time.perf_counter() - t0
    text = json.dumps(report.to_dict())
    return {
        "runs": len(runs),
        "evolve_ms": _ms(took),
        "planted_sequence": list(PLANTED_SEQUENCE),
        "proposals": [(p.id, list(p.primitives), p.runs, p.score) for p in report.proposals],
        "mutations": [(m.composition, m.kind, m.primitive) for m in report.mutations],
        "deprecations": [(d.composition, d.runs, d.success) for d in report.deprecations],
        "planted_failing": FAILING,
        "report_sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


def _print_advice(r: dict[str, Any]) -> None:
    a, w = r["advise_in_process"], r["advise_whole_process"]
    print(f"## {r['repo']}: {r['files_indexed']} files indexed (index {r['index_ms']} ms)")
    print(f"advise in process: median {a['median_ms']} ms, max {a['max_ms']} ms")
    print(f"librarian advise (whole process): median {w['median_ms']} ms, max {w['max_ms']} ms")
    for f in r["present"]:
        print(f"  present {f['feature']} {f['confidence']}‰: {', '.join(f['evidence'])}")
    print(f"  absent: {', '.join(r['absent'])}")
    for s in r["suggestions"]:
        print(f"  suggest [{s['priority']}] {s['composition']}: {s['reason']}")
        print(f"      evidence: {', '.join(s['evidence'])}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("advise", "plan", "evolve"))
    ap.add_argument("repos", nargs="*", type=Path)
    ap.add_argument("--repo", type=Path, help="the repository for `plan`")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=500, help="simulated runs for `evolve`")
    ap.add_argument("--seed", type=int, default=3, help="simulation seed for `evolve`")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.mode == "evolve":
        print(json.dumps(bench_evolve(args.n, args.seed), indent=2))
        return 0
    if args.mode == "advise":
        if not args.repos:
            raise SystemExit("advise needs at least one repository")
        results = [bench_advise(r.resolve(), args.runs) for r in args.repos]
        if args.json:
            print(json.dumps(results, indent=2))
        else:
            for r in results:
                _print_advice(r)
        return 0
    if args.repo is None:
        raise SystemExit("plan needs --repo")
    r = bench_plan(args.repo.resolve(), args.runs)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        w, p = r["plan_warm"], r["plan_whole_process"]
        print(f"## {r['repo']}: {r['files_indexed']} files indexed")
        print(f"first plan in a process: {r['first_call_ms']} ms")
        print(f"warm plan: median {w['median_ms']} ms, max {w['max_ms']} ms over {w['calls']}")
        print(f"librarian plan (whole process): median {p['median_ms']} ms, max {p['max_ms']} ms")
        for intent, got in r["chosen"].items():
            print(f"  {intent!r}: {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
