"""Replay a decision record: re-run selection and rendering without the cache.

Seed defect fixed: ``verifyDeterminism`` replayed through the cache (so it always
passed) and could not rebuild constraints. Here the constraints are rebuilt from
the record's snapshot as id matchers (exclusions, pins and must-includes by id,
lane requirements as recorded), the budget from the recorded values, and the run
bypasses every cache. Outcomes:

- ``inputs_changed`` — the candidates given differ from the snapshot (ids
  added or missing, content hashes or scoring inputs changed) or the tokenizer
  differs: the workspace moved on; this is not a determinism failure.
- ``diverged`` — same inputs, different decision: a determinism bug.
- ``identical`` — the decision is reproduced byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import BudgetInfeasible, UsageError
from ..tokens import Tokenizer
from .budget import budget_from_dict
from .constraints import ComposerConstraints, Constraint, LaneRequirement, Matcher
from .determinism import canonical_json
from .pipeline import Composition, compose
from .record import candidate_snapshot, decision_view
from .types import Candidate, ComposeContext

__all__ = ["ReplayReport", "constraints_from_record", "replay"]

ReplayStatus = Literal["identical", "inputs_changed", "diverged"]


@dataclass(frozen=True, slots=True)
class ReplayReport:
    status: ReplayStatus
    decision_id: str
    differences: tuple[str, ...]
    composition: Composition | None = None

    @property
    def ok(self) -> bool:
        return self.status == "identical"

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "decision_id": self.decision_id,
            "differences": list(self.differences),
        }


def constraints_from_record(record: Mapping[str, Any]) -> ComposerConstraints:
    snap = record["snapshot"]["constraints"]

    def rules(key: str) -> tuple[Constraint, ...]:
        return tuple(Constraint(Matcher.id(i), reason) for i, reason in snap[key])

    return ComposerConstraints(
        must_include=rules("must_include"),
        must_exclude=rules("excluded"),
        pinned=rules("pinned"),
        lane_requirements=tuple(
            LaneRequirement(r["lane"], r["min_tokens"], r["reason"])
            for r in snap["lane_requirements"]
        ),
    )


_FIELDS = (
    "kind",
    "lane",
    "token_estimate",
    "recency_bucket",
    "relevance",
    "specificity",
    "risk",
    "content_hash",
    "shape",
)


def _input_differences(
    record: Mapping[str, Any], candidates: tuple[Candidate, ...], tokenizer: Tokenizer
) -> list[str]:
    diffs: list[str] = []
    if tokenizer.name != record["tokenizer"]:
        diffs.append(f"tokenizer: recorded {record['tokenizer']}, given {tokenizer.name}")
    before = {tuple(r[:1] + r[9:10]): r for r in record["snapshot"]["candidates"]}
    after = {tuple(r[:1] + r[9:10]): r for r in candidate_snapshot(candidates)}
    old_ids: dict[str, list[list[Any]]] = {}
    new_ids: dict[str, list[list[Any]]] = {}
    for r in before.values():
        old_ids.setdefault(r[0], []).append(r)
    for r in after.values():
        new_ids.setdefault(r[0], []).append(r)
    for ident in sorted(set(old_ids) | set(new_ids)):
        olds, news = old_ids.get(ident), new_ids.get(ident)
        if olds is None:
            diffs.append(f"{ident}: new candidate")
        elif news is None:
            diffs.append(f"{ident}: candidate missing")
        elif sorted(olds) != sorted(news):
            old, new = sorted(olds)[0], sorted(news)[0]
            changed = [
                name for name, a, b in zip(_FIELDS, old[1:], new[1:], strict=True) if a != b
            ] or ["duplicates"]
            diffs.append(f"{ident}: changed {', '.join(changed)}")
    return diffs


def _compare(old: Any, new: Any, path: str, out: list[str]) -> None:
    if len(out) >= 50:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            _compare(old.get(key), new.get(key), f"{path}.{key}" if path else key, out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _compare(a, b, f"{path}[{i}]", out)
    elif canonical_json(old) != canonical_json(new):
        out.append(
            f"{path}: recorded {canonical_json(old)[:80]}, replayed {canonical_json(new)[:80]}"
        )


def replay(
    record: Mapping[str, Any], candidates: Iterable[Candidate], tokenizer: Tokenizer
) -> ReplayReport:
    """Re-run the recorded composition on ``candidates`` (no cache) and compare."""
    if record.get("schema") != 1:
        raise UsageError(f"unsupported decision record schema {record.get('schema')!r}")
    decision_id = str(record["id"])
    cands = tuple(candidates)
    changed = _input_differences(record, cands, tokenizer)
    if changed:
        return ReplayReport("inputs_changed", decision_id, tuple(changed))
    context = ComposeContext.make(
        as_of=record["as_of"],
        workspace_fingerprint=record["workspace_fingerprint"],
        trigger=record["trigger"],
        commitish=record["commitish"],
        rules_digest=record["rules_digest"],
        extra=record["extra"],
    )
    try:
        again = compose(
            cands,
            budget=budget_from_dict(record["budget"]),
            tokenizer=tokenizer,
            context=context,
            constraints=constraints_from_record(record),
            fmt=record["format"],
            cache=None,
        )
    except BudgetInfeasible as exc:
        return ReplayReport("diverged", decision_id, (f"replay raised BudgetInfeasible: {exc}",))
    old_view = decision_view(dict(record))
    new_view = decision_view(again.record)
    if canonical_json(old_view) == canonical_json(new_view):
        return ReplayReport("identical", decision_id, (), again)
    diffs: list[str] = []
    _compare(old_view, new_view, "", diffs)
    return ReplayReport("diverged", decision_id, tuple(diffs) or ("records differ",), again)
