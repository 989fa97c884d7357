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

import gc
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress, filterfalse, islice, repeat
from operator import attrgetter, eq

from ..config import LANES, BudgetConfig
from .budget import lane_priorities, lane_sequence, reservation_targets
from .constraints import ComposerConstraints, RuleSet
from .types import LANE_ORDER, RANK_LANE_UNIT, Candidate, Verdict

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


_ID = attrgetter("id")
_HUNK_START = re.compile(r"@@ -(\d+)")


def _start(cand: Candidate) -> int:
    """The first file line a candidate shows: its line range, else its first hunk's."""
    if cand.lines is not None:
        return cand.lines[0]
    if cand.hunks:
        found = _HUNK_START.match(cand.hunks[0].header)
        if found:
            return int(found.group(1))
    return 0


def _tie(cand: Candidate) -> tuple[str, int, str, str]:
    """Order among equal rank keys: source position (path, first line), content, id.

    Ids are keyed by the workspace's secret, so ordering ties by id alone made two
    clones of one repository show different packs for the same task. Position and
    content hash are the same everywhere (and source order reads naturally); the id
    ends the key, so the order stays total.
    """
    return (cand.path, _start(cand), cand.content_hash, cand.id)


_PATH = attrgetter("path")
_RANK_BASE = attrgetter("rank_base")
_COLUMNS = attrgetter("id", "kind", "lane", "token_estimate", "score")
_new_verdict = tuple.__new__  # Verdict is a NamedTuple; this skips its Python-level __new__


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while selection allocates.

    Selection makes tens of thousands of small acyclic objects (verdicts,
    columns); the collections their allocation triggers scan the caller's whole
    heap and free nothing, which doubled the 10k-candidate p95. Nothing here
    forms a reference cycle, so pausing loses nothing; the prior state is restored.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _dedupe(candidates: Iterable[Candidate]) -> tuple[list[Candidate], list[Candidate]]:
    cands = list(candidates)
    if len(set(map(_ID, cands))) == len(cands):
        return cands, []
    by_id: dict[str, Candidate] = {}
    dupes: list[Candidate] = []
    for cand in cands:
        other = by_id.get(cand.id)
        if other is None:
            by_id[cand.id] = cand
            continue
        keep, drop = sorted((other, cand), key=lambda c: repr(c.shape()))
        by_id[cand.id] = keep
        dupes.append(drop)
    return list(by_id.values()), dupes


def _ranked(unique: list[Candidate], prio: Mapping[str, int]) -> list[Candidate]:
    """``unique`` in rank order (see ``scoring``): score desc, lane, kind, then :func:`_tie`.

    The key is ``Candidate.rank_base`` (score, lane and kind packed in one small
    integer, which sorts in C), shifted when the budget reorders the lanes; the
    rare runs of equal keys are then re-sorted by path, first line, content hash and id. Ids
    are unique, so the order is total.
    """
    shift = {lane: (prio[lane] - LANE_ORDER[lane]) * RANK_LANE_UNIT for lane in LANES}
    key = (lambda c: c.rank_base + shift[c.lane]) if any(shift.values()) else _RANK_BASE
    ranked = sorted(unique, key=key)
    keys = list(map(key, ranked))
    done = 0
    for i in compress(range(1, len(keys)), map(eq, keys, islice(keys, 1, None))):
        if i < done:
            continue  # inside a run already sorted
        end = i + 1
        while end < len(keys) and keys[end] == keys[i]:
            end += 1
        ranked[i - 1 : end] = sorted(ranked[i - 1 : end], key=_tie)
        done = end
    return ranked


def _capped_sum(values: Iterable[int], cap: int) -> int:
    """``min(sum(values), cap)``, stopping as soon as the cap is reached."""
    total = 0
    for value in values:
        total += value
        if total >= cap:
            return cap
    return total


def select(
    candidates: Iterable[Candidate], budget: BudgetConfig, constraints: ComposerConstraints
) -> Selection:
    """Choose candidates under ``budget`` honouring ``constraints`` (estimates only).

    The hot paths work on columns (one sequence per field, in rank order) with
    ``map``/``zip``/``compress``, so per-candidate work stays in C.
    """
    with _gc_paused():
        return _select(candidates, budget, constraints)


