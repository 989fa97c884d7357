"""Span relevance: at small intent budgets a span's own score counts for more."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.sources.retrieved import SMALL_BUDGET, span_floor, span_relevance

per_mille = st.integers(min_value=0, max_value=1000)


def test_small_intent_packs_put_another_file_s_strong_span_above_weak_ones() -> None:
    """At 2,000 tokens without a change, the best file's weakest span no longer
    outranks the best span of a file scoring 30% of it; with a change, or at 8,000
    tokens, the file's share keeps its earlier weight (measured: a lower floor there
    lost edit recall)."""
    small = span_floor(2000, "intent")
    assert span_relevance(1000, 0, small) < span_relevance(300, 1000, small)
    for floor in (span_floor(8000, "intent"), span_floor(2000, "diff")):
        assert span_relevance(1000, 0, floor) > span_relevance(300, 1000, floor)
    assert span_floor(SMALL_BUDGET, "intent") == span_floor(8000, "intent")


@given(per_mille, per_mille, per_mille, st.sampled_from([span_floor(2000, "intent"), 350]))
def test_span_relevance_grows_with_share_and_score_and_never_exceeds_the_share(
    share: int, score: int, other: int, floor: int
) -> None:
    value = span_relevance(share, score, floor)
    assert 0 <= value <= share
    assert span_relevance(share, max(score, other), floor) >= span_relevance(
        share, min(score, other), floor
    )
    assert span_relevance(max(share, other), score, floor) >= span_relevance(
        min(share, other), score, floor
    )
    assert span_relevance(share, 1000, floor) == share
