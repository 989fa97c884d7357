"""The explanation of a composition, built from the verdicts (never reconstructed).

Seed defects fixed: ``pinnedCount`` was a proxy (local diffs) and
``mustIncludeCount`` always 0; here both count the candidates actually selected
for that reason. Rankings are complete (not a top 3) and every rejection keeps
its reason. The terminal view lives outside the core, in ``explain_view``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import Verdict

__all__ = ["ConstraintCounts", "Explanation", "LaneLine", "lane_bar"]


@dataclass(frozen=True, slots=True)
class LaneLine:
    lane: str
    candidates: int
    selected: int
    tokens: int  # rendered tokens of the lane's blocks in the final pack
    estimate: int  # token estimates of the lane's selected candidates
    min: int
    max: int
    reserved: int  # max(min, requirement) capped at max
    required: int  # policy lane requirement (0 if none)

    def to_dict(self) -> dict[str, object]:
        return {
            "lane": self.lane,
            "candidates": self.candidates,
            "selected": self.selected,
            "tokens": self.tokens,
            "estimate": self.estimate,
            "min": self.min,
            "max": self.max,
            "reserved": self.reserved,
            "required": self.required,
        }


@dataclass(frozen=True, slots=True)
class ConstraintCounts:
    pinned: int
    must_include: int
    excluded: int
    lane_requirements: int

    def to_dict(self) -> dict[str, int]:
        return {
            "pinned": self.pinned,
            "must_include": self.must_include,
            "excluded": self.excluded,
            "lane_requirements": self.lane_requirements,
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    lanes: tuple[LaneLine, ...]
    rankings: tuple[Verdict, ...]  # every candidate, in rank order
    constraints: ConstraintCounts
    budget: int
    tokens: int  # exact tokens of the final pack
    rendered_tokens: int  # tokens of the selected blocks before any shrink
    candidate_tokens: int  # sum of all candidates' estimates
    shrunk: int
    cache_hit: bool

    @property
    def rejections(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.rankings if not v.selected)

    @property
    def selected_count(self) -> int:
        return sum(1 for v in self.rankings if v.selected)

    @property
    def compression_permille(self) -> int:
        """Final pack tokens per thousand candidate tokens."""
        return self.tokens * 1000 // self.candidate_tokens if self.candidate_tokens else 1000

    @property
    def shrink_permille(self) -> int:
        """Final pack tokens per thousand tokens of the unshrunk rendering."""
        return self.tokens * 1000 // self.rendered_tokens if self.rendered_tokens else 1000

    @property
    def summary(self) -> str:
        dropped = sum(1 for v in self.rankings if v.reason == "dropped_after_render")
        parts = [
            f"Selected {self.selected_count} of {len(self.rankings)} candidates",
            f"using {self.tokens}/{self.budget} tokens",
        ]
        if self.shrunk:
            parts.append(f"{self.shrunk} shrunk")
        if dropped:
            parts.append(f"{dropped} dropped after render")
        under = sum(1 for ln in self.lanes if ln.estimate < ln.reserved)
        if under:
            parts.append(f"{under} lanes under their reservation")
        return ", ".join(parts)

    def with_cache_hit(self, hit: bool) -> Explanation:
        return Explanation(
            self.lanes,
            self.rankings,
            self.constraints,
            self.budget,
            self.tokens,
            self.rendered_tokens,
            self.candidate_tokens,
            self.shrunk,
            hit,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "summary": self.summary,
            "budget": self.budget,
            "tokens": self.tokens,
            "rendered_tokens": self.rendered_tokens,
            "candidate_tokens": self.candidate_tokens,
            "compression_permille": self.compression_permille,
            "shrink_permille": self.shrink_permille,
            "candidate_count": len(self.rankings),
            "selected_count": self.selected_count,
            "shrunk_count": self.shrunk,
            "cache_hit": self.cache_hit,
            "constraints": self.constraints.to_dict(),
            "lanes": [ln.to_dict() for ln in self.lanes],
            "rankings": [v.to_dict() for v in self.rankings],
            "rejections": [v.to_dict() for v in self.rejections],
        }


def lane_bar(used: int, maximum: int, width: int = 10) -> str:
    """The seed's lane bar: filled blocks for the used share of the lane's max."""
    filled = min(width, (used * width + maximum // 2) // maximum) if maximum > 0 else 0
    return "█" * filled + "░" * (width - filled)