def _select(
    candidates: Iterable[Candidate], budget: BudgetConfig, constraints: ComposerConstraints
) -> Selection:
    prio = lane_priorities(budget)
    unique, dupes = _dedupe(candidates)
    count = len(unique)
    ranked = _ranked(unique, prio)
    r_ids: Sequence[str] = ()
    r_kinds: Sequence[str] = ()
    r_lanes: Sequence[str] = ()
    r_est: Sequence[int] = ()
    r_scores: Sequence[int] = ()
    if count:
        r_ids, r_kinds, r_lanes, r_est, r_scores = zip(*map(_COLUMNS, ranked), strict=True)

    chosen = [False] * count
    reasons = [""] * count
    details = [""] * count
    lanes = budget.lanes
    lane_max = {lane: lanes[lane].max for lane in LANES}
    lane_min = {lane: lanes[lane].min for lane in LANES}
    used: dict[str, int] = dict.fromkeys(LANES, 0)
    total_used = 0
    total = budget.total_tokens
    forced: set[str] = set()
    eligible: Sequence[int] = range(count)  # ranks still to decide, in rank order
    if count and (constraints.must_exclude or constraints.pinned or constraints.must_include):
        columns = (r_ids, r_kinds, r_lanes, list(map(_PATH, ranked)))
        excluded_by = RuleSet(constraints.must_exclude)
        pinned_by = RuleSet(constraints.pinned)
        included_by = RuleSet(constraints.must_include)
        ex_hit = excluded_by.matches(*columns)
        pin_hit = pinned_by.matches(*columns)
        inc_hit = included_by.matches(*columns)
        flagged = {*ex_hit, *pin_hit, *inc_hit}
        for rank in sorted(flagged):
            if rank in ex_hit:
                reasons[rank] = "excluded_by_policy"
                details[rank] = excluded_by.rules[ex_hit[rank]].reason
                continue
            chosen[rank] = True
            if rank in pin_hit:
                reasons[rank], details[rank] = "pinned", pinned_by.rules[pin_hit[rank]].reason
            else:
                reasons[rank] = "must_include"
                details[rank] = included_by.rules[inc_hit[rank]].reason
            forced.add(r_ids[rank])
            used[r_lanes[rank]] += r_est[rank]
            total_used += r_est[rank]
        if flagged:
            eligible = list(filterfalse(flagged.__contains__, range(count)))
    eligible_lanes = list(map(r_lanes.__getitem__, eligible))

    def lane_ranks(lane: str) -> Iterator[int]:
        """Eligible ranks of one lane, in rank order (lazily: reservations stop early)."""
        return compress(eligible, map(eq, eligible_lanes, repeat(lane)))

    # reservations: lane minimums and policy requirements, filled by score in-lane
    targets = reservation_targets(budget, constraints)
    protect = {
        lane: _capped_sum(map(r_est.__getitem__, lane_ranks(lane)), targets[lane][0] - used[lane])
        if targets[lane][0] > used[lane]
        else 0
        for lane in LANES
    }
    reservations: list[LaneReservation] = []
    for lane in lane_sequence(budget):
        target, required = targets[lane]
        protect[lane] = 0
        ceiling = total - sum(protect.values())
        if used[lane] < target:
            for rank in lane_ranks(lane):
                est = r_est[rank]
                if used[lane] + est > lane_max[lane] or total_used + est > ceiling:
                    continue
                chosen[rank] = True
                if used[lane] < lane_min[lane]:
                    reasons[rank] = "lane_min"
                    details[rank] = f"{lane} lane minimum {lane_min[lane]}"
                else:
                    reasons[rank] = "lane_requirement"
                    details[rank] = f"{lane} lane requirement {required}"
                used[lane] += est
                total_used += est
                if used[lane] >= target:
                    break
        reservations.append(LaneReservation(lane, target, required, used[lane]))

    # global fill by score; a rejection's detail only changes when usage does
    lane_full = dict.fromkeys(LANES, (-1, ""))
    budget_full = (-1, "")
    for rank, lane, est in zip(
        eligible, eligible_lanes, map(r_est.__getitem__, eligible), strict=True
    ):
        if chosen[rank]:
            continue
        if used[lane] + est > lane_max[lane]:
            reasons[rank] = "lane_max_reached"
            if lane_full[lane][0] != used[lane]:
                lane_full[lane] = (used[lane], f"{lane} lane at {used[lane]}/{lane_max[lane]}")
            details[rank] = lane_full[lane][1]
        elif total_used + est > total:
            reasons[rank] = "budget_exceeded"
            if budget_full[0] != total_used:
                budget_full = (total_used, f"total at {total_used}/{total}")
            details[rank] = budget_full[1]
        else:
            chosen[rank] = True
            reasons[rank] = "score"
            used[lane] += est
            total_used += est

    verdicts: list[Verdict] = list(
        map(
            _new_verdict,
            repeat(Verdict),
            zip(
                r_ids,
                r_kinds,
                r_lanes,
                r_est,
                r_scores,
                range(count),
                chosen,
                reasons,
                details,
                strict=True,
            ),
        )
    )
    dupes.sort(key=lambda c: (c.id, repr(c.shape())))
    for cand in dupes:
        verdicts.append(
            Verdict(
                cand.id,
                cand.kind,
                cand.lane,
                cand.token_estimate,
                cand.score,
                len(verdicts),
                False,
                "duplicate_id",
                "another candidate has this id",
            )
        )
    picked = sorted(compress(range(count), chosen), key=lambda r: (prio[r_lanes[r]], r))
    return Selection(
        verdicts=tuple(verdicts),
        selected=tuple(map(ranked.__getitem__, picked)),
        forced_ids=frozenset(forced),
        lane_usage=dict(used),
        reservations=tuple(sorted(reservations, key=lambda r: prio[r.lane])),
        lane_priority=prio,
    )
