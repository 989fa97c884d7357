"""Integer scoring and the total ranking order.

``score = 300·recency + 350·relevance + 200·specificity + 150·risk`` where every
input is in thousandths (recency bucket 0..5 scaled to 0..1000 as ``bucket·200``)
and the weights are per-mille, so a score is an integer in 0..1,000,000
(millionths). No float is ever involved, so no platform can order two
candidates differently.

Ties break by lane priority (from the budget config), kind priority, then source
position (path, first line) and finally id. Ids are unique after de-duplication, so
the order is total; putting the position before the id keeps packs the same across
clones (ids are keyed by each workspace's secret).
``Candidate.rank_base`` packs that key; ``selection`` sorts on it.
"""

from __future__ import annotations

from .types import MAX_SCORE, WEIGHTS, Candidate

__all__ = ["MAX_SCORE", "WEIGHTS", "score"]


def score(candidate: Candidate) -> int:
    """The candidate's composite score in millionths (0..1,000,000).

    Computed once when the candidate is made (``Candidate.score``): candidates are
    immutable, and selection ranks 10k+ of them per call.
    """
    return candidate.score
