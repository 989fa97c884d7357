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
from .constraints import ComposerConstraints, first_match
from .scoring import rank_key, score
from .types import Candidate, Verdict

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
    scored = [(rank_key(c, s, prio), s, c) for c in unique for s in (score(c),)]
    scored.sort(key=lambda item: item[0])

    lanes = budget.lanes
    used: dict[str, int] = dict.fromkeys(LANES, 0)
    total_used = 0
    outcome: dict[str, tuple[bool, str, str]] = {}
    eligible: list[tuple[int, Candidate]] = []  # (rank, candidate) in rank order
    forced: set[str] = set()
    has_forced_rules = bool(constraints.pinned or constraints.must_include)

    for rank, (_, _, cand) in enumerate(scored):
        if constraints.must_exclude:
            hit = first_match(cand, constraints.must_exclude)
            if hit is not None:
                outcome[cand.id] = (False, "excluded_by_policy", hit.reason)
                continue
        if has_forced_rules:
            hit = first_match(cand, constraints.pinned)
            reason = "pinned"
            if hit is None:
                hit = first_match(cand, constraints.must_include)
                reason = "must_include"
            if hit is not None:
                outcome[cand.id] = (True, reason, hit.reason)
                forced.add(cand.id)
                used[cand.lane] += cand.token_estimate
                total_used += cand.token_estimate
                continue
        eligible.append((rank, cand))

    # reservations: lane minimums and policy requirements, filled by score in-lane
    targets = reservation_targets(budget, constraints)
    by_lane: dict[str, list[Candidate]] = {lane: [] for lane in LANES}
    for _, cand in eligible:
        by_lane[cand.lane].append(cand)
    protect: dict[str, int] = {}
    for lane in LANES:
        target = targets[lane][0]
        available = used[lane] + sum(c.token_estimate for c in by_lane[lane])
        protect[lane] = max(0, min(target, available) - used[lane])
    reservations: list[LaneReservation] = []
    for lane in lane_sequence(budget):
        target, required = targets[lane]
        protect[lane] = 0
        held_for_later = sum(protect.values())
        lane_max = lanes[lane].max
        for cand in by_lane[lane]:
            if used[lane] >= target:
                break
            est = cand.token_estimate
            if (
                used[lane] + est > lane_max
                or total_used + est > budget.total_tokens - held_for_later
            ):
                continue
            why = "lane_min" if used[lane] < lanes[lane].min else "lane_requirement"
            detail = (
                f"{lane} lane minimum {lanes[lane].min}"
                if why == "lane_min"
                else f"{lane} lane requirement {required}"
            )
            outcome[cand.id] = (True, why, detail)
            used[lane] += est
            total_used += est
        reservations.append(LaneReservation(lane, target, required, used[lane]))

    # global fill by score
    for _, cand in eligible:
        if cand.id in outcome:
            continue
        lane, est = cand.lane, cand.token_estimate
        if used[lane] + est > lanes[lane].max:
            outcome[cand.id] = (
                False,
                "lane_max_reached",
                f"{lane} lane at {used[lane]}/{lanes[lane].max}",
            )
        elif total_used + est > budget.total_tokens:
            outcome[cand.id] = (
                False,
                "budget_exceeded",
                f"total at {total_used}/{budget.total_tokens}",
            )
        else:
            outcome[cand.id] = (True, "score", "")
            used[lane] += est
            total_used += est

    verdicts: list[Verdict] = []
    chosen: list[tuple[int, int, Candidate]] = []
    for rank, (_, s, cand) in enumerate(scored):
        ok, reason, detail = outcome[cand.id]
        verdicts.append(
            Verdict(cand.id, cand.kind, cand.lane, cand.token_estimate, s, rank, ok, reason, detail)
        )
        if ok:
            chosen.append((prio[cand.lane], rank, cand))
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
    chosen.sort(key=lambda item: (item[0], item[1]))
    return Selection(
        verdicts=tuple(verdicts),
        selected=tuple(c for _, _, c in chosen),
        forced_ids=frozenset(forced),
        lane_usage=dict(used),
        reservations=tuple(sorted(reservations, key=lambda r: prio[r.lane])),
        lane_priority=prio,
    )
