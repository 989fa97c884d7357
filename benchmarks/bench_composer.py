"""Composer benchmarks: selection latency, render+shrink latency, cache hit rate.

    .venv/bin/python benchmarks/bench_composer.py            # full run
    .venv/bin/python benchmarks/bench_composer.py --quick    # fewer repetitions

Prints a Markdown section for benchmarks/RESULTS.md. Goals (issue 4): selection
p95 <= 5 ms at 1k and <= 50 ms at 10k candidates; render+shrink p95 <= 100 ms
for an 8k-token pack; cache hit rate > 80% on unchanged-workspace triggers.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime

from codelibrarian.composer import (
    KINDS,
    LANES,
    Candidate,
    ComposeContext,
    ComposerConstraints,
    CompositionCache,
    Constraint,
    LaneRequirement,
    Matcher,
    compose,
    select,
    text_hash,
)
from codelibrarian.composer.render import render_to_fit
from codelibrarian.config import BudgetConfig
from codelibrarian.tokens import BpeTokenizer, get_tokenizer

CONSTRAINTS = ComposerConstraints.of(
    pinned=[Constraint(Matcher.kind("local_diff"), "current changes")],
    must_exclude=[
        Constraint(Matcher.pattern("*.env"), "sensitive"),
        Constraint(Matcher.pattern("secrets/"), "sensitive"),
    ],
    must_include=[Constraint(Matcher.kind("violation"), "violations")],
    lane_requirements=[LaneRequirement("rules", 300, "protected workspace")],
)


def synthetic(n: int, seed: int = 7) -> list[Candidate]:
    """n candidates with scores and estimates; content is lazy (never loaded by select)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        kind = rnd.choice(KINDS)
        if kind in ("local_diff", "violation") and rnd.random() < 0.97:
            kind = "semantic_match"  # keep pins and must-includes to a realistic handful
        lane = rnd.choice(LANES)
        path = f"src/pkg{i % 97}/mod{i}.py" if i % 50 else f"conf/{i}.env"
        out.append(
            Candidate(
                id=f"{i:024x}",
                kind=kind,
                lane=lane,
                token_estimate=rnd.randint(20, 800),
                recency_bucket=rnd.randint(0, 5),
                relevance=rnd.randint(0, 1000),
                specificity=rnd.randint(0, 1000),
                risk=rnd.randint(0, 1000),
                path=path,
                title=path,
                content=lambda: "",
                content_hash=f"{i:032x}",
            )
        )
    return out


