"""Excerpts: numbered lines of one file, rendered with explicit elision markers.

An excerpt is a tuple of ``(line number, text)`` pairs in ascending line order.
Lines are copied verbatim; wherever the numbers skip, one line holding the
marker ``⋮`` says that lines were left out. Two excerpts of the same file merge
by taking the union of their lines, so a line shown by two lanes appears once
and adjacent spans join into one run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "ELISION",
    "label_ranges",
    "merge_excerpts",
    "prefix_ends",
    "render_excerpt",
    "runs",
]

#: the line standing for elided lines (the benchmark and agents read it as "skipped")
ELISION = "⋮"

Excerpt = tuple[tuple[int, str], ...]


def render_excerpt(lines: Sequence[tuple[int, str]]) -> str:
    """The text of an excerpt: its lines, with ``⋮`` wherever line numbers skip."""
    out: list[str] = []
    prev = 0
    for number, text in lines:
        if prev and number > prev + 1:
            out.append(ELISION)
        out.append(text)
        prev = number
    return "\n".join(out) + ("\n" if out else "")


def prefix_ends(lines: Sequence[tuple[int, str]]) -> list[int]:
    """For every ``k``, the length of ``render_excerpt(lines[:k])``: that rendering is
    the first ``ends[k]`` characters of ``render_excerpt(lines)`` (a marker depends
    only on the line before it, and each line ends with a newline)."""
    ends = [0]
    at = 0
    prev = 0
    marker = len(ELISION) + 1
    for number, text in lines:
        if prev and number > prev + 1:
            at += marker
        at += len(text) + 1
        ends.append(at)
        prev = number
    return ends


def merge_excerpts(excerpts: Iterable[Sequence[tuple[int, str]]]) -> Excerpt:
    """The union of several excerpts of one file, in line order (first text of a line wins)."""
    merged: dict[int, str] = {}
    for excerpt in excerpts:
        for number, text in excerpt:
            merged.setdefault(number, text)
    return tuple(sorted(merged.items()))


def runs(lines: Sequence[tuple[int, str]]) -> list[tuple[int, int]]:
    """The contiguous line ranges ``(first, last)`` an excerpt covers."""
    out: list[tuple[int, int]] = []
    for number, _ in lines:
        if out and number == out[-1][1] + 1:
            out[-1] = (out[-1][0], number)
        else:
            out.append((number, number))
    return out


def label_ranges(lines: Sequence[tuple[int, str]]) -> str:
    """``12-40,88-95``: the ranges of an excerpt for a header."""
    return ",".join(f"{a}-{b}" for a, b in runs(lines))
