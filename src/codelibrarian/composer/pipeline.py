"""``compose()``: select → render → shrink → explain → record, with an optional cache.

Pure: time (``context.as_of``), the tokenizer and the cache object come in as
arguments; nothing here reads a clock, the environment or the filesystem.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..config import LANES, BudgetConfig
from ..errors import UsageError
from ..tokens import Tokenizer
from .budget import budget_digest, validate
from .cache import CacheKeyInputs, CompositionStore, cache_key, candidate_digest
from .constraints import EMPTY_CONSTRAINTS, ComposerConstraints
from .determinism import digest
from .explain import ConstraintCounts, Explanation, LaneLine
from .record import build_record, decision_id
from .render import FORMATS, render_to_fit
from .selection import select
from .types import Candidate, ComposeContext, Format, RenderedArtifact, Verdict

__all__ = ["Composition", "compose"]

#: rejections the fill step may reverse when the rendered pack leaves room
_FILLABLE = frozenset({"budget_exceeded", "lane_max_reached"})


@dataclass(frozen=True, slots=True)
class Composition:
    """The result of one composition. ``text`` is the pack (within budget)."""

    text: str
    tokens: int
    budget: int
    format: str
    rendered: tuple[RenderedArtifact, ...]
    verdicts: tuple[Verdict, ...]
    explanation: Explanation
    cache_key: str
    cache_hit: bool
    record: dict[str, Any]

    @property
    def selected(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.selected)

    @property
    def decision_id(self) -> str:
        return str(self.record["id"])

    def to_dict(self) -> dict[str, Any]:
        """Everything, content included: for the local on-disk cache only, never for logs."""
        exp = self.explanation
        return {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "format": self.format,
            "rendered": [{**r.ref(), "content": r.content} for r in self.rendered],
            "verdicts": [v.to_dict() for v in self.verdicts],
            "explanation": {
                "lanes": [ln.to_dict() for ln in exp.lanes],
                "constraints": exp.constraints.to_dict(),
                "budget": exp.budget,
                "tokens": exp.tokens,
                "rendered_tokens": exp.rendered_tokens,
                "candidate_tokens": exp.candidate_tokens,
                "shrunk": exp.shrunk,
            },
            "cache_key": self.cache_key,
            "record": self.record,
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Composition:
        """Inverse of :meth:`to_dict` (raises KeyError/TypeError on a malformed dict)."""
        verdicts = tuple(Verdict(**v) for v in data["verdicts"])
        exp = data["explanation"]
        explanation = Explanation(
            lanes=tuple(LaneLine(**ln) for ln in exp["lanes"]),
            rankings=verdicts,
            constraints=ConstraintCounts(**exp["constraints"]),
            budget=exp["budget"],
            tokens=exp["tokens"],
            rendered_tokens=exp["rendered_tokens"],
            candidate_tokens=exp["candidate_tokens"],
            shrunk=exp["shrunk"],
            cache_hit=False,
        )
        return Composition(
            text=data["text"],
            tokens=data["tokens"],
            budget=data["budget"],
            format=data["format"],
            rendered=tuple(RenderedArtifact(**r) for r in data["rendered"]),
            verdicts=verdicts,
            explanation=explanation,
            cache_key=data["cache_key"],
            cache_hit=False,
            record=dict(data["record"]),
        )

    def as_cache_hit(self, context: ComposeContext) -> Composition:
        record = dict(self.record)
        record["cache_hit"] = True
        record["as_of"] = context.as_of
        record["trigger"] = context.trigger
        record["id"] = decision_id(self.cache_key, context)
        return replace(
            self,
            cache_hit=True,
            explanation=self.explanation.with_cache_hit(True),
            record=record,
        )


def _key_inputs(
    *,
    candidates: tuple[Candidate, ...],
    budget: BudgetConfig,
    constraints: ComposerConstraints,
    tokenizer: Tokenizer,
    context: ComposeContext,
    fmt: str,
) -> CacheKeyInputs:
    return CacheKeyInputs(
        workspace_fingerprint=context.workspace_fingerprint,
        commitish=context.commitish,
        candidate_digest=candidate_digest(candidates),
        rules_digest=context.rules_digest,
        budget_digest=budget_digest(budget),
        constraints_digest=digest(constraints.to_dict()),
        tokenizer=tokenizer.name,
        format=fmt,
        extra=context.extra,
    )


def compose(
    candidates: Iterable[Candidate],
    *,
    budget: BudgetConfig,
    tokenizer: Tokenizer,
    context: ComposeContext,
    constraints: ComposerConstraints = EMPTY_CONSTRAINTS,
    fmt: Format = "markdown",
    cache: CompositionStore[Composition] | None = None,
) -> Composition:
    """Compose a pack from ``candidates`` within ``budget.total_tokens`` tokens.

    Raises ``BudgetInfeasible`` when pinned / must-include / never-shrink artifacts
    alone cannot fit, ``UsageError``/``ConfigError`` for bad arguments.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint=f"Use one of: {', '.join(FORMATS)}.")
    validate(budget)
    cands = tuple(candidates)
    inputs = _key_inputs(
        candidates=cands,
        budget=budget,
        constraints=constraints,
        tokenizer=tokenizer,
        context=context,
        fmt=fmt,
    )
    key = cache_key(inputs)
    if cache is not None:
        hit = cache.get(key, now=context.as_of)
        if hit is not None:
            return hit.as_cache_hit(context)

    selection = select(cands, budget, constraints)
    bodies = {c.id: c.text() for c in selection.selected}
    # ids given twice are settled by selection's de-duplication: leave them out here
    seen: dict[str, int] = {}
    for c in cands:
        seen[c.id] = seen.get(c.id, 0) + 1
    by_id = {c.id: c for c in cands if seen[c.id] == 1}
    spare = [
        (by_id[v.id], v.rank)
        for v in selection.verdicts
        if not v.selected and v.reason in _FILLABLE and v.id in by_id
    ]
    result = render_to_fit(
        selection,
        bodies,
        fmt=fmt,
        tokenizer=tokenizer,
        budget=budget.total_tokens,
        spare=spare,
    )
    dropped = set(result.dropped)
    filled = set(result.filled)
    verdicts = tuple(
        v._replace(
            selected=False,
            reason="dropped_after_render",
            detail=f"rendered pack over {budget.total_tokens} tokens",
        )
        if v.selected and v.id in dropped
        else v._replace(selected=True, reason="fill", detail="filled the unused remainder")
        if v.id in filled
        else v
        for v in selection.verdicts
    )

    lane_tokens = dict.fromkeys(LANES, 0)
    for r in result.rendered:
        lane_tokens[r.lane] += r.tokens
    lane_lines = []
    for res in selection.reservations:
        lane_verdicts = [v for v in verdicts if v.lane == res.lane]
        chosen = [v for v in lane_verdicts if v.selected]
        spec = budget.lanes[res.lane]
        lane_lines.append(
            LaneLine(
                lane=res.lane,
                candidates=len(lane_verdicts),
                selected=len(chosen),
                tokens=lane_tokens[res.lane],
                estimate=sum(v.token_estimate for v in chosen),
                min=spec.min,
                max=spec.max,
                reserved=res.target,
                required=res.required,
            )
        )
    counts = ConstraintCounts(
        pinned=sum(1 for v in verdicts if v.selected and v.reason == "pinned"),
        must_include=sum(1 for v in verdicts if v.selected and v.reason == "must_include"),
        excluded=sum(1 for v in verdicts if v.reason == "excluded_by_policy"),
        lane_requirements=len(constraints.lane_requirements),
    )
    explanation = Explanation(
        lanes=tuple(lane_lines),
        rankings=verdicts,
        constraints=counts,
        budget=budget.total_tokens,
        tokens=result.tokens,
        rendered_tokens=result.original_tokens,
        candidate_tokens=sum(c.token_estimate for c in cands),
        shrunk=sum(1 for r in result.rendered if r.shrunk),
        cache_hit=False,
    )
    record = build_record(
        context=context,
        budget=budget,
        tokenizer_name=tokenizer.name,
        fmt=fmt,
        cache_key=key,
        cache_hit=False,
        digests={
            "candidates": inputs.candidate_digest,
            "constraints": inputs.constraints_digest,
            "budget": inputs.budget_digest,
        },
        candidates=cands,
        verdicts=[v.to_dict() for v in verdicts],
        rendered=[r.ref() for r in result.rendered],
        lane_requirements=[r.to_dict() for r in constraints.lane_requirements],
        lane_tokens=lane_tokens,
        tokens=result.tokens,
        text_digest=hashlib.sha256(result.text.encode("utf-8", "surrogatepass")).hexdigest()[:32],
    )
    composition = Composition(
        text=result.text,
        tokens=result.tokens,
        budget=budget.total_tokens,
        format=fmt,
        rendered=result.rendered,
        verdicts=verdicts,
        explanation=explanation,
        cache_key=key,
        cache_hit=False,
        record=record,
    )
    if cache is not None:
        cache.put(
            key, composition, now=context.as_of, workspace_fingerprint=context.workspace_fingerprint
        )
    return composition
