"""What ``compose`` and ``replay`` return: the pack and everything that explains it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..composer import Explanation
from ..config import LANES
from ..errors import UnverifiedByTrace
from ..gate import GateDecision
from ..policy_engine import Redaction
from ..trigger import Trigger
from ..vitals import VitalsSnapshot

__all__ = ["ComposeResult", "PackedArtifact", "RejectedArtifact", "ReplayResult"]


@dataclass(frozen=True, slots=True)
class PackedArtifact:
    """One artifact as rendered in the pack (``path``/``lines`` are local-only)."""

    id: str
    kind: str
    lane: str
    path: str | None
    lines: tuple[int, int] | None
    tokens: int
    shrunk: bool
    strategy: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "path": self.path,
            "lines": list(self.lines) if self.lines else None,
            "tokens": self.tokens,
            "shrunk": self.shrunk,
            "strategy": self.strategy,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class RejectedArtifact:
    """A candidate left out, with the composer's or the policy's reason."""

    id: str
    kind: str
    lane: str
    token_estimate: int
    reason: str
    detail: str
    path: str | None = None  # only with reveal=True, never for sensitive files

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "token_estimate": self.token_estimate,
            "reason": self.reason,
            "detail": self.detail,
        }
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass(frozen=True, slots=True)
class ComposeResult:
    """The pack and everything that explains it."""

    text: str
    format: str
    tokens: int
    budget: int
    model: str
    tokenizer: str
    decision_id: str | None
    cache_key: str
    cache_hit: bool
    artifacts: tuple[PackedArtifact, ...]
    rejected: tuple[RejectedArtifact, ...]
    redactions: tuple[Redaction, ...]
    vitals: VitalsSnapshot
    trigger: Trigger
    explanation: Explanation = field(repr=False)
    candidate_count: int = 0
    #: what the caller should know: an empty pack, an unknown model, a file left out
    warnings: tuple[str, ...] = ()
    #: redactions of the task and diff as they came in, and of the rendered text
    intake_redactions: tuple[GateDecision, ...] = ()
    #: what was not available (P23): a partial index, an index rebuilt on the way
    degraded: tuple[UnverifiedByTrace, ...] = ()
    #: the locate stages that ranked files and spans, ``(stage, summary)``: counts, no paths
    locate: tuple[tuple[str, str], ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """Relative paths of the files the pack shows, in pack order, without repeats."""
        return tuple(dict.fromkeys(a.path for a in self.artifacts if a.path))

    def explain_text(self, *, width: int = 100) -> str:
        """The explanation as terminal text (ids, kinds, lanes, reasons; no paths)."""
        from ..explain_view import render_terminal  # rich: only when an explanation is drawn

        text = render_terminal(self.explanation, width=width)
        if self.locate:
            text += "\nLocate stages\n" + "".join(
                f"  {name}: {summary}\n" for name, summary in self.locate
            )
        if self.redactions:
            spans = sum(r.spans for r in self.redactions)
            text += (
                f"\nsecret_redacted: {spans} span(s) in {len(self.redactions)} artifact(s)"
                + "".join(f"\n  {r.id} {r.kind}: {r.spans} ({_rules(r)})" for r in self.redactions)
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (schema in docs/compose.md)."""
        return {
            "schema": "codelibrarian.compose/1",
            "decision_id": self.decision_id,
            "cache_key": self.cache_key,
            "cache_hit": self.cache_hit,
            "format": self.format,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "budget": self.budget,
            "tokens": self.tokens,
            "totals": {
                "candidates": self.candidate_count,
                "selected": len(self.artifacts),
                "rejected": len(self.rejected),
                "shrunk": sum(1 for a in self.artifacts if a.shrunk),
                "redacted_spans": sum(r.spans for r in self.redactions),
                "lane_tokens": _lane_tokens(self.artifacts),
            },
            "artifacts": [a.to_dict() for a in self.artifacts],
            "rejected": [r.to_dict() for r in self.rejected],
            "redactions": [r.to_dict() for r in self.redactions],
            "intake_redactions": [d.to_dict() for d in self.intake_redactions],
            "warnings": list(self.warnings),
            "vitals": self.vitals.to_dict(),
            "degraded": [d.to_dict() for d in self.degraded],
            "locate": [{"stage": name, "summary": summary} for name, summary in self.locate],
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Outcome of :meth:`Librarian.replay`: ``identical``, ``inputs_changed`` or ``diverged``."""

    decision_id: str
    status: Literal["identical", "inputs_changed", "diverged"]
    differences: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.status == "identical"

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision_id": self.decision_id,
            "status": self.status,
            "differences": list(self.differences),
        }


def _rules(r: Redaction) -> str:
    return ", ".join(f"{name}={n}" for name, n in r.rules)


def _lane_tokens(artifacts: Sequence[PackedArtifact]) -> dict[str, int]:
    out = dict.fromkeys(LANES, 0)
    for a in artifacts:
        out[a.lane] += a.tokens
    return out
