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

Excerpts of one file (candidates with ``excerpt`` lines, not forced) are rendered
as one block: the union of their lines under one header, in the position of the
first of them. Shrinking such a block drops its lowest-priority member first.

Then the remainder is filled: candidates the selection turned away for room
(``spare``, in rank order) are added while they fit — merged into a block of
their file when they are excerpts of it, else as a block of their own, cut to
the room left when their strategy allows (verdict ``fill``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import BudgetInfeasible
from ..tokens import Tokenizer, count_joined, count_pieces
from .excerpt import label_ranges, merge_excerpts, render_excerpt
from .selection import Selection
from .shrink import shrink_body
from .types import Candidate, Format, RenderedArtifact

__all__ = ["SEPARATOR", "RenderResult", "render_block", "render_to_fit"]

SEPARATOR = "\n\n"
FORMATS: tuple[str, ...] = ("markdown", "xml", "plain")


#: below this many tokens of room the fill step stops; at most this many tries
_FILL_MIN = 24
_FILL_TRIES = 60


def _label(cand: Candidate, ranges: str | None = None) -> str:
    title = cand.title or f"{cand.kind} {cand.id}"
    if ranges is not None:
        title += f":{ranges}"
    elif cand.lines is not None:
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


def render_block(
    cand: Candidate,
    body: str,
    fmt: Format,
    shrunk_by: str | None = None,
    *,
    ranges: str | None = None,
    kinds: str | None = None,
) -> str:
    """One artifact under a header carrying its title (relative path) and line range.

    ``ranges`` (``12-40,88-95``) and ``kinds`` replace the candidate's own line
    range and kind in the header of a merged block of excerpts.
    """
    body = body.rstrip("\n")
    note = f" (shrunk: {shrunk_by})" if shrunk_by else ""
    kind = kinds or cand.kind
    if fmt == "markdown":
        fence = _fence(body)
        lang = cand.language or ("diff" if cand.hunks else "")
        return f"### {_label(cand, ranges)} [{kind}]{note}\n{fence}{lang}\n{body}\n{fence}"
    if fmt == "xml":
        attrs = f'title="{_xml_attr(cand.title or cand.id)}"'
        if ranges is not None:
            attrs += f' lines="{ranges}"'
        elif cand.lines is not None:
            attrs += f' lines="{cand.lines[0]}-{cand.lines[1]}"'
        attrs += f' kind="{kind}" lane="{cand.lane}"'
        if shrunk_by:
            attrs += f' shrunk="{shrunk_by}"'
        safe = body.replace("</artifact", "&lt;/artifact")
        return f"<artifact {attrs}>\n{safe}\n</artifact>"
    if fmt == "plain":
        return f"=== {_label(cand, ranges)} [{kind}]{note} ===\n{body}"
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


@dataclass(slots=True)
class _Item:
    cand: Candidate  # the lead member (highest priority)
    original: str  # original body
    body: str
    block: str
    tokens: int
    original_tokens: int
    forced: bool
    order: tuple[int, int]  # render position: (lane priority, rank) of the lead
    shrink_key: tuple[int, int]  # larger = lower priority
    exhausted: bool
    shrunk: bool = False
    #: further excerpts of the lead's file merged into this block, best first
    merged: list[Candidate] | None = None
    keys: dict[str, tuple[int, int]] | None = None  # shrink key of every member


@dataclass(frozen=True, slots=True)
class RenderResult:
    text: str
    tokens: int
    rendered: tuple[RenderedArtifact, ...]
    dropped: tuple[str, ...]  # ids dropped after render, in drop order
    original_tokens: int  # rendered tokens before any shrink
    filled: tuple[str, ...] = ()  # ids added by the fill step, in fill order


def _new_item(
    cand: Candidate,
    body: str,
    fmt: Format,
    tokenizer: Tokenizer,
    key: tuple[int, int],
    *,
    forced: bool = False,
    pieces: bool = True,
) -> _Item:
    """One candidate rendered as a block of its own, placed and shrunk by ``key``."""
    block = render_block(cand, body, fmt)
    count = _count_block(tokenizer, block, pieces)
    return _Item(
        cand=cand,
        original=body,
        body=body,
        block=block,
        tokens=count,
        original_tokens=count,
        forced=forced,
        order=key,
        shrink_key=key,
        exhausted=cand.strategy == "never",
    )


def _members(item: _Item) -> list[Candidate]:
    return [item.cand, *(item.merged or ())]


def _count_block(tokenizer: Tokenizer, block: str, pieces: bool) -> int:
    """A block's count: from its pieces when ``pieces`` (a block shows excerpts whose
    pieces were counted when they were fitted), else encoded whole."""
    return count_pieces(tokenizer, block) if pieces else tokenizer.count(block)


def _merged_block(item: _Item, fmt: Format, tokenizer: Tokenizer, pieces: bool = True) -> None:
    """Re-render a block of excerpts from its members (body, block and token count)."""
    members = _members(item)
    lines = merge_excerpts(m.excerpt for m in members)
    body = render_excerpt(lines)
    if len(members) == 1:
        block = render_block(item.cand, body, fmt)
    else:
        kinds = "+".join(dict.fromkeys(m.kind for m in members))
        block = render_block(item.cand, body, fmt, ranges=label_ranges(lines), kinds=kinds)
    item.original = item.body = body
    item.block = block
    item.tokens = _count_block(tokenizer, block, pieces)


def _mergeable(cand: Candidate, forced: bool) -> bool:
    return bool(cand.excerpt) and bool(cand.path) and not forced


def render_to_fit(
    selection: Selection,
    bodies: Mapping[str, str],
    *,
    fmt: Format,
    tokenizer: Tokenizer,
    budget: int,
    spare: Sequence[tuple[Candidate, int]] = (),
    pieces: bool = True,
) -> RenderResult:
    """Render the selection in ``fmt`` within ``budget`` tokens (raises BudgetInfeasible).

    ``spare`` lists ``(candidate, rank)`` pairs turned away for room, best first,
    for the fill step.

    ``pieces``: the counts of blocks and of the pack are summed from cached counts of
    their pieces where the tokenizer allows (``tokens.count_pieces``, ``count_joined``),
    so a loop step that changes one block does not re-encode the whole pack, and a
    block re-encodes only what its excerpts' fitting did not count. The finished text
    is then counted whole once (the whole text's count is never summed from pieces);
    should the two ever differ, the render is done again counting whole texts, so the
    cap holds on the text that leaves whatever the sum said.
    """
    rank = {v.id: v.rank for v in selection.verdicts if v.selected}
    prio = selection.lane_priority
    items: list[_Item] = []
    by_path: dict[str, _Item] = {}
    for cand in selection.selected:
        forced = cand.id in selection.forced_ids
        key = (prio[cand.lane], rank[cand.id])
        if _mergeable(cand, forced):
            host = by_path.get(cand.path)
            if host is not None:
                assert host.merged is not None and host.keys is not None
                host.merged.append(cand)
                host.keys[cand.id] = key
                continue
        item = _new_item(cand, bodies[cand.id], fmt, tokenizer, key, forced=forced, pieces=pieces)
        if _mergeable(cand, forced):
            item.merged, item.keys = [], {cand.id: key}
            by_path[cand.path] = item
        items.append(item)
    for item in items:
        if item.merged:
            _merged_block(item, fmt, tokenizer, pieces)
            item.original_tokens = item.tokens
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
            blocks = [i.block for i in items]
            text = SEPARATOR.join(blocks)
            exact = _count(tokenizer, blocks, text, pieces)
            if exact <= budget:
                break
            over = exact - budget
        else:
            over = estimate - budget
        victim = worst([i for i in items if not i.forced and not i.exhausted])
        if victim is not None:
            if victim.merged:
                _drop_member(victim, fmt, tokenizer, dropped, pieces)
            elif not _shrink(victim, over, fmt, tokenizer, may_empty=False):
                items.remove(victim)  # shrinking would leave only a marker: drop it
                dropped.append(victim.cand.id)
            continue
        victim = worst([i for i in items if not i.forced])
        if victim is not None:
            items.remove(victim)
            dropped.extend(m.id for m in _members(victim))
            continue
        victim = worst([i for i in items if not i.exhausted])
        if victim is not None:
            _shrink(victim, over, fmt, tokenizer, may_empty=True)
            continue
        total = exact if estimate <= budget else estimate
        _infeasible(items, total, budget)

    filled: list[str] = []
    if spare and items and budget - exact >= _FILL_MIN:
        before_fill = exact
        text, exact = _fill(
            items,
            spare,
            fmt=fmt,
            tokenizer=tokenizer,
            budget=budget,
            done=(text, exact),
            filled=filled,
            prio=prio,
            pieces=pieces,
        )
        # the fill adds whole, unshrunk blocks: they count as rendered before any shrink
        # too, or the share shrinking kept reads over 100%
        original_total += exact - before_fill

    rendered: list[RenderedArtifact] = []
    for i in items:
        rendered.append(
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
        )
        rendered.extend(
            RenderedArtifact(
                id=m.id,
                kind=m.kind,
                lane=m.lane,
                tokens=0,
                original_tokens=0,
                shrunk=False,
                strategy=None,
                content="",
                merged_into=i.cand.id,
            )
            for m in i.merged or ()
        )
    if pieces and text and _recount(tokenizer, text) != exact:
        return render_to_fit(
            selection, bodies, fmt=fmt, tokenizer=tokenizer, budget=budget, spare=spare,
            pieces=False,
        )  # fmt: skip
    return RenderResult(text, exact, tuple(rendered), tuple(dropped), original_total, tuple(filled))


def _recount(tokenizer: Tokenizer, text: str) -> int:
    """The count of ``text`` encoded whole: never a sum of pieces, nor a cached count
    that may be one."""
    whole = getattr(tokenizer, "recount", None)
    return int(whole(text)) if whole is not None else tokenizer.count(text)


def _count(tokenizer: Tokenizer, blocks: list[str], text: str, pieces: bool) -> int:
    """The count of ``text`` (``SEPARATOR.join(blocks)``): from the blocks when
    ``pieces``, else encoded whole."""
    return count_joined(tokenizer, blocks, SEPARATOR) if pieces else tokenizer.count(text)


def _drop_member(
    item: _Item, fmt: Format, tokenizer: Tokenizer, dropped: list[str], pieces: bool
) -> None:
    """Drop the lowest-priority member of a merged block (never its lead)."""
    assert item.merged and item.keys is not None
    keys = item.keys
    member = max(item.merged, key=lambda m: keys[m.id])
    item.merged.remove(member)
    dropped.append(member.id)
    _merged_block(item, fmt, tokenizer, pieces)
    item.shrunk = False


def _fill(
    items: list[_Item],
    spare: Sequence[tuple[Candidate, int]],
    *,
    fmt: Format,
    tokenizer: Tokenizer,
    budget: int,
    done: tuple[str, int],
    filled: list[str],
    prio: Mapping[str, int],
    pieces: bool,
) -> tuple[str, int]:
    """Add spare candidates while they fit (see the module docstring); the new text
    and its exact count. ``done`` is the text that fits now and its count."""
    text, exact = done
    sep_cost = tokenizer.count(SEPARATOR)
    hosts = {i.cand.path: i for i in items if i.merged is not None and not i.shrunk}
    tries = 0
    for cand, cand_rank in spare:
        if budget - exact < _FILL_MIN or tries >= _FILL_TRIES:
            break
        tries += 1
        host = hosts.get(cand.path) if _mergeable(cand, False) else None
        if host is not None:
            assert host.merged is not None and host.keys is not None
            saved = (host.original, host.body, host.block, host.tokens)
            host.merged.append(cand)
            host.keys[cand.id] = (host.order[0], cand_rank)
            _merged_block(host, fmt, tokenizer, pieces)
            blocks = [i.block for i in items]
            new_text = SEPARATOR.join(blocks)
            new_exact = _count(tokenizer, blocks, new_text, pieces)
            if new_exact <= budget:
                text, exact = new_text, new_exact
                filled.append(cand.id)
            else:
                host.merged.remove(cand)
                del host.keys[cand.id]
                host.original, host.body, host.block, host.tokens = saved
            continue
        room = budget - exact - sep_cost
        if room < _FILL_MIN:
            continue
        item = _new_item(
            cand, cand.text(), fmt, tokenizer, (prio[cand.lane], cand_rank), pieces=pieces
        )
        count = item.tokens
        if count > room:
            if item.exhausted or not _shrink(item, count - room, fmt, tokenizer, may_empty=False):
                continue
            if item.tokens > room:
                continue
        item.order = (prio[cand.lane], cand_rank)
        at = next((k for k, i in enumerate(items) if i.order > item.order), len(items))
        items.insert(at, item)
        blocks = [i.block for i in items]
        new_text = SEPARATOR.join(blocks)
        new_exact = _count(tokenizer, blocks, new_text, pieces)
        if new_exact <= budget:
            text, exact = new_text, new_exact
            filled.append(cand.id)
            if _mergeable(cand, False):
                item.merged, item.keys = [], {cand.id: item.order}
                hosts.setdefault(cand.path, item)
        else:
            items.remove(item)
    return text, exact


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
