"""``select`` against a plain reference model of the selection rules.

``select`` works on columns with C-level loops for speed (10k candidates per
call). This model says the same rules the slow, obvious way, one candidate at a
time, and hypothesis checks that both give identical verdicts and selections —
including rank ties (few distinct scores) and budgets that reorder the lanes.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.composer import Candidate, ComposerConstraints, select
from codelibrarian.composer.budget import lane_priorities, lane_sequence, reservation_targets
from codelibrarian.composer.constraints import first_match
from codelibrarian.composer.types import KIND_PRIORITY, KINDS, Verdict
from codelibrarian.config import LANES, BudgetConfig

from .strategies import IDS, PATHS, budgets, constraint_sets


def model_score(c: Candidate) -> int:
    """The documented formula, written out independently of ``Candidate.score``."""
    return 300 * 200 * c.recency_bucket + 350 * c.relevance + 200 * c.specificity + 150 * c.risk


def model_select(
    cands: list[Candidate], budget: BudgetConfig, constraints: ComposerConstraints
) -> tuple[list[Verdict], list[str]]:
    prio = lane_priorities(budget)
    unique: dict[str, Candidate] = {}
    dupes: list[Candidate] = []
    for c in cands:
        if c.id not in unique:
            unique[c.id] = c
            continue
        keep, drop = sorted((unique[c.id], c), key=lambda x: repr(x.shape()))
        unique[c.id], dupes = keep, [*dupes, drop]
    ranked = sorted(
        unique.values(),
        key=lambda c: (
            -model_score(c),
            prio[c.lane],
            KIND_PRIORITY[c.kind],
            c.path,
            c.lines[0] if c.lines else 0,
            c.content_hash,
            c.id,
        ),
    )
    outcome: dict[str, tuple[bool, str, str]] = {}
    used = dict.fromkeys(LANES, 0)
    eligible: list[Candidate] = []
    for c in ranked:
        excluded = first_match(c, constraints.must_exclude)
        pinned = first_match(c, constraints.pinned)
        included = first_match(c, constraints.must_include)
        if excluded is not None:
            outcome[c.id] = (False, "excluded_by_policy", excluded.reason)
        elif pinned is not None:
            outcome[c.id] = (True, "pinned", pinned.reason)
        elif included is not None:
            outcome[c.id] = (True, "must_include", included.reason)
        else:
            eligible.append(c)
            continue
        if outcome[c.id][0]:
            used[c.lane] += c.token_estimate
    total = budget.total_tokens
    targets = reservation_targets(budget, constraints)
    protect = {}
    for lane in LANES:
        available = sum(c.token_estimate for c in eligible if c.lane == lane)
        protect[lane] = max(0, min(targets[lane][0], used[lane] + available) - used[lane])
    for lane in lane_sequence(budget):
        target, required = targets[lane]
        protect[lane] = 0
        ceiling = total - sum(protect.values())
        for c in eligible:
            if c.lane != lane or c.id in outcome:
                continue
            if used[lane] >= target:
                break
            spec = budget.lanes[lane]
            if used[lane] + c.token_estimate > spec.max:
                continue
            if sum(used.values()) + c.token_estimate > ceiling:
                continue
            if used[lane] < spec.min:
                outcome[c.id] = (True, "lane_min", f"{lane} lane minimum {spec.min}")
            else:
                outcome[c.id] = (True, "lane_requirement", f"{lane} lane requirement {required}")
            used[lane] += c.token_estimate
    for c in eligible:
        if c.id in outcome:
            continue
        spec = budget.lanes[c.lane]
        if used[c.lane] + c.token_estimate > spec.max:
            outcome[c.id] = (
                False,
                "lane_max_reached",
                f"{c.lane} lane at {used[c.lane]}/{spec.max}",
            )
        elif sum(used.values()) + c.token_estimate > total:
            outcome[c.id] = (False, "budget_exceeded", f"total at {sum(used.values())}/{total}")
        else:
            outcome[c.id] = (True, "score", "")
            used[c.lane] += c.token_estimate
    verdicts = [
        Verdict(c.id, c.kind, c.lane, c.token_estimate, model_score(c), rank, *outcome[c.id])
        for rank, c in enumerate(ranked)
    ]
    for c in sorted(dupes, key=lambda x: (x.id, repr(x.shape()))):
        verdicts.append(
            Verdict(
                c.id,
                c.kind,
                c.lane,
                c.token_estimate,
                model_score(c),
                len(verdicts),
                False,
                "duplicate_id",
                "another candidate has this id",
            )
        )
    chosen = [v for v in verdicts if v.selected]
    order = sorted(chosen, key=lambda v: (prio[v.lane], v.rank))
    return verdicts, [v.id for v in order]


# few distinct scoring inputs, so equal scores (rank ties broken by lane, kind, path, line,
# content, id) are common
tied_candidates = st.builds(
    Candidate,
    id=st.sampled_from(IDS),
    kind=st.sampled_from(KINDS),
    lane=st.sampled_from(LANES),
    token_estimate=st.integers(0, 900),
    recency_bucket=st.integers(0, 1),
    relevance=st.sampled_from((0, 1000)),
    specificity=st.just(0),
    risk=st.sampled_from((0, 1000)),
    path=st.sampled_from(PATHS),
    lines=st.sampled_from((None, (1, 3), (2, 2), (5, 9))),
    content=st.sampled_from(("a", "b")),
)


@settings(max_examples=1500)
@given(st.lists(tied_candidates, max_size=40), budgets(), constraint_sets())
def test_select_matches_the_reference_model(
    cands: list[Candidate], budget: BudgetConfig, constraints: ComposerConstraints
) -> None:
    sel = select(cands, budget, constraints)
    verdicts, order = model_select(cands, budget, constraints)
    assert list(sel.verdicts) == verdicts
    assert [c.id for c in sel.selected] == order
    assert sel.lane_usage == {
        lane: sum(v.token_estimate for v in verdicts if v.selected and v.lane == lane)
        for lane in LANES
    }