def timed(fn: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) per run. CPU time is reported too: this machine is shared."""
    wall, cpu = [], []
    for _ in range(runs):
        start, cstart = time.perf_counter_ns(), time.process_time_ns()
        fn()
        wall.append((time.perf_counter_ns() - start) / 1e6)
        cpu.append((time.process_time_ns() - cstart) / 1e6)
    return wall, cpu


def reference_loop() -> tuple[float, float]:
    """(wall ms, CPU ms) of a 1M-iteration Python loop (~30-50 ms on an idle modern core)."""

    def loop() -> None:
        total = 0
        for i in range(1_000_000):
            total += i

    wall, cpu = timed(loop, 5)
    return statistics.median(wall), statistics.median(cpu)


def pct(samples: list[float], q: int) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, (len(ordered) * q + 99) // 100 - 1)]


CODE = '''def handler_{i}(request, context):
    """Handle request {i}: validate, authorise, dispatch."""
    payload = request.json()
    if not payload.get("user"):
        raise ValueError("missing user in request {i}")
    for item in payload.get("items", []):
        context.queue.put((item["id"], item.get("qty", 1) * {i}))
    return {{"ok": True, "count": len(payload.get("items", []))}}
'''


def pack_candidates(seed: int) -> list[Candidate]:
    """Real content of ~16k tokens with estimates at half the truth: render must shrink."""
    tok = get_tokenizer("gpt-4o")
    rnd = random.Random(seed)
    out = []
    for i in range(40):
        body = "\n".join(CODE.format(i=i * 100 + j + seed) for j in range(rnd.randint(2, 6)))
        kind = ("symbol_context", "semantic_match", "recent_edit", "test_context")[i % 4]
        lane = ("structure", "retrieved", "local", "retrieved")[i % 4]
        out.append(
            Candidate(
                id=f"p{seed}-{i:03d}",
                kind=kind,
                lane=lane,
                token_estimate=tok.count(body) // 2,
                recency_bucket=i % 6,
                relevance=(i * 97) % 1000,
                specificity=500,
                risk=300,
                path=f"src/h{i}.py",
                title=f"src/h{i}.py",
                content=body,
                content_hash=text_hash(body),
                language="python",
            )
        )
    return out


def bench_selection(quick: bool) -> list[tuple[int, int, float, float, float, float]]:
    rows = []
    for n, full_runs in ((1_000, 200), (10_000, 50), (100_000, 10)):
        runs = max(5, full_runs // 5) if quick else full_runs
        cands = synthetic(n)
        budget = BudgetConfig()
        select(cands, budget, CONSTRAINTS)  # warm caches (pattern specs)
        wall, cpu = timed(functools.partial(select, cands, budget, CONSTRAINTS), runs)
        rows.append(
            (n, runs, statistics.median(wall), pct(wall, 95), statistics.median(cpu), pct(cpu, 95))
        )
    return rows


def bench_render(quick: bool) -> dict[str, float]:
    runs = 10 if quick else 40
    budget = BudgetConfig()  # 8000 tokens
    cold: list[float] = []
    cold_cpu: list[float] = []
    warm: list[float] = []
    end_to_end: list[float] = []
    for r in range(runs):
        cands = pack_candidates(seed=r + 1)  # fresh content each run: nothing cached
        selection = select(cands, budget, ComposerConstraints())
        bodies = {c.id: c.text() for c in selection.selected}
        fresh = BpeTokenizer("o200k_base")  # empty count cache: a cold render
        start, cstart = time.perf_counter_ns(), time.process_time_ns()
        result = render_to_fit(selection, bodies, fmt="markdown", tokenizer=fresh, budget=8000)
        cold.append((time.perf_counter_ns() - start) / 1e6)
        cold_cpu.append((time.process_time_ns() - cstart) / 1e6)
        assert result.tokens <= 8000
        start = time.perf_counter_ns()
        render_to_fit(selection, bodies, fmt="markdown", tokenizer=fresh, budget=8000)
        warm.append((time.perf_counter_ns() - start) / 1e6)
        ctx = ComposeContext.make(as_of=1_763_700_000 + r)
        tok2 = BpeTokenizer("o200k_base")
        start = time.perf_counter_ns()
        compose(cands, budget=budget, tokenizer=tok2, context=ctx)
        end_to_end.append((time.perf_counter_ns() - start) / 1e6)
    return {
        "runs": runs,
        "cold_p50": statistics.median(cold),
        "cold_p95": pct(cold, 95),
        "cold_cpu_p50": statistics.median(cold_cpu),
        "cold_cpu_p95": pct(cold_cpu, 95),
        "warm_p50": statistics.median(warm),
        "warm_p95": pct(warm, 95),
        "compose_p50": statistics.median(end_to_end),
        "compose_p95": pct(end_to_end, 95),
        "tokens": float(result.tokens),
    }


TRIGGERS = ("mcp_request", "file_saved", "manual", "session_start", "pre_commit")


def session_gap(rnd: random.Random) -> int:
    """An agent session: mostly quick calls, some thinking pauses, rare idle breaks."""
    roll = rnd.random()
    if roll < 0.83:
        return rnd.randint(3, 45)
    if roll < 0.98:
        return rnd.randint(60, 240)
    return rnd.randint(360, 900)


def session_trigger(rnd: random.Random) -> str:
    return rnd.choices(TRIGGERS, weights=(50, 20, 15, 5, 10))[0]


def harsh_gap(rnd: random.Random) -> int:
    return rnd.randint(5, 90)


def harsh_trigger(rnd: random.Random) -> str:
    return rnd.choice(TRIGGERS)


def bench_cache(
    gap: Callable[[random.Random], int],
    pick: Callable[[random.Random], str],
    events: int = 400,
) -> tuple[int, int, float]:
    """Replay a sequence of triggers over an unchanged workspace through the LRU cache."""
    rnd = random.Random(11)
    tok = get_tokenizer("gpt-4o")
    cands = pack_candidates(seed=99)
    cache: CompositionCache[object] = CompositionCache()
    now = 1_763_700_000
    hits = 0
    for _ in range(events):
        now += gap(rnd)
        trigger = pick(rnd)
        if trigger == "file_saved":  # saved without a content change: same fingerprint
            cache.invalidate("file_saved", workspace_fingerprint="wf")
        ctx = ComposeContext.make(as_of=now, workspace_fingerprint="wf", trigger=trigger)
        result = compose(cands, budget=BudgetConfig(), tokenizer=tok, context=ctx, cache=cache)  # type: ignore[arg-type]
        hits += result.cache_hit
    return hits, events, 100.0 * hits / events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        get_tokenizer("gpt-4o").count("warm")
    ref_wall, ref_cpu = reference_loop()
    sel = bench_selection(args.quick)
    ren = bench_render(args.quick)
    hits, events, rate = bench_cache(session_gap, session_trigger)
    hhits, hevents, hrate = bench_cache(harsh_gap, harsh_trigger)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    cmd = "python benchmarks/bench_composer.py" + (" --quick" if args.quick else "")
    lines = [
        "## Composer (issue 4)",
        "",
        f"- date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {platform.machine()}, {platform.processor() or 'unknown cpu'}, "
        f"Python {sys.version.split()[0]}, {platform.system()} (2 cores shared with other jobs)",
        f"- command: `{cmd}`",
        f"- load average during the run: {load}; reference 1M-iteration Python loop: "
        f"{ref_wall:.0f} ms wall, {ref_cpu:.0f} ms CPU (an idle modern core: ~30-50 ms)",
        "",
        "Selection (`select()`, estimates only; 1 pinned kind, 2 exclude patterns, 1 must-include,",
        "1 lane requirement):",
        "",
        "| candidates | runs | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms | goal p95 |",
        "|---:|---:|---:|---:|---:|---:|---|",
    ]
    goals = {1_000: "<= 5 ms", 10_000: "<= 50 ms", 100_000: "-"}
    for n, runs, w50, w95, c50, c95 in sel:
        lines.append(
            f"| {n:,} | {runs} | {w50:.1f} | {w95:.1f} | {c50:.1f} | {c95:.1f} | {goals[n]} |"
        )
    lines += [
        "",
        "Render + shrink of an 8,000-token pack (40 Python candidates, ~16k tokens of real",
        "content, estimates at half the truth so shrinking and dropping are needed;",
        f"{ren['runs']} runs, fresh content each run; final pack {int(ren['tokens'])} tokens):",
        "",
        "| phase | p50 ms | p95 ms | goal p95 |",
        "|---|---:|---:|---|",
        f"| render+shrink, cold token cache, wall | {ren['cold_p50']:.1f} | "
        f"{ren['cold_p95']:.1f} | <= 100 ms |",
        f"| render+shrink, cold token cache, CPU | {ren['cold_cpu_p50']:.1f} | "
        f"{ren['cold_cpu_p95']:.1f} | - |",
        f"| render+shrink, warm token cache, wall | {ren['warm_p50']:.1f} | "
        f"{ren['warm_p95']:.1f} | - |",
        f"| whole compose(), cold, wall | {ren['compose_p50']:.1f} | "
        f"{ren['compose_p95']:.1f} | - |",
        "",
        "Cache hit rate over an unchanged workspace (in-memory LRU, 5-minute session TTL,",
        "`file_saved` events without a content change invalidate nothing):",
        "",
        f"- agent session ({events} triggers; 83% within 3-45 s, 15% after 1-4 min, 2% after",
        f"  6-15 min idle; mostly `mcp_request`): {hits}/{events} = **{rate:.1f}%** (goal > 80%)",
        f"- harsh mix ({hevents} triggers, 5 trigger types uniformly, every 5-90 s; the trigger",
        f"  is recorded, not keyed): {hhits}/{hevents} = {hrate:.1f}%",
        "",
    ]
    sys.stdout.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
