"""The WindowComposer: a sliding context window of goal, map and recent past.

An agent that works in a loop needs, at every step, three things in a fixed
order of importance:

1. the **goal** it is working towards (highest priority),
2. a **map** of the repository (usually ``librarian map`` output),
3. the **recent past**: the last few SAOP envelopes (situation / action /
   observation / plan records), newest first.

:class:`WindowComposer` assembles them under a :class:`WindowBudget` with exact
token counts from a :class:`~codelibrarian.tokens.Tokenizer`.

Differences from the seed (``002``), on purpose:

* The seed gives each slot its own budget and only *reports* when their sum
  exceeds the total. Here the total is a hard cap: slots are allocated in
  priority order (goal, then map, then recent past), each receiving
  ``min(own budget, what the total still has left)``. ``total_tokens_used`` can
  therefore never exceed ``total_budget``.
* Because of that, ``budget_exceeded`` cannot mean "the sum went over". It means
  that *the goal alone did not fit the total budget*: after truncation to its
  own ``goal_budget`` the goal still needed more tokens than ``total_budget``
  allows, so it was cut further (or dropped entirely). A window with
  ``budget_exceeded=True`` is missing part of its most important input; the
  caller should raise the total budget or shorten the goal.
* Truncation counts real tokens (the seed estimated four characters a token)
  and cuts at the last whitespace that fits, falling back to a character cut
  only when a single word is longer than the whole allowance.
* Envelopes with equal timestamps are ordered by id (then content), so the
  output never depends on input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import UsageError
from ..tokens import Tokenizer, get_tokenizer

__all__ = [
    "MAX_RECENT_ENVELOPES",
    "ComposedWindow",
    "ComposedWindowSlot",
    "SaopEnvelope",
    "SlotKind",
    "WindowBudget",
    "WindowComposer",
]

#: hard upper bound of the recent-past slot count (the seed's cap)
MAX_RECENT_ENVELOPES = 10

SlotKind = Literal["goal", "map", "recent_past"]

GOAL_SLOT_ID = "goal"
MAP_SLOT_ID = "map"


@dataclass(frozen=True, slots=True)
class SaopEnvelope:
    """One record of the agent's recent past (situation, action, observation, plan)."""

    id: str
    content: str
    timestamp_ms: int

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not isinstance(self.content, str):
            raise UsageError("SaopEnvelope id and content must be strings")
        if isinstance(self.timestamp_ms, bool) or not isinstance(self.timestamp_ms, int):
            raise UsageError(
                f"SaopEnvelope {self.id!r}: timestamp_ms must be an integer, "
                f"got {self.timestamp_ms!r}",
                hint="Use milliseconds since the epoch, e.g. 1763726400000.",
            )


@dataclass(frozen=True, slots=True)
class ComposedWindowSlot:
    """One slot of a composed window.

    ``id`` is ``"goal"``, ``"map"`` or the envelope's id; ``token_count`` is the
    exact count of ``content``; ``truncated`` says the content was cut to fit.
    """

    kind: SlotKind
    id: str
    content: str
    token_count: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class ComposedWindow:
    """The result of :meth:`WindowComposer.compose`.

    ``total_tokens_used`` is the sum of the slots' ``token_count`` and is never
    above the budget's ``total_budget``. ``budget_exceeded`` is true when the
    goal alone (already cut to ``goal_budget``) needed more than
    ``total_budget`` and had to be cut further or dropped.
    ``dropped_envelope_ids`` lists, newest first, the envelopes left out by the
    envelope cap or the budget.
    """

    slots: tuple[ComposedWindowSlot, ...]
    total_tokens_used: int
    budget_exceeded: bool
    dropped_envelope_ids: tuple[str, ...] = ()

    def slots_of(self, kind: SlotKind) -> tuple[ComposedWindowSlot, ...]:
        """The slots of one kind, in window order."""
        return tuple(s for s in self.slots if s.kind == kind)


@dataclass(frozen=True, slots=True)
class WindowBudget:
    """Token budgets: a hard ``total_budget`` and one allowance per slot kind.

    The per-slot allowances may add up to more than the total; the total wins
    (see :class:`WindowComposer`).
    """

    total_budget: int
    goal_budget: int
    map_budget: int
    recent_past_budget: int

    def __post_init__(self) -> None:
        for name in ("total_budget", "goal_budget", "map_budget", "recent_past_budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UsageError(
                    f"WindowBudget.{name} must be a non-negative integer, got {value!r}",
                    hint="Budgets are token counts such as 8000.",
                )


