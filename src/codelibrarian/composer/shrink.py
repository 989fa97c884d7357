"""Per-kind shrink strategies: make an artifact's body fit a token target.

Each strategy starts from the artifact's *original* body and a target, so
shrinking twice never compounds markers, and returns the largest form it can
make within the target — or its smallest form when none fits (render.py then
moves on to other artifacts or drops this one).

- ``truncate_oldest``: with diff hunks, drop the oldest hunks (by timestamp,
  then position) first; otherwise keep the longest prefix of whole lines.
- ``keep_signatures``: keep signatures and docstrings, elide bodies with a
  marker (tree-sitter when the language is known, an indentation heuristic
  otherwise); if that is still too large, keep a prefix of it.
- ``collapse_summary``: a graph collapsed to a summary line plus its most
  connected nodes; without edges, a prefix of the lines plus a count.
- ``drop_entries``: drop the oldest entries (history, violations) first.
- ``never``: unchanged.

Searches are binary over "how much to keep", so a shrink costs O(log n) token
counts; counts are cached by content in tokens.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..tokens import Tokenizer
from .signatures import elide_bodies
from .types import Candidate, DiffHunk, HistoryEntry

__all__ = ["Shrunk", "diff_body", "entries_body", "shrink_body"]


@dataclass(frozen=True, slots=True)
class Shrunk:
    """A shrunk body; ``empty`` when nothing but a marker is left (drop it if allowed)."""

    body: str
    empty: bool


def diff_body(hunks: Sequence[DiffHunk]) -> str:
    """The body text of a diff artifact made of ``hunks`` (in their given order)."""
    return "\n".join(h.text() for h in hunks)


def entries_body(entries: Sequence[HistoryEntry]) -> str:
    """The body text of a history artifact made of ``entries`` (in their given order)."""
    return "\n".join(e.text for e in entries)


def _plural(n: int, word: str, many: str = "") -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def _largest(n: int, build: Callable[[int], str], fits: Callable[[str], bool]) -> Shrunk:
    """``build(k)`` for the largest k in 0..n that fits (``build(0)`` when none does).

    Assumes fitting is (nearly) monotone in k; the caller verifies the result.
    """
    lo, hi, best = 0, n, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(build(mid)):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return Shrunk(build(best), best == 0 and n > 0)


def _keep_prefix(lines: Sequence[str], fits: Callable[[str], bool], what: str) -> Shrunk:
    total = len(lines)

    def build(k: int) -> str:
        if k >= total:
            return "\n".join(lines)
        marker = f"… {_plural(total - k, what)} truncated"
        return "\n".join([*lines[:k], marker])

    return _largest(total, build, fits)


def _truncate_oldest(cand: Candidate, body: str, fits: Callable[[str], bool]) -> Shrunk:
    hunks = cand.hunks
    if not hunks:
        return _keep_prefix(body.split("\n"), fits, "line")
    age_order = sorted(range(len(hunks)), key=lambda i: (hunks[i].timestamp, i))

    def build(keep: int) -> str:
        dropped = len(hunks) - keep
        if dropped == 0:
            return body
        gone = set(age_order[:dropped])
        kept = [h.text() for i, h in enumerate(hunks) if i not in gone]
        marker = f"… {_plural(dropped, 'older hunk')} elided"
        return "\n".join([*kept, marker])

    return _largest(len(hunks), build, fits)


def _drop_entries(cand: Candidate, body: str, fits: Callable[[str], bool]) -> Shrunk:
    texts: list[str]
    stamps: list[int]
    if cand.entries:
        texts = [e.text for e in cand.entries]
        stamps = [e.timestamp for e in cand.entries]
    else:  # lines in order, oldest first
        texts = body.split("\n")
        stamps = list(range(len(texts)))
    age_order = sorted(range(len(texts)), key=lambda i: (stamps[i], i))

    def build(keep: int) -> str:
        dropped = len(texts) - keep
        if dropped == 0:
            return body
        gone = set(age_order[:dropped])
        kept = [t for i, t in enumerate(texts) if i not in gone]
        marker = f"… {_plural(dropped, 'older entry', 'older entries')} dropped"
        return "\n".join([marker, *kept])

    return _largest(len(texts), build, fits)


def _collapse_summary(cand: Candidate, body: str, fits: Callable[[str], bool]) -> Shrunk:
    if not cand.edges:
        lines = body.split("\n")
        return _keep_prefix(lines, fits, "line")
    targets: dict[str, set[str]] = {}
    nodes: set[str] = set()
    for src, dst in cand.edges:
        targets.setdefault(src, set()).add(dst)
        nodes.update((src, dst))
    degree: dict[str, int] = dict.fromkeys(nodes, 0)
    for src, dst in set(cand.edges):
        degree[src] += 1
        degree[dst] += 1
    order = sorted(targets, key=lambda n: (-degree[n], n))
    head = (
        f"graph collapsed: {_plural(len(nodes), 'node')}, {_plural(len(set(cand.edges)), 'edge')}"
    )
    rows = [f"{n} -> {', '.join(sorted(targets[n]))}" for n in order]

    def build(keep: int) -> str:
        rest = len(rows) - keep
        tail = [f"… {rest} more"] if rest else []
        return "\n".join([head, *rows[:keep], *tail])

    collapsed = _largest(len(rows), build, fits)
    return Shrunk(collapsed.body, False)  # the summary line itself is the content


def _keep_signatures(cand: Candidate, body: str, fits: Callable[[str], bool]) -> Shrunk:
    outline = elide_bodies(body, cand.language)
    if fits(outline):
        return Shrunk(outline, False)
    return _keep_prefix(outline.split("\n"), fits, "line")


def shrink_body(
    cand: Candidate, body: str, target_tokens: int, tokenizer: Tokenizer, strategy: str
) -> Shrunk:
    """The largest form of ``body`` within ``target_tokens`` under ``strategy``."""

    def fits(text: str) -> bool:
        return tokenizer.count(text) <= target_tokens

    if strategy == "never" or fits(body):
        return Shrunk(body, False)
    if strategy == "truncate_oldest":
        return _truncate_oldest(cand, body, fits)
    if strategy == "keep_signatures":
        return _keep_signatures(cand, body, fits)
    if strategy == "collapse_summary":
        return _collapse_summary(cand, body, fits)
    if strategy == "drop_entries":
        return _drop_entries(cand, body, fits)
    raise ValueError(f"unknown shrink strategy {strategy!r}")
