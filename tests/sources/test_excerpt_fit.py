"""Fitting an excerpt by rendered prefixes gives the lines the plain search gives."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.composer.excerpt import prefix_ends, render_excerpt
from codelibrarian.sources.excerpts import Excerpt, _fits, fit_excerpt, prose_lines
from codelibrarian.tokens import BpeTokenizer, Tokenizer

_LINE = st.sampled_from(
    ["", "x = 1", "    return y", '    """doc', '"""', "# note", "⋮", "def f():", "  é中🙂", "\t//"]
)


@st.composite
def excerpts(draw: st.DrawFn) -> Excerpt:
    texts = draw(st.lists(_LINE, min_size=0, max_size=40))
    gaps = draw(st.lists(st.integers(1, 3), min_size=len(texts), max_size=len(texts)))
    number = 0
    out = []
    for text, gap in zip(texts, gaps, strict=True):
        number += gap
        out.append((number, text))
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(excerpts())
def test_a_prefix_of_the_lines_renders_as_a_prefix_of_the_text(lines: Excerpt) -> None:
    whole = render_excerpt(lines)
    ends = prefix_ends(lines)
    assert len(ends) == len(lines) + 1 and ends[-1] == len(whole)
    for k in range(len(lines) + 1):
        assert render_excerpt(lines[:k]) == whole[: ends[k]]


class _Bumpy:
    """A made-up count that is not monotone in the text's length: a search that
    assumed more than the plain one did would choose other lines."""

    name = "bumpy"

    def count(self, text: str) -> int:
        return len(text) // 5 + (len(text) * 7919) % 13


def _plain_fit(tokenizer: Tokenizer, lines: Excerpt, cap: int, keep: Iterable[int]) -> Excerpt:
    """The search as first written: every trial built and rendered from its lines."""
    if _fits(tokenizer, render_excerpt(lines), cap):
        return lines
    kept = frozenset(keep)
    prose = prose_lines(lines)
    code = tuple(x for x in lines if x[0] not in prose or x[0] in kept)
    if _fits(tokenizer, render_excerpt(code), cap):
        extra = [x for x in lines if x[0] in prose and x[0] not in kept]
        lo, hi = 0, len(extra)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _fits(tokenizer, render_excerpt(tuple(sorted((*code, *extra[:mid])))), cap):
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


@settings(max_examples=300, deadline=None)
@given(excerpts(), st.integers(0, 60), st.data())
def test_fitting_by_prefixes_chooses_the_plain_searchs_lines(
    lines: Excerpt, cap: int, data: st.DataObject
) -> None:
    numbers = [n for n, _ in lines]
    keep = data.draw(st.sets(st.sampled_from(numbers), max_size=4)) if numbers else set()
    for tokenizer in (BpeTokenizer(), _Bumpy()):
        assert fit_excerpt(tokenizer, lines, cap, keep=keep) == _plain_fit(
            tokenizer, lines, cap, keep
        )


@given(st.lists(_LINE, max_size=30), st.integers(-3, 35), st.integers(-3, 35))
def test_a_range_of_lines_is_numbered_as_numbered_does(rows: list[str], a: int, b: int) -> None:
    from codelibrarian.sources.excerpts import numbered
    from codelibrarian.sources.retrieved import _range_lines

    assert _range_lines(rows, a, b) == numbered(rows, [(a, b)])
