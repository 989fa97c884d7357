"""The terminal view of a composition's explanation.

Presentation, kept out of the pure ``composer`` core: it lays an
:class:`~codelibrarian.composer.Explanation` out as rich tables rendered to a
string (plain text, no colour codes, no environment lookups), so the same
explanation at the same width always gives the same text. Nothing is printed here.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table

from .composer.explain import Explanation, lane_bar

__all__ = ["render_terminal"]


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
