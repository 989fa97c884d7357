"""The explanation of a composition, built from the verdicts (never reconstructed).

Seed defects fixed: ``pinnedCount`` was a proxy (local diffs) and
``mustIncludeCount`` always 0; here both count the candidates actually selected
for that reason. Rankings are complete (not a top 3) and every rejection keeps
its reason. Terminal rendering goes to a string at a given width with no
environment lookups, so golden tests are stable; the CLI prints the string.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table

from .types import Verdict

__all__ = ["ConstraintCounts", "Explanation", "LaneLine", "lane_bar", "render_terminal"]


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


def _pct(permille: int) -> str:
    return f"{permille // 10}.{permille % 10}%"


def render_terminal(explanation: Explanation, *, width: int = 100, limit: int = 50) -> str:
    """Plain text (no colour codes) for a terminal of ``width`` columns.

    ``limit`` caps the ranking and rejection tables (0 = everything).
    """
    out = io.StringIO()
    console = Console(
        file=out,
        width=width,
        color_system=None,
        force_terminal=False,
        force_interactive=False,
        legacy_windows=False,
        soft_wrap=False,
        _environ={},
    )
    exp = explanation
    console.print("Composition summary", style="bold")
    console.print(f"  {exp.summary}{' (cache hit)' if exp.cache_hit else ''}")
    console.print()
    lanes = Table(title="Lane breakdown", box=box.SIMPLE, title_justify="left")
    for col, just in (
        ("lane", "left"),
        ("usage", "left"),
        ("selected", "right"),
        ("tokens", "right"),
        ("min", "right"),
        ("reserved", "right"),
    ):
        lanes.add_column(col, justify=just)  # type: ignore[arg-type]
    for ln in exp.lanes:
        lanes.add_row(
            ln.lane,
            lane_bar(ln.tokens, ln.max),
            f"{ln.selected}/{ln.candidates}",
            f"{ln.tokens}/{ln.max}",
            str(ln.min),
            str(ln.reserved),
        )
    console.print(lanes)
    c = exp.constraints
    console.print(
        f"  constraints: {c.pinned} pinned, {c.must_include} must-include, "
        f"{c.excluded} excluded, {c.lane_requirements} lane requirements"
    )
    console.print(
        f"  compression: pack is {_pct(exp.compression_permille)} of candidate tokens; "
        f"shrinking kept {_pct(exp.shrink_permille)} of the rendered tokens"
    )
    console.print()
    for title, rows in (("Rankings", exp.rankings), ("Rejections", exp.rejections)):
        if not rows:
            continue
        table = Table(title=title, box=box.SIMPLE, title_justify="left")
        for col, just in (
            ("#", "right"),
            ("id", "left"),
            ("kind", "left"),
            ("lane", "left"),
            ("score", "right"),
            ("est", "right"),
            ("verdict", "left"),
        ):
            table.add_column(col, justify=just, no_wrap=col != "verdict")  # type: ignore[arg-type]
        shown = rows if limit <= 0 else rows[:limit]
        for v in shown:
            verdict = v.reason + (f" ({v.detail})" if v.detail else "")
            table.add_row(
                str(v.rank + 1),
                v.id,
                v.kind,
                v.lane,
                str(v.score),
                str(v.token_estimate),
                verdict,
            )
        console.print(table)
        if len(rows) > len(shown):
            console.print(f"  … {len(rows) - len(shown)} more")
    return out.getvalue()
