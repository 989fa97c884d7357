"""Selection: every candidate gets a verdict with a reason code.

Order of work (the seed's, with its defects fixed):

1. duplicates — two candidates with one id: the one with the smallest content
   hash (then shape) stays; the others are rejected ``duplicate_id``.
2. exclusions — ``must_exclude`` wins over everything (``excluded_by_policy``).
3. pinned, then must-include — selected unconditionally here (``pinned`` /
   ``must_include``); whether they fit is decided on the rendered text, where an
   impossible budget raises ``BudgetInfeasible`` instead of silently overflowing.
4. reservations — lanes in priority order are filled, by score within the lane,
   up to ``max(lane.min, lane requirement)`` (``lane_min`` / ``lane_requirement``).
   While one lane fills, the still-unfilled reservations of later lanes are
   protected, so a high-priority lane cannot starve another's minimum.
5. global fill by score under lane maxima and the total (``score``; rejected
   ``lane_max_reached`` or ``budget_exceeded``).

All of it runs on token *estimates*; render.py then measures the real text.
The result does not depend on the order candidates arrive in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..config import LANES, BudgetConfig
from .budget import lane_priorities, lane_sequence, reservation_targets
from .constraints import ComposerConstraints, RuleSet
from .scoring import WEIGHTS, score
from .types import KIND_PRIORITY, Candidate, Verdict

__all__ = ["LaneReservation", "Selection", "select"]


@dataclass(frozen=True, slots=True)
class LaneReservation:
    lane: str
    target: int  # tokens reserved: max(min, requirement) capped at max
    required: int  # largest lane requirement from policy (0 if none)
    filled: int  # estimate tokens selected in the lane after reservation


@dataclass(frozen=True, slots=True)
class Selection:
    """Verdicts in rank order; ``selected`` in render order (lane priority, then rank)."""

    verdicts: tuple[Verdict, ...]
    selected: tuple[Candidate, ...]
    forced_ids: frozenset[str]
    lane_usage: Mapping[str, int]
    reservations: tuple[LaneReservation, ...]
    lane_priority: Mapping[str, int]

    def verdict(self, artifact_id: str) -> Verdict:
        for v in self.verdicts:
            if v.id == artifact_id and v.selected:
                return v
        for v in self.verdicts:
            if v.id == artifact_id:
                return v
        raise KeyError(artifact_id)


def _dedupe(candidates: Iterable[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    by_id: dict[str, Candidate] = {}
    dupes: list[Candidate] = []
    for cand in candidates:
        other = by_id.get(cand.id)
        if other is None:
            by_id[cand.id] = cand
            continue
        keep, drop = sorted((other, cand), key=lambda c: repr(c.shape()))
        by_id[cand.id] = keep
        dupes.append(drop)
    return list(by_id.values()), dupes


def select(
    candidates: Iterable[Candidate], budget: BudgetConfig, constraints: ComposerConstraints
) -> Selection:
    """Choose candidates under ``budget`` honouring ``constraints`` (estimates only)."""
    prio = lane_priorities(budget)
    unique, dupes = _dedupe(candidates)
    kind_prio = KIND_PRIORITY
    w_rec = WEIGHTS["recency"] * 200  # bucket 0..5 scaled to thousandths
    w_rel, w_spec, w_risk = WEIGHTS["relevance"], WEIGHTS["specificity"], WEIGHTS["risk"]
    # score() and rank_key() inlined: this is the hot loop (same values, see tests)
    order = sorted(
        [
            (
                -(
                    w_rec * c.recency_bucket
                    + w_rel * c.relevance
                    + w_spec * c.specificity
                    + w_risk * c.risk
                ),
                prio[c.lane],
                kind_prio[c.kind],
                c.id,
                i,  # ids are unique, so the index never decides and tuples compare in C
            )
            for i, c in enumerate(unique)
        ]
    )
    count = len(order)
    chosen = [False] * count
    reasons = [""] * count
    details = [""] * count

    lanes = budget.lanes
    lane_max = {lane: lanes[lane].max for lane in LANES}
    lane_min = {lane: lanes[lane].min for lane in LANES}
    used: dict[str, int] = dict.fromkeys(LANES, 0)
    total_used = 0
    total = budget.total_tokens
    eligible: list[int] = []  # ranks of candidates still to decide, in rank order
    forced: set[str] = set()
    ranked = [unique[item[4]] for item in order]
    if constraints.must_exclude or constraints.pinned or constraints.must_include:
        excluded_by = RuleSet(constraints.must_exclude)
        pinned_by = RuleSet(constraints.pinned)
        included_by = RuleSet(constraints.must_include)
        no_ex, no_pin, no_inc = len(excluded_by.rules), len(pinned_by.rules), len(included_by.rules)
        hits = zip(
            excluded_by.resolve(ranked),
            pinned_by.resolve(ranked),
            included_by.resolve(ranked),
            strict=True,
        )
        for rank, (ex, pin, inc) in enumerate(hits):
            if ex < no_ex:
                reasons[rank] = "excluded_by_policy"
                details[rank] = excluded_by.rules[ex].reason
                continue
            if pin < no_pin or inc < no_inc:
                cand = ranked[rank]
                chosen[rank] = True
                if pin < no_pin:
                    reasons[rank], details[rank] = "pinned", pinned_by.rules[pin].reason
                else:
                    reasons[rank], details[rank] = "must_include", included_by.rules[inc].reason
                forced.add(cand.id)
                used[cand.lane] += cand.token_estimate
                total_used += cand.token_estimate
                continue
            eligible.append(rank)
    else:
        eligible = list(range(count))

    # reservations: lane minimums and policy requirements, filled by score in-lane
    targets = reservation_targets(budget, constraints)
    by_lane: dict[str, list[int]] = {lane: [] for lane in LANES}
    available = dict.fromkeys(LANES, 0)
    for rank in eligible:
        cand = ranked[rank]
        by_lane[cand.lane].append(rank)
        available[cand.lane] += cand.token_estimate
    protect = {
        lane: max(0, min(targets[lane][0], used[lane] + available[lane]) - used[lane])
        for lane in LANES
    }
    reservations: list[LaneReservation] = []
    for lane in lane_sequence(budget):
        target, required = targets[lane]
        protect[lane] = 0
        ceiling = total - sum(protect.values())
        for rank in by_lane[lane]:
            if used[lane] >= target:
                break
            est = ranked[rank].token_estimate
            if used[lane] + est > lane_max[lane] or total_used + est > ceiling:
                continue
            chosen[rank] = True
            if used[lane] < lane_min[lane]:
                reasons[rank], details[rank] = "lane_min", f"{lane} lane minimum {lane_min[lane]}"
            else:
                reasons[rank], details[rank] = (
                    "lane_requirement",
                    f"{lane} lane requirement {required}",
                )
            used[lane] += est
            total_used += est
        reservations.append(LaneReservation(lane, target, required, used[lane]))

    # global fill by score
    for rank in eligible:
        if reasons[rank]:
            continue
        cand = ranked[rank]
        lane, est = cand.lane, cand.token_estimate
        if used[lane] + est > lane_max[lane]:
            reasons[rank] = "lane_max_reached"
            details[rank] = f"{lane} lane at {used[lane]}/{lane_max[lane]}"
        elif total_used + est > total:
            reasons[rank] = "budget_exceeded"
            details[rank] = f"total at {total_used}/{total}"
        else:
            chosen[rank] = True
            reasons[rank] = "score"
            used[lane] += est
            total_used += est

    new_verdict = tuple.__new__  # Verdict is a NamedTuple; skip its Python-level __new__
    verdicts = [
        new_verdict(
            Verdict,
            (
                c.id,
                c.kind,
                c.lane,
                c.token_estimate,
                -item[0],
                rank,
                chosen[rank],
                reasons[rank],
                details[rank],
            ),
        )
        for rank, (item, c) in enumerate(zip(order, ranked, strict=True))
    ]
    dupes.sort(key=lambda c: (c.id, repr(c.shape())))
    for cand in dupes:
        verdicts.append(
            Verdict(
                cand.id,
                cand.kind,
                cand.lane,
                cand.token_estimate,
                score(cand),
                len(verdicts),
                False,
                "duplicate_id",
                "another candidate has this id",
            )
        )
    picked = [(order[rank][1], rank, c) for rank, c in enumerate(ranked) if chosen[rank]]
    picked.sort(key=_pick_key)
    return Selection(
        verdicts=tuple(verdicts),
        selected=tuple(c for _, _, c in picked),
        forced_ids=frozenset(forced),
        lane_usage=dict(used),
        reservations=tuple(sorted(reservations, key=lambda r: prio[r.lane])),
        lane_priority=prio,
    )


def _pick_key(item: tuple[int, int, Candidate]) -> tuple[int, int]:
    return item[0], item[1]
