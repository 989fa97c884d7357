"""Two-pass render: format the selection, count the real text, shrink until it fits.

The budget is a hard cap on the *final whole text* — headers, fences,
separators and all — counted with the target model's tokenizer. Counting is per
block (cached by content in tokens.py); the joined text is counted exactly
whenever the block sum says it fits, and the loop continues until that exact
count is within budget.

Order of remedies (the seed made one pass with a 100-token floor and could end
over budget):

1. shrink non-forced artifacts, lowest priority first (lane priority, then rank),
   each only as far as the overflow needs; one that would be left as an empty
   stub (a header and a marker) is dropped instead (``dropped_after_render``);
2. drop remaining non-forced artifacts (e.g. ``never``-shrink ones), lowest
   priority first (``dropped_after_render``);
3. shrink pinned / must-include artifacts, lowest priority first;
4. if still over: ``BudgetInfeasible`` naming the forced artifacts (ids, kinds)
   and the shortfall in tokens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import BudgetInfeasible
from ..tokens import Tokenizer
from .selection import Selection
from .shrink import shrink_body
from .types import Candidate, Format, RenderedArtifact

__all__ = ["SEPARATOR", "RenderResult", "render_block", "render_to_fit"]

SEPARATOR = "\n\n"
FORMATS: tuple[str, ...] = ("markdown", "xml", "plain")


def _label(cand: Candidate) -> str:
    title = cand.title or f"{cand.kind} {cand.id}"
    if cand.lines is not None:
        title += f":{cand.lines[0]}-{cand.lines[1]}"
    return title


_BACKTICKS = re.compile(r"`+")


def _fence(body: str) -> str:
    """A code fence longer than any backtick run inside ``body``."""
    if "`" not in body:
        return "```"
    longest = max(len(run) for run in _BACKTICKS.findall(body))
    return "`" * max(3, longest + 1)


def _xml_attr(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def render_block(cand: Candidate, body: str, fmt: Format, shrunk_by: str | None = None) -> str:
    """One artifact under a header carrying its title (relative path) and line range."""
    body = body.rstrip("\n")
    note = f" (shrunk: {shrunk_by})" if shrunk_by else ""
    if fmt == "markdown":
        fence = _fence(body)
        lang = cand.language or ("diff" if cand.hunks else "")
        return f"### {_label(cand)} [{cand.kind}]{note}\n{fence}{lang}\n{body}\n{fence}"
    if fmt == "xml":
        attrs = f'title="{_xml_attr(cand.title or cand.id)}"'
        if cand.lines is not None:
            attrs += f' lines="{cand.lines[0]}-{cand.lines[1]}"'
        attrs += f' kind="{cand.kind}" lane="{cand.lane}"'
        if shrunk_by:
            attrs += f' shrunk="{shrunk_by}"'
        safe = body.replace("</artifact", "&lt;/artifact")
        return f"<artifact {attrs}>\n{safe}\n</artifact>"
    if fmt == "plain":
        return f"=== {_label(cand)} [{cand.kind}]{note} ===\n{body}"
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


@dataclass(slots=True)
class _Item:
    cand: Candidate
    original: str  # original body
    body: str
    block: str
    tokens: int
    original_tokens: int
    forced: bool
    order: int  # position in render order
    shrink_key: tuple[int, int]  # larger = lower priority
    exhausted: bool
    shrunk: bool = False


@dataclass(frozen=True, slots=True)
class RenderResult:
    text: str
    tokens: int
    rendered: tuple[RenderedArtifact, ...]
    dropped: tuple[str, ...]  # ids dropped after render, in drop order
    original_tokens: int  # rendered tokens before any shrink


def render_to_fit(
    selection: Selection,
    bodies: Mapping[str, str],
    *,
    fmt: Format,
    tokenizer: Tokenizer,
    budget: int,
) -> RenderResult:
    """Render the selection in ``fmt`` within ``budget`` tokens (raises BudgetInfeasible)."""
    rank = {v.id: v.rank for v in selection.verdicts if v.selected}
    items: list[_Item] = []
    for order, cand in enumerate(selection.selected):
        body = bodies[cand.id]
        block = render_block(cand, body, fmt)
        count = tokenizer.count(block)
        items.append(
            _Item(
                cand=cand,
                original=body,
                body=body,
                block=block,
                tokens=count,
                original_tokens=count,
                forced=cand.id in selection.forced_ids,
                order=order,
                shrink_key=(selection.lane_priority[cand.lane], rank[cand.id]),
                exhausted=cand.strategy == "never",
            )
        )
    original_total = sum(i.tokens for i in items)
    sep_cost = tokenizer.count(SEPARATOR)
    dropped: list[str] = []

    def worst(pool: list[_Item]) -> _Item | None:
        return max(pool, key=lambda i: i.shrink_key) if pool else None

    while True:
        if not items:
            text, exact = "", 0
            break
        estimate = sum(i.tokens for i in items) + sep_cost * (len(items) - 1)
        if estimate <= budget:
            text = SEPARATOR.join(i.block for i in items)
            exact = tokenizer.count(text)
            if exact <= budget:
                break
            over = exact - budget
        else:
            over = estimate - budget
        victim = worst([i for i in items if not i.forced and not i.exhausted])
        if victim is not None:
            if not _shrink(victim, over, fmt, tokenizer, may_empty=False):
                items.remove(victim)  # shrinking would leave only a marker: drop it
                dropped.append(victim.cand.id)
            continue
        victim = worst([i for i in items if not i.forced])
        if victim is not None:
            items.remove(victim)
            dropped.append(victim.cand.id)
            continue
        victim = worst([i for i in items if not i.exhausted])
        if victim is not None:
            _shrink(victim, over, fmt, tokenizer, may_empty=True)
            continue
        total = exact if estimate <= budget else estimate
        _infeasible(items, total, budget)

    rendered = tuple(
        RenderedArtifact(
            id=i.cand.id,
            kind=i.cand.kind,
            lane=i.cand.lane,
            tokens=i.tokens,
            original_tokens=i.original_tokens,
            shrunk=i.shrunk,
            strategy=i.cand.strategy if i.shrunk else None,
            content=i.block,
        )
        for i in items
    )
    return RenderResult(text, exact, rendered, tuple(dropped), original_total)


def _shrink(item: _Item, over: int, fmt: Format, tokenizer: Tokenizer, *, may_empty: bool) -> bool:
    """Shrink ``item`` by about ``over`` tokens; False when only an empty stub would be left.

    Returns True otherwise (shrunk, or marked exhausted when it cannot get smaller).
    """
    strategy = item.cand.strategy
    target_block = max(0, item.tokens - over)
    frame = tokenizer.count(render_block(item.cand, "", fmt, strategy))
    target_body = max(0, target_block - frame)
    result = shrink_body(item.cand, item.original, target_body, tokenizer, strategy)
    if result.empty and not may_empty:
        return False
    body = result.body
    if body == item.body:
        item.exhausted = True
        return True
    block = render_block(item.cand, body, fmt, strategy if body != item.original else None)
    count = tokenizer.count(block)
    if count >= item.tokens:
        item.exhausted = True
        return True
    item.body, item.block, item.tokens = body, block, count
    item.shrunk = body != item.original
    if count > target_block:
        item.exhausted = True  # its smallest form is still too big for the target
    return True


def _infeasible(items: list[_Item], total: int, budget: int) -> None:
    names = ", ".join(f"{i.cand.id} ({i.cand.kind})" for i in items)
    shortfall = total - budget
    raise BudgetInfeasible(
        f"pinned, must-include and never-shrink artifacts need {total} tokens after "
        f"shrinking, {shortfall} over the budget of {budget}: {names}",
        required_tokens=total,
        budget=budget,
        offenders=tuple(f"{i.cand.id}:{i.cand.kind}" for i in items),
        hint="Raise the budget (--budget / [budget] total_tokens), or unpin or narrow these "
        "constraints.",
    )
