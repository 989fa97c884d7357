"""Values the composer works on: lanes, kinds, candidates, verdicts, rendered artifacts.

Everything here is a frozen, slotted dataclass. A :class:`Candidate` carries its
internal path and content, but neither ever appears in ``repr()``, in an
:class:`ArtifactRef`, in a verdict or in a decision record: those carry ids,
kinds, lanes, counts and digests only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from ..config import LANES
from ..errors import UsageError
from .determinism import canonical_json

__all__ = [
    "KINDS",
    "KIND_PRIORITY",
    "LANES",
    "LANE_ORDER",
    "REJECT_REASONS",
    "SELECT_REASONS",
    "SHRINK_STRATEGIES",
    "ArtifactKind",
    "ArtifactRef",
    "Candidate",
    "ComposeContext",
    "DiffHunk",
    "Format",
    "HistoryEntry",
    "Lane",
    "Reason",
    "RenderedArtifact",
    "ShrinkStrategy",
    "Verdict",
    "text_hash",
]

Lane = Literal["policy", "rules", "local", "structure", "retrieved", "history"]
ArtifactKind = Literal[
    "constraint",
    "rule_doc",
    "local_diff",
    "recent_edit",
    "symbol_context",
    "dependency_graph",
    "test_context",
    "semantic_match",
    "session_history",
    "violation",
    "learning",
]
ShrinkStrategy = Literal[
    "truncate_oldest", "keep_signatures", "collapse_summary", "drop_entries", "never"
]
Format = Literal["markdown", "xml", "plain"]
Reason = Literal[
    "pinned",
    "must_include",
    "lane_min",
    "lane_requirement",
    "score",
    "fill",
    "excluded_by_policy",
    "lane_max_reached",
    "budget_exceeded",
    "dropped_after_render",
    "duplicate_id",
]

#: default lane order (the seed's priorities); a BudgetConfig may reorder lanes
LANE_ORDER: Mapping[str, int] = {lane: i for i, lane in enumerate(LANES)}

#: the seed's kind priorities, used as the second tie-breaker
KINDS: tuple[str, ...] = (
    "constraint",
    "rule_doc",
    "local_diff",
    "recent_edit",
    "symbol_context",
    "dependency_graph",
    "test_context",
    "semantic_match",
    "session_history",
    "violation",
    "learning",
)
KIND_PRIORITY: Mapping[str, int] = {kind: i for i, kind in enumerate(KINDS)}

#: per-mille score weights (the seed's 0.30 / 0.35 / 0.20 / 0.15); see ``scoring``
WEIGHTS: Mapping[str, int] = {"recency": 300, "relevance": 350, "specificity": 200, "risk": 150}
MAX_SCORE = 1_000_000
#: packed sort key: ``(MAX_SCORE - score) * RANK_SCORE_UNIT + lane rank * RANK_LANE_UNIT
#: + kind priority``; below 2**30, so CPython compares it with its one-digit int fast path
RANK_LANE_UNIT = 16
RANK_SCORE_UNIT = 8 * RANK_LANE_UNIT
assert len(KINDS) <= RANK_LANE_UNIT and len(LANES) <= 8

#: the seed's per-kind shrink strategy
SHRINK_STRATEGIES: Mapping[str, ShrinkStrategy] = {
    "constraint": "never",
    "rule_doc": "never",
    "local_diff": "truncate_oldest",
    "recent_edit": "truncate_oldest",
    "symbol_context": "keep_signatures",
    "dependency_graph": "collapse_summary",
    "test_context": "keep_signatures",
    "semantic_match": "truncate_oldest",
    "session_history": "drop_entries",
    "violation": "drop_entries",
    "learning": "drop_entries",
}

SELECT_REASONS: tuple[str, ...] = (
    "pinned",
    "must_include",
    "lane_min",
    "lane_requirement",
    "score",
    "fill",
)
REJECT_REASONS: tuple[str, ...] = (
    "excluded_by_policy",
    "lane_max_reached",
    "budget_exceeded",
    "dropped_after_render",
    "duplicate_id",
)


def text_hash(text: str) -> str:
    """Content hash of text: blake2b-128 hex of its UTF-8 bytes.

    Same algorithm as ``workspace.files.content_hash`` over the file's bytes, so a
    source can reuse the hash it already has for an unmodified file.
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """One hunk of a diff; ``timestamp`` (epoch seconds) orders truncate_oldest."""

    header: str
    lines: tuple[str, ...]
    timestamp: int = 0

    def text(self) -> str:
        return "\n".join((self.header, *self.lines))


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One entry of a history-like artifact; drop_entries drops the oldest first."""

    text: str
    timestamp: int = 0


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    """What may be logged about an artifact: no path, no content."""

    id: str
    kind: str
    lane: str
    token_estimate: int

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "token_estimate": self.token_estimate,
        }


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageError(
            f"candidate {name} must be an integer in {low}..{high}, got {value!r}",
            hint="Quantize scores with composer.determinism.quantize() before building candidates.",
        )


@dataclass(frozen=True, slots=True)
class Candidate:
    """An artifact the composer may select.

    Scoring inputs are integers: ``relevance``, ``specificity`` and ``risk`` in
    thousandths (0..1000), ``recency_bucket`` 0..5. ``content`` is the body text or
    a zero-argument callable producing it (lazy); ``content_hash`` is required for
    lazy content and computed for plain text. ``path`` is internal: used only for
    ``pattern`` matchers. ``title`` labels the rendered header (usually the path).

    Shrink inputs: ``hunks`` (truncate_oldest), ``entries`` (drop_entries),
    ``edges`` (collapse_summary) and ``language`` (keep_signatures). When
    ``hunks`` or ``entries`` are given, ``content`` should be their rendering
    (see :func:`diff_body` / :func:`entries_body` in ``shrink``).

    ``excerpt`` marks a verbatim excerpt of the file at ``path``: its numbered lines
    ``(line, text)``, ascending; ``content`` is then ``excerpt.render_excerpt(excerpt)``.
    Excerpts of one file selected together are rendered as one merged block (see
    ``render``), so overlapping spans from two lanes show each line once.
    """

    id: str
    kind: str
    lane: str
    token_estimate: int
    recency_bucket: int = 0
    relevance: int = 0
    specificity: int = 0
    risk: int = 0
    path: str = field(default="", repr=False)
    content: str | Callable[[], str] = field(default="", repr=False, compare=False)
    content_hash: str = ""
    lines: tuple[int, int] | None = None
    title: str = field(default="", repr=False)
    language: str | None = None
    hunks: tuple[DiffHunk, ...] = field(default=(), repr=False)
    entries: tuple[HistoryEntry, ...] = field(default=(), repr=False)
    edges: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    excerpt: tuple[tuple[int, str], ...] = field(default=(), repr=False)
    #: other files whose lines ``content`` quotes (a map): the secret gate checks the
    #: content against their secrets too; not part of the artifact's identity
    quotes: tuple[str, ...] = field(default=(), repr=False, compare=False)
    #: the composite score (see ``scoring``), computed once from the fields above
    score: int = field(init=False, repr=False, compare=False)
    #: score, lane (in the default lane order) and kind packed into one integer:
    #: the rank key under the default budget (see ``selection``)
    rank_base: int = field(init=False, repr=False, compare=False)
    #: :meth:`shape_json`, serialized on first use (digests read it two or three times)
    _shape_json: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.id:
            raise UsageError("candidate id must not be empty")
        if self.lane not in LANE_ORDER:
            raise UsageError(
                f"candidate {self.id}: unknown lane {self.lane!r}",
                hint=f"Lanes are {', '.join(LANES)}.",
            )
        if self.kind not in KIND_PRIORITY:
            raise UsageError(
                f"candidate {self.id}: unknown kind {self.kind!r}",
                hint=f"Kinds are {', '.join(KINDS)}.",
            )
        _check_range("token_estimate", self.token_estimate, 0, 10**9)
        _check_range("recency_bucket", self.recency_bucket, 0, 5)
        _check_range("relevance", self.relevance, 0, 1000)
        _check_range("specificity", self.specificity, 0, 1000)
        _check_range("risk", self.risk, 0, 1000)
        if self.lines is not None and not (1 <= self.lines[0] <= self.lines[1]):
            raise UsageError(
                f"candidate {self.id}: lines must be (start, end) with 1 <= start <= end"
            )
        if not self.content_hash:
            if callable(self.content):
                raise UsageError(
                    f"candidate {self.id}: lazy content needs a content_hash",
                    hint="Pass the file's content hash so cache keys change when content does.",
                )
            object.__setattr__(self, "content_hash", text_hash(self.content))
        score = (
            WEIGHTS["recency"] * 200 * self.recency_bucket
            + WEIGHTS["relevance"] * self.relevance
            + WEIGHTS["specificity"] * self.specificity
            + WEIGHTS["risk"] * self.risk
        )
        object.__setattr__(self, "score", score)
        rank_base = (
            (MAX_SCORE - score) * RANK_SCORE_UNIT
            + LANE_ORDER[self.lane] * RANK_LANE_UNIT
            + KIND_PRIORITY[self.kind]
        )
        object.__setattr__(self, "rank_base", rank_base)

    def text(self) -> str:
        """The body text (calls the lazy loader; the composer calls it once per compose)."""
        return self.content() if callable(self.content) else self.content

    def ref(self) -> ArtifactRef:
        return ArtifactRef(self.id, self.kind, self.lane, self.token_estimate)

    @property
    def strategy(self) -> ShrinkStrategy:
        return SHRINK_STRATEGIES[self.kind]

    def shape_json(self) -> str:
        """The canonical JSON of :meth:`shape` (``determinism.canonical_json``), kept."""
        memo = self._shape_json
        if memo is None:
            memo = canonical_json(self._json_shape())
            object.__setattr__(self, "_shape_json", memo)
        return memo

    def _json_shape(self) -> tuple[object, ...]:
        """:meth:`shape` as JSON sees it, built without copying tuples into lists (a
        tuple and a list serialize alike): an excerpt's lines are most of a shape."""
        return (
            *self._scalars(),
            self.lines or None,
            self.title,
            self.path,
            self.language,
            [(h.header, h.lines, h.timestamp) for h in self.hunks],
            [(e.text, e.timestamp) for e in self.entries],
            self.edges,
            *((self.excerpt,) if self.excerpt else ()),
        )

    def _scalars(self) -> tuple[object, ...]:
        """The shape's first fields: identity, estimate, scores and content hash."""
        return (
            self.id,
            self.kind,
            self.lane,
            self.token_estimate,
            self.recency_bucket,
            self.relevance,
            self.specificity,
            self.risk,
            self.content_hash,
        )

    def shape(self) -> tuple[object, ...]:
        """Everything except the body that changes the output (digested into cache keys)."""
        return (
            *self._scalars(),
            list(self.lines) if self.lines else None,
            self.title,
            self.path,
            self.language,
            [[h.header, list(h.lines), h.timestamp] for h in self.hunks],
            [[e.text, e.timestamp] for e in self.entries],
            [list(e) for e in self.edges],
            # only when present, so the shapes (and cache keys) of other candidates stay put
            *([[list(x) for x in self.excerpt]] if self.excerpt else []),
        )


