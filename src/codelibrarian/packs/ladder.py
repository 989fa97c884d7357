"""The context ladder: six rungs climbed from the composer's lanes, with a measurable stop.

The ladder does not gather anything itself. Its input is the candidate set the
sources produced for the trigger (one source per lane) *after* the policy
engine (sensitive files excluded, secrets redacted), plus the index. Each rung
turns some lanes' candidates into anchor drafts, best composer score first:

====  ====================  ===============================================================
rung  name                  built from
====  ====================  ===============================================================
1     nearby_code           local lane (``local_diff``): the changed lines' enclosing
                            definitions (or the hunk itself), distance 0; explicit files
2     module_view           the changed modules' synopsis (``#module``), structure lane
                            ``symbol_context`` (definitions the task or change names), and
                            call sites of changed definitions in files that import them
3     repo_view             retrieved lane ``semantic_match`` and ``test_context``,
                            through the relevance gate of ``rungs``
4     project_kb            rules lane ``rule_doc`` and policy lane ``constraint`` documents
5     decision_snapshots    run resources (handoffs to this agent, the other agents'
                            packs) and history lane ``learning``/``session_history``
6     external_stubs        stub, fake, mock and contract files near the change surface
====  ====================  ===============================================================

**Stop rule (measurable).** Each acceptance criterion (the goal itself when
none is given) has keywords (``trigger.derive_keywords``). A criterion is
*covered* when at least half of its keywords (rounded up, at least one) occur
among the terms of the anchors chosen so far — their path, ref, summary and the
words of the lines they point at. After every rung: when all criteria are
covered the climb stops (``criteria_covered``); it also stops when fewer than
:data:`MIN_ANCHOR_TOKENS` tokens of the budget remain (``budget_spent``) or the
pack holds 24 anchors (``anchor_limit``); after rung 6 it is
``ladder_exhausted``. Rung 1 always runs, and each role has rungs it always
visits while budget remains (:data:`ROLE_RUNGS`: a Reviewer always sees the
project KB, a Verifier the tests of the repo view). Every rung's record says
whether it ran and why, how many anchors it added, how many it skipped for the
budget, and how many criteria were covered after it. While role rungs are still
ahead, a rung may fill the pack only up to 24 minus :data:`ROLE_RUNG_RESERVE`
(4) anchors per such rung, so they find room.

A draft is added only when the whole pack, serialized with it, still fits the
budget (exact token count), so pointers win over nothing: the pack carries
anchors and three-line summaries, never file bodies. A draft with the
``(path, ref)`` of a chosen anchor, or whose lines are more than half covered
by a chosen anchor of the same file, is skipped as a duplicate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..trigger import derive_keywords
from .anchors import AnchorDraft, Navigator, dedup
from .lcp import MAX_ANCHORS, RungRecord
from .rungs import KIND_DISTANCE, LadderInput, Rungs

__all__ = [
    "KIND_DISTANCE",
    "MIN_ANCHOR_TOKENS",
    "ROLE_RUNGS",
    "ROLE_RUNG_RESERVE",
    "RUNG_NAMES",
    "LadderInput",
    "LadderOutcome",
    "climb",
    "covered",
    "criterion_keywords",
]

RUNG_NAMES: tuple[str, ...] = (
    "nearby_code",
    "module_view",
    "repo_view",
    "project_kb",
    "decision_snapshots",
    "external_stubs",
)
#: rungs a role always visits (budget permitting), besides rung 1
ROLE_RUNGS: dict[str, tuple[int, ...]] = {
    "Planner": (3,),
    "Thinker": (2, 3, 5),
    "Implementer": (2, 3),
    "Verifier": (3,),
    "Reviewer": (4,),
    "Critical": (4, 5),
    "Supervisor": (5,),
}
#: below this many spare tokens no anchor fits (the smallest anchor object costs ~45)
MIN_ANCHOR_TOKENS = 40
#: anchor slots kept free for each role rung still ahead (so a Reviewer's repo view
#: cannot take all 24 anchors before the project KB rung)
ROLE_RUNG_RESERVE = 4


@dataclass(frozen=True, slots=True)
class LadderOutcome:
    drafts: tuple[AnchorDraft, ...]
    rungs: tuple[RungRecord, ...]
    stopped_after: int
    stop_reason: str
    criteria_covered: tuple[bool, ...]


def criterion_keywords(criterion: str) -> tuple[str, ...]:
    return derive_keywords(criterion)


def covered(keywords: Sequence[str], terms: frozenset[str]) -> bool:
    """At least half of ``keywords`` (rounded up) among ``terms``; no keywords -> covered."""
    if not keywords:
        return True
    found = sum(1 for k in keywords if k in terms)
    return found * 2 >= len(keywords)


def _overlaps(draft: AnchorDraft, selected: Sequence[AnchorDraft]) -> bool:
    """Whether more than half of ``draft``'s lines are already pointed at in its file.

    Module synopses (``#module``) neither count nor are counted: they summarize,
    they do not point at code to read.
    """
    if draft.ref.endswith("#module"):
        return False
    lines = draft.end - draft.start + 1
    for d in selected:
        if d.path != draft.path or d.ref.endswith("#module"):
            continue
        shared = min(d.end, draft.end) - max(d.start, draft.start) + 1
        if shared * 2 > lines:
            return True
    return False


def _terms(drafts: Iterable[AnchorDraft]) -> frozenset[str]:
    out: set[str] = set()
    for d in drafts:
        out |= d.terms
    return frozenset(out)


def climb(
    inp: LadderInput, nav: Navigator, measure: Callable[[Sequence[AnchorDraft]], int]
) -> LadderOutcome:
    """Climb the ladder under ``inp.budget`` (``measure`` = exact pack tokens for drafts)."""
    rungs = Rungs(inp, nav)
    keywords = [criterion_keywords(c) for c in inp.criteria]
    required = set(ROLE_RUNGS.get(inp.agent, ()))
    selected: list[AnchorDraft] = []
    records: list[RungRecord] = []
    stop_reason = "ladder_exhausted"
    stopped_after = 1
    state = ""  # why the climb is over ("" while it goes on)

    def n_covered() -> int:
        terms = _terms(selected)
        return sum(1 for k in keywords if covered(k, terms))

    for number, name in enumerate(RUNG_NAMES, start=1):
        all_covered = n_covered() == len(keywords)
        spare = inp.budget - measure(selected)
        if number == 1:
            why = "first_rung"
        elif len(selected) >= MAX_ANCHORS:
            why = "anchor_limit"
        elif spare < MIN_ANCHOR_TOKENS:
            why = "budget_spent"
        elif number in required:
            why = "required_for_role"
        elif all_covered:
            why = "criteria_covered"
        else:
            why = "criteria_uncovered"
        if why in ("anchor_limit", "budget_spent", "criteria_covered"):
            state = state or why
            records.append(
                RungRecord(
                    rung=number,
                    name=name,  # type: ignore[arg-type]
                    ran=False,
                    reason=why,
                    anchors_added=0,
                    skipped_over_budget=0,
                    criteria_covered=n_covered(),
                )
            )
            continue
        added = skipped = 0
        keys = {(d.path, d.ref) for d in selected}
        ahead = sum(1 for r in required if r > number)
        cap = MAX_ANCHORS - ROLE_RUNG_RESERVE * ahead
        for draft in dedup(rungs.produce(number)):
            if (draft.path, draft.ref) in keys or _overlaps(draft, selected):
                continue
            if len(selected) >= cap:
                break
            trial = [*selected, draft]
            if measure(trial) <= inp.budget:
                selected.append(draft)
                keys.add((draft.path, draft.ref))
                added += 1
            else:
                skipped += 1
        stopped_after = number
        records.append(
            RungRecord(
                rung=number,
                name=name,  # type: ignore[arg-type]
                ran=True,
                reason=why,
                anchors_added=added,
                skipped_over_budget=skipped,
                criteria_covered=n_covered(),
            )
        )
    final_terms = _terms(selected)
    flags = tuple(covered(k, final_terms) for k in keywords)
    if all(flags):
        stop_reason = "criteria_covered"
    elif len(selected) >= MAX_ANCHORS:
        stop_reason = "anchor_limit"
    elif state == "budget_spent" or inp.budget - measure(selected) < MIN_ANCHOR_TOKENS:
        stop_reason = "budget_spent"
    return LadderOutcome(tuple(selected), tuple(records), stopped_after, stop_reason, flags)
