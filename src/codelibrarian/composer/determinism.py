"""Determinism guardrails: quantization, recency buckets, canonical JSON and digests.

Nothing here reads a clock: ages are computed by the caller against
``ComposeContext.as_of``. Fixes two seed defects: ``bucketRecency`` used the wall
clock and returned 6 (out of range) for negative ages; here every age maps into
0..5 and a negative age (clock skew, a file from the "future") counts as current.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

__all__ = [
    "RECENCY_THRESHOLDS",
    "canonical_json",
    "digest",
    "quantize",
    "recency_bucket",
]

#: upper bounds (exclusive, seconds) of buckets 5, 4, 3, 2, 1; older is bucket 0
RECENCY_THRESHOLDS: tuple[int, ...] = (60, 300, 1800, 7200, 86400)


def recency_bucket(age_seconds: int) -> int:
    """Bucket 5 (< 1 min, or negative) down to 0 (>= 24 h)."""
    for i, bound in enumerate(RECENCY_THRESHOLDS):
        if age_seconds < bound:
            return 5 - i
    return 0


def quantize(value: float) -> int:
    """A score in 0..1 as an integer in thousandths, clamped to 0..1000.

    Floats are accepted only here, at the boundary; rounding is half-to-even on
    the exact binary value, which is the same on every platform.
    """
    if math.isnan(value):
        return 0
    return max(0, min(1000, round(value * 1000)))


#: the encoder ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
#: ensure_ascii=False)`` would build on every call, built once (it keeps no state
#: between calls)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the one serialization that is hashed."""
    return _CANONICAL.encode(obj)


def digest(obj: Any, *, length: int = 32) -> str:
    """sha256 hex of ``canonical_json(obj)``, truncated to ``length`` characters."""
    return digest_json(canonical_json(obj), length=length)


def digest_json(text: str, *, length: int = 32) -> str:
    """:func:`digest` of a value whose canonical JSON is ``text`` (already serialized)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]