class Verdict(NamedTuple):
    """Why a candidate was selected or rejected. ``rank`` is its place in the global order.

    Immutable like the other values, but a NamedTuple rather than a frozen
    dataclass: selection builds one per candidate (100k in the benchmark) and a
    frozen dataclass's ``__init__`` costs five times as much.
    """

    id: str
    kind: str
    lane: str
    token_estimate: int
    score: int
    rank: int
    selected: bool
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "token_estimate": self.token_estimate,
            "score": self.score,
            "rank": self.rank,
            "selected": self.selected,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class RenderedArtifact:
    """A selected artifact as it appears in the final pack (content internal only)."""

    id: str
    kind: str
    lane: str
    tokens: int
    original_tokens: int
    shrunk: bool
    strategy: str | None
    content: str = field(repr=False)
    #: the artifact whose block shows this one's lines (excerpts of one file merged)
    merged_into: str | None = None

    def ref(self) -> dict[str, object]:
        out: dict[str, object] = {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "tokens": self.tokens,
            "original_tokens": self.original_tokens,
            "shrunk": self.shrunk,
            "strategy": self.strategy,
        }
        if self.merged_into is not None:
            out["merged_into"] = self.merged_into
        return out


@dataclass(frozen=True, slots=True)
class ComposeContext:
    """Inputs that identify a composition but are not candidates.

    ``as_of`` is the composition time in epoch seconds (never read from a clock
    inside the composer). ``extra`` holds further key inputs (e.g. a vitals digest).
    """

    as_of: int
    workspace_fingerprint: str = ""
    trigger: str = "manual"
    commitish: str = ""
    rules_digest: str = ""
    extra: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def make(
        *,
        as_of: int,
        workspace_fingerprint: str = "",
        trigger: str = "manual",
        commitish: str = "",
        rules_digest: str = "",
        extra: Mapping[str, str] | None = None,
    ) -> ComposeContext:
        return ComposeContext(
            as_of=as_of,
            workspace_fingerprint=workspace_fingerprint,
            trigger=trigger,
            commitish=commitish,
            rules_digest=rules_digest,
            extra=tuple(sorted((extra or {}).items())),
        )
