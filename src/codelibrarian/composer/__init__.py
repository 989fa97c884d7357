"""The Composer: deterministic, budgeted, explainable context selection (pure core).

No filesystem, clock, environment, randomness or logging in this package: time
(``ComposeContext.as_of``), the workspace secret and the tokenizer come in as
arguments, and the same inputs give byte-identical output. The disk side
(on-disk cache, decision log) lives in ``codelibrarian.persist``.
"""

from __future__ import annotations

from .budget import BudgetConfig, LaneBudget, budget_digest, lane_priorities
from .cache import (
    COMPOSER_VERSION,
    DEFAULT_TTL_SECONDS,
    CacheKeyInputs,
    CompositionCache,
    cache_key,
    candidate_digest,
)
from .constraints import (
    EMPTY_CONSTRAINTS,
    ComposerConstraints,
    Constraint,
    LaneRequirement,
    Matcher,
    matches,
)
from .determinism import canonical_json, digest, quantize, recency_bucket
from .explain import Explanation, lane_bar
from .fingerprint import artifact_id, workspace_fingerprint
from .pipeline import Composition, compose
from .replay import ReplayReport, replay
from .scoring import WEIGHTS, score
from .selection import Selection, select
from .shrink import diff_body, entries_body
from .types import (
    KINDS,
    LANES,
    SHRINK_STRATEGIES,
    ArtifactRef,
    Candidate,
    ComposeContext,
    DiffHunk,
    HistoryEntry,
    RenderedArtifact,
    Verdict,
    text_hash,
)

__all__ = [
    "COMPOSER_VERSION",
    "DEFAULT_TTL_SECONDS",
    "EMPTY_CONSTRAINTS",
    "KINDS",
    "LANES",
    "SHRINK_STRATEGIES",
    "WEIGHTS",
    "ArtifactRef",
    "BudgetConfig",
    "CacheKeyInputs",
    "Candidate",
    "ComposeContext",
    "ComposerConstraints",
    "Composition",
    "CompositionCache",
    "Constraint",
    "DiffHunk",
    "Explanation",
    "HistoryEntry",
    "LaneBudget",
    "LaneRequirement",
    "Matcher",
    "RenderedArtifact",
    "ReplayReport",
    "Selection",
    "Verdict",
    "artifact_id",
    "budget_digest",
    "cache_key",
    "candidate_digest",
    "canonical_json",
    "compose",
    "diff_body",
    "digest",
    "entries_body",
    "lane_bar",
    "lane_priorities",
    "matches",
    "quantize",
    "recency_bucket",
    "replay",
    "score",
    "select",
    "text_hash",
    "workspace_fingerprint",
]
