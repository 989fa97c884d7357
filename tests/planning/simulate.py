"""Simulated workflow runs: a seeded, deterministic source of run traces.

For the evolution tests and ``benchmarks/bench_planning.py evolve`` (it lived in the
library, which never used it): :func:`simulate_runs` draws ``n`` runs from the library's
compositions (each primitive in order, succeeding most of the time) and plants two
things evolution should find:

* a **frequent ad-hoc sequence** (:data:`PLANTED_SEQUENCE`, run as composition
  ``adhoc`` with a noisy tail) that succeeds about nine times in ten;
* a **failing composition** (:data:`FAILING`), whose :data:`FAILING_STEP` fails in
  four runs of five, last used :data:`FAILING_IDLE_DAYS` days before ``as_of``.

The random generator is ``random.Random(seed)``: the same arguments give the
same traces on every machine and under every hash seed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from codelibrarian.execution.traces import RunTrace, StepOutcome, StepTrace

__all__ = [
    "FAILING",
    "FAILING_IDLE_DAYS",
    "FAILING_STEP",
    "PLANTED_SEQUENCE",
    "simulate_runs",
]

PLANTED_SEQUENCE: tuple[str, ...] = ("tp_search_history", "tp_change_impact", "tp_review_tests")
FAILING = "tc_profile_hotspots"
FAILING_STEP = "tp_profile"
FAILING_IDLE_DAYS = 45
_DAY = 86_400
_NOISE = ("tp_risk_scan", "tp_write_docs", "tp_secret_scan", "tp_arch_mapping")
_ACTIONS = ("debug", "review", "build", "refactor", "analyze", "optimize")


def _steps(
    rng: random.Random,
    prims: Sequence[str],
    start: int,
    *,
    fail_at: int | None,
    fail_outcome: StepOutcome = "failure",
) -> tuple[StepTrace, ...]:
    out: list[StepTrace] = []
    t = start
    seen: dict[str, int] = {}
    for i, pid in enumerate(prims):
        n = seen.get(pid, 0) + 1
        seen[pid] = n
        sid = pid if n == 1 else f"{pid}__{n}"
        duration = rng.randrange(2_000, 400_000)
        failed = fail_at is not None and i == fail_at
        outcome: StepOutcome = fail_outcome if failed else "success"
        attempts = rng.choice((1, 1, 1, 2)) if not failed else rng.choice((1, 2, 3))
        out.append(StepTrace(sid, pid, outcome, attempts, t, duration, rng.randrange(800, 9000)))
        t += duration // 1000 + 1
        if failed:
            break
    return tuple(out)


def simulate_runs(
    n: int,
    compositions: Mapping[str, Sequence[str]],
    *,
    as_of: int,
    seed: int = 0,
    planted_share: int = 120,
    failing_runs: int = 40,
) -> tuple[RunTrace, ...]:
    """``n`` runs (``failing_runs`` of :data:`FAILING`, about ``planted_share`` per
    mille of the rest with the planted sequence), oldest first; ``compositions``
    maps composition ids to their primitives in order."""
    rng = random.Random(seed)
    ordinary = sorted(c for c in compositions if c != FAILING)
    runs: list[RunTrace] = []
    span = 90 * _DAY
    for i in range(n):
        run_id = f"run{i:05d}"
        action = rng.choice(_ACTIONS)
        if i < failing_runs and FAILING in compositions:
            start = as_of - FAILING_IDLE_DAYS * _DAY - rng.randrange(0, 40 * _DAY)
            prims = list(compositions[FAILING])
            ok = i % 5 == 0  # one run in five succeeds
            fail_at = None if ok else prims.index(FAILING_STEP) if FAILING_STEP in prims else 0
            steps = _steps(rng, prims, start, fail_at=fail_at)
            cid = FAILING
        elif rng.randrange(1000) < planted_share:
            start = as_of - rng.randrange(_DAY, span)
            prims = [*PLANTED_SEQUENCE, *rng.sample(_NOISE, rng.randrange(0, 3))]
            ok = rng.randrange(1000) < 900
            steps = _steps(rng, prims, start, fail_at=None if ok else len(prims) - 1)
            cid = "adhoc"
        else:
            start = as_of - rng.randrange(_DAY, span)
            cid = rng.choice(ordinary)
            prims = list(compositions[cid])
            ok = rng.randrange(1000) < 850
            steps = _steps(rng, prims, start, fail_at=None if ok else rng.randrange(len(prims)))
        finished = start + sum(s.duration_ms for s in steps) // 1000 + 1
        runs.append(
            RunTrace(
                run_id=run_id,
                composition_id=cid,
                pattern_id=None,
                intent_action=action,
                intent_domain=None,
                status="succeeded" if ok else "failed",
                started_at=start,
                finished_at=finished,
                steps=steps,
            )
        )
    return tuple(sorted(runs, key=lambda r: (r.started_at, r.run_id)))