class WindowComposer:
    """Builds a :class:`ComposedWindow` from a goal, a map and recent envelopes.

    ``max_recent_envelopes`` is clamped to ``[1, MAX_RECENT_ENVELOPES]`` here,
    in the constructor, so every call site gets the same cap. ``tokenizer``
    defaults to :func:`~codelibrarian.tokens.get_tokenizer` (gpt-4o's o200k).
    """

    def __init__(
        self,
        budget: WindowBudget,
        max_recent_envelopes: int = MAX_RECENT_ENVELOPES,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        if not isinstance(budget, WindowBudget):
            raise UsageError(f"budget must be a WindowBudget, got {type(budget).__name__}")
        self._budget = budget
        self._max_recent = max(1, min(MAX_RECENT_ENVELOPES, int(max_recent_envelopes)))
        self._tokenizer = tokenizer if tokenizer is not None else get_tokenizer()

    @property
    def budget(self) -> WindowBudget:
        return self._budget

    @property
    def max_recent_envelopes(self) -> int:
        return self._max_recent

    @property
    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    def compose(self, goal: str, map: str, envelopes: Sequence[SaopEnvelope]) -> ComposedWindow:
        """Assemble the window; never mutates its arguments.

        Algorithm (priority order goal -> map -> recent past, which is also the
        order of ``slots``):

        1. *Goal*: allowance ``min(goal_budget, total_budget)``. If the goal
           needs more tokens it is cut at the last whitespace that fits and
           marked ``truncated``. ``budget_exceeded`` is set when the goal, cut
           to ``goal_budget`` only, would still not fit ``total_budget``.
        2. *Map*: allowance ``min(map_budget, total left after the goal)``;
           cut the same way.
        3. *Recent past*: envelopes sorted newest first (``timestamp_ms``
           descending, then ``id``, then ``content`` ascending), the first
           ``max_recent_envelopes`` kept; then added whole, newest first,
           while they fit ``min(recent_past_budget, total left)``. The first
           envelope that does not fit stops the walk, so the recent past is
           always a contiguous run of the newest envelopes.

        Empty slots (empty goal or map, a goal cut to nothing) are omitted.
        """
        budget = self._budget
        tok = self._tokenizer
        slots: list[ComposedWindowSlot] = []
        remaining = budget.total_budget

        # 1. goal: the highest priority; it may consume the whole total.
        goal_slot, goal_alone = self._fit_slot(
            "goal", GOAL_SLOT_ID, goal, budget.goal_budget, remaining
        )
        budget_exceeded = goal_alone > budget.total_budget
        if goal_slot is not None:
            slots.append(goal_slot)
            remaining -= goal_slot.token_count

        # 2. map: whatever the goal left, up to its own allowance.
        map_slot, _ = self._fit_slot("map", MAP_SLOT_ID, map, budget.map_budget, remaining)
        if map_slot is not None:
            slots.append(map_slot)
            remaining -= map_slot.token_count

        # 3. recent past: newest first, whole envelopes, contiguous.
        ordered = sorted(envelopes, key=lambda e: (-e.timestamp_ms, e.id, e.content))
        allowance = min(budget.recent_past_budget, remaining)
        used = 0
        kept = 0
        for env in ordered[: self._max_recent]:
            if not env.content:
                kept += 1  # nothing to show, nothing to pay; not "dropped"
                continue
            cost = tok.count(env.content)
            if used + cost > allowance:
                break
            slots.append(ComposedWindowSlot("recent_past", env.id, env.content, cost, False))
            used += cost
            kept += 1
        dropped = tuple(e.id for e in ordered[kept:])

        return ComposedWindow(
            slots=tuple(slots),
            total_tokens_used=sum(s.token_count for s in slots),
            budget_exceeded=budget_exceeded,
            dropped_envelope_ids=dropped,
        )

    def _fit_slot(
        self, kind: SlotKind, slot_id: str, text: str, own_budget: int, remaining: int
    ) -> tuple[ComposedWindowSlot | None, int]:
        """The slot for ``text`` under ``min(own_budget, remaining)``.

        Also returns the token count of ``text`` cut to ``own_budget`` alone,
        which the goal uses to decide ``budget_exceeded``.
        """
        if not text:
            return None, 0
        tok = self._tokenizer
        full = tok.count(text)
        if full <= own_budget:
            alone_text, alone = text, full
        else:
            alone_text = truncate_to_tokens(tok, text, own_budget)
            alone = tok.count(alone_text)
        if alone <= remaining:
            content, count = alone_text, alone
        else:
            content = truncate_to_tokens(tok, alone_text, remaining)
            count = tok.count(content)
        if not content:
            return None, alone
        return ComposedWindowSlot(kind, slot_id, content, count, content != text), alone


def truncate_to_tokens(tokenizer: Tokenizer, text: str, max_tokens: int) -> str:
    """Longest prefix of ``text`` within ``max_tokens``, cut before a whitespace run.

    The prefix ends just before the last whitespace run that still fits, so no
    word is split and no trailing whitespace is kept. When not even the first
    word fits, the longest character prefix that fits is returned (possibly
    ``""``). Binary search: O(log n) token counts.
    """
    if max_tokens <= 0 or not text:
        return ""
    if tokenizer.count(text) <= max_tokens:
        return text
    # candidate cut points: the start of every whitespace run after a non-space
    cuts = [i for i in range(1, len(text)) if text[i].isspace() and not text[i - 1].isspace()]
    best = _longest_fitting(tokenizer, text, cuts, max_tokens)
    if best:
        return text[:best]
    # a single word longer than the allowance: cut inside it rather than lose it
    first_cut = cuts[0] if cuts else len(text)
    return text[: _longest_fitting(tokenizer, text, list(range(1, first_cut)), max_tokens)]


def _longest_fitting(tokenizer: Tokenizer, text: str, cuts: list[int], max_tokens: int) -> int:
    """Largest ``c`` in ascending ``cuts`` whose prefix fits (0 when none does)."""
    lo, hi, best = 0, len(cuts) - 1, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if tokenizer.count(text[: cuts[mid]]) <= max_tokens:
            best = cuts[mid]
            lo = mid + 1
        else:
            hi = mid - 1
    return best
