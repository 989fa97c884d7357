"""Integer scoring and the total ranking order.

``score = 300·recency + 350·relevance + 200·specificity + 150·risk`` where every
input is in thousandths (recency bucket 0..5 scaled to 0..1000 as ``bucket·200``)
and the weights are per-mille, so a score is an integer in 0..1,000,000
(millionths). No float is ever involved, so no platform can order two
candidates differently.

Ties break by lane priority (from the budget config), kind priority, then id —
the seed's order. Ids are unique after de-duplication, so the key is total.
"""

from __future__ import annotations

from collections.abc import Mapping

from .types import KIND_PRIORITY, Candidate

__all__ = ["MAX_SCORE", "WEIGHTS", "rank_key", "score"]

#: per-mille weights (the seed's 0.30 / 0.35 / 0.20 / 0.15)
WEIGHTS: Mapping[str, int] = {"recency": 300, "relevance": 350, "specificity": 200, "risk": 150}
MAX_SCORE = 1_000_000


def score(candidate: Candidate) -> int:
    """The candidate's composite score in millionths (0..1,000,000)."""
    return (
        WEIGHTS["recency"] * candidate.recency_bucket * 200
        + WEIGHTS["relevance"] * candidate.relevance
        + WEIGHTS["specificity"] * candidate.specificity
        + WEIGHTS["risk"] * candidate.risk
    )


def rank_key(
    candidate: Candidate, candidate_score: int, lane_priority: Mapping[str, int]
) -> tuple[int, int, int, str]:
    """Sort key: higher score first, then lane priority, kind priority, id."""
    return (
        -candidate_score,
        lane_priority[candidate.lane],
        KIND_PRIORITY[candidate.kind],
        candidate.id,
    )
