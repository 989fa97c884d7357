"""The decision record: one JSON-ready dict per composition, safe to log.

It carries ids, kinds, lanes, counts, digests, scores and ``as_of`` — never a
path, a title or content (hashes only) — plus an input snapshot that lets
``replay`` re-run selection and rendering from the same candidates: each
candidate's scoring inputs and content hash, the constraint verdicts by id and
the budget. The seed's log left digests "filled by caller" and replayed through
the cache; this record is complete on its own.
"""

from __future__ import annotations

from typing import Any

from .budget import budget_to_dict
from .cache import COMPOSER_VERSION
from .determinism import digest, digest_json
from .types import Candidate, ComposeContext

__all__ = [
    "RECORD_SCHEMA",
    "build_record",
    "candidate_snapshot",
    "decision_id",
    "decision_view",
]

RECORD_SCHEMA = 1

#: record fields that may legitimately differ between a run and its replay
_VOLATILE = ("id", "cache_key", "cache_hit", "constraints_digest")


def candidate_snapshot(candidates: list[Candidate] | tuple[Candidate, ...]) -> list[list[Any]]:
    """Per candidate: id, kind, lane, scoring inputs, content hash and a shape digest."""
    rows = [
        [
            c.id,
            c.kind,
            c.lane,
            c.token_estimate,
            c.recency_bucket,
            c.relevance,
            c.specificity,
            c.risk,
            c.content_hash,
            digest_json(c.shape_json(), length=16),
        ]
        for c in candidates
    ]
    rows.sort(key=lambda r: (r[0], r[9]))
    return rows


def build_record(
    *,
    context: ComposeContext,
    budget: Any,
    tokenizer_name: str,
    fmt: str,
    cache_key: str,
    cache_hit: bool,
    digests: dict[str, str],
    candidates: tuple[Candidate, ...],
    verdicts: list[dict[str, Any]],
    rendered: list[dict[str, Any]],
    lane_requirements: list[dict[str, Any]],
    lane_tokens: dict[str, int],
    tokens: int,
    text_digest: str,
) -> dict[str, Any]:
    """Assemble the record (see module docstring); ``budget`` is a BudgetConfig."""
    forced: dict[str, list[list[str]]] = {"pinned": [], "must_include": [], "excluded": []}
    for v in verdicts:
        key = "excluded" if v["reason"] == "excluded_by_policy" else v["reason"]
        if key in forced:
            forced[key].append([v["id"], v["detail"]])
    for rows in forced.values():
        rows.sort()
    counts = {
        "candidates": len(verdicts),
        "selected": sum(1 for v in verdicts if v["selected"]),
        "pinned": len(forced["pinned"]),
        "must_include": len(forced["must_include"]),
        "excluded": len(forced["excluded"]),
        "dropped_after_render": sum(1 for v in verdicts if v["reason"] == "dropped_after_render"),
        "shrunk": sum(1 for r in rendered if r["shrunk"]),
    }
    record: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "composer_version": COMPOSER_VERSION,
        "as_of": context.as_of,
        "workspace_fingerprint": context.workspace_fingerprint,
        "trigger": context.trigger,
        "commitish": context.commitish,
        "rules_digest": context.rules_digest,
        "extra": dict(context.extra),
        "tokenizer": tokenizer_name,
        "format": fmt,
        "cache_key": cache_key,
        "cache_hit": cache_hit,
        "candidate_digest": digests["candidates"],
        "constraints_digest": digests["constraints"],
        "budget_digest": digests["budget"],
        "text_digest": text_digest,
        "budget": budget_to_dict(budget),
        "tokens": tokens,
        "lane_tokens": dict(sorted(lane_tokens.items())),
        "counts": counts,
        "selected": rendered,
        "rankings": verdicts,
        "snapshot": {
            "candidates": candidate_snapshot(candidates),
            "constraints": {**forced, "lane_requirements": lane_requirements},
        },
    }
    record["id"] = decision_id(cache_key, context)
    return record


def decision_id(cache_key: str, context: ComposeContext) -> str:
    """Deterministic id of one composition: its inputs, time and trigger."""
    return "d" + digest([cache_key, context.as_of, context.trigger], length=23)


def decision_view(record: dict[str, Any]) -> dict[str, Any]:
    """The record without fields that may differ between a run and its replay."""
    return {k: v for k, v in record.items() if k not in _VOLATILE}
