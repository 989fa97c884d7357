"""Building excerpt candidates: numbered, verbatim lines of a file under a token cap.

Helpers the lanes share so every excerpt is made the same way:

- :func:`numbered` — the lines of some ranges (plus frame lines), numbered;
- :func:`prose_lines` — which lines of a definition are prose (a docstring, a
  comment block), so "bodies beat prose" when room is short;
- :func:`fit_excerpt` — the longest excerpt within a cap: frame lines first,
  prose dropped before code, then the tail cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..composer.excerpt import render_excerpt
from ..tokens import Tokenizer

__all__ = ["Excerpt", "fit_excerpt", "numbered", "prose_lines"]

Excerpt = tuple[tuple[int, str], ...]

_COMMENT = ("#", "//", "/*", "*", "*/", "--", '"""', "'''", "///", "//!")
_QUOTES = ('"""', "'''")


def numbered(
    rows: Sequence[str], ranges: Iterable[tuple[int, int]], frame: Iterable[int] = ()
) -> Excerpt:
    """Lines ``a..b`` of every range and the frame lines, numbered, in line order."""
    picked: dict[int, str] = {}
    n = len(rows)
    for number in frame:
        if 1 <= number <= n:
            picked[number] = rows[number - 1]
    for a, b in ranges:
        for number in range(max(1, a), min(n, b) + 1):
            picked[number] = rows[number - 1]
    return tuple(sorted(picked.items()))


def prose_lines(lines: Excerpt) -> frozenset[int]:
    """Line numbers of docstrings and comment blocks within an excerpt."""
    out: set[int] = set()
    inside: str | None = None
    for number, text in lines:
        stripped = text.strip()
        if inside is not None:
            out.add(number)
            if inside in stripped:
                inside = None
            continue
        opener = next((q for q in _QUOTES if stripped.startswith(q)), None)
        if opener is not None:
            out.add(number)
            rest = stripped[len(opener) :]
            if opener not in rest:
                inside = opener
            continue
        if stripped.startswith(_COMMENT):
            out.add(number)
    return frozenset(out)


def _fits(tokenizer: Tokenizer, text: str, cap: int) -> bool:
    """Whether ``text`` counts at most ``cap`` tokens; an exact BPE tokenizer stops
    counting once past the cap (the trials of a cut are mostly far over it)."""
    till = getattr(tokenizer, "count_till_limit", None)
    if till is not None:
        return till(text, cap) is not None
    return tokenizer.count(text) <= cap


def fit_excerpt(
    tokenizer: Tokenizer, lines: Excerpt, cap: int, *, keep: Iterable[int] = ()
) -> Excerpt:
    """The longest form of ``lines`` whose rendering fits ``cap`` tokens.

    Lines in ``keep`` (the frame) are kept first; then prose lines are dropped
    (last first), then the excerpt is cut from the end. Empty when even the
    frame does not fit.
    """
    if _fits(tokenizer, render_excerpt(lines), cap):
        return lines
    kept = frozenset(keep)
    prose = prose_lines(lines)
    code = tuple(x for x in lines if x[0] not in prose or x[0] in kept)
    if _fits(tokenizer, render_excerpt(code), cap):
        # put back as much prose as fits, in line order
        extra = [x for x in lines if x[0] in prose and x[0] not in kept]
        lo, hi = 0, len(extra)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            trial = tuple(sorted((*code, *extra[:mid])))
            if _fits(tokenizer, render_excerpt(trial), cap):
                lo = mid
            else:
                hi = mid - 1
        return tuple(sorted((*code, *extra[:lo])))
    lo, hi = 0, len(code)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        trial = tuple(x for i, x in enumerate(code) if i < mid or x[0] in kept)
        if _fits(tokenizer, render_excerpt(trial), cap):
            lo = mid
        else:
            hi = mid - 1
    out = tuple(x for i, x in enumerate(code) if i < lo or x[0] in kept)
    return out if any(x[0] not in kept for x in out) else ()
