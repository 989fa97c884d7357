"""Bloat guards and the computed ``bloat_checks`` of a pack.

Guards (applied while anchors are made, see ``anchors`` and ``ladder``):

- an anchor spans at most :data:`MAX_EXCERPT_LINES` (60) lines; longer spans are
  clipped around their focus line;
- a log file (``*.log``, ``*.out``, or under a ``log/``/``logs/`` folder) longer
  than :data:`MAX_LOG_LINES` (100) lines is never anchored;
- binary files (a NUL byte in the first 8 KiB) are never anchored;
- over budget, the lowest-value anchor (furthest from the change surface) is
  dropped first (``anchors.drop_order``);
- anchors are ordered code -> tests -> kb -> decisions -> artifacts.

:func:`compute_checks` measures each of these on the finished pack (and the
files on disk), so ``bloat_checks`` reports what is true, never what was meant.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from .lcp import ANCHOR_KINDS, MAX_ANCHORS, MAX_SUMMARY_LINES, Anchor, BloatChecks, MicroSummary

__all__ = [
    "MAX_EXCERPT_LINES",
    "MAX_LOG_LINES",
    "clip_span",
    "compute_checks",
    "is_binary_file",
    "is_log_path",
    "log_too_long",
]

MAX_EXCERPT_LINES = 60
MAX_LOG_LINES = 100
_SNIFF = 8192


def is_binary_file(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` looks binary (NUL byte in its first 8 KiB); missing -> False."""
    try:
        with open(root / rel, "rb") as fh:
            return b"\x00" in fh.read(_SNIFF)
    except OSError:
        return False


def is_log_path(rel: str) -> bool:
    """Whether ``rel`` names a log file."""
    name = posixpath.basename(rel).lower()
    folders = rel.lower().split("/")[:-1]
    return name.endswith((".log", ".out")) or any(f in ("log", "logs") for f in folders)


def log_too_long(root: Path, rel: str) -> bool:
    """A log file longer than :data:`MAX_LOG_LINES` lines."""
    if not is_log_path(rel):
        return False
    try:
        with open(root / rel, "rb") as fh:
            return sum(1 for _ in fh) > MAX_LOG_LINES
    except OSError:
        return False


def clip_span(start: int, end: int, focus: int | None = None) -> tuple[int, int]:
    """``(start, end)`` cut to at most 60 lines, keeping ``focus`` (default ``start``) inside.

    The window starts up to 10 lines before the focus, so the lines that lead to
    it stay visible.
    """
    if end - start + 1 <= MAX_EXCERPT_LINES:
        return start, end
    f = start if focus is None else min(max(focus, start), end)
    lo = max(start, f - 10)
    hi = lo + MAX_EXCERPT_LINES - 1
    if hi > end:
        hi = end
        lo = end - MAX_EXCERPT_LINES + 1
    return lo, hi


def _ordered(anchors: Sequence[Anchor]) -> bool:
    ranks = [ANCHOR_KINDS.index(a.kind) for a in anchors]
    return ranks == sorted(ranks)


def compute_checks(
    root: Path,
    anchors: Sequence[Anchor],
    summaries: Sequence[MicroSummary],
    *,
    token_estimate: int,
    budget: int,
) -> BloatChecks:
    """Measure every guard on the pack's anchors and summaries and on the files."""
    keys = [(a.path, a.ref) for a in anchors]
    spans_ok = all(a.span[1] - a.span[0] + 1 <= MAX_EXCERPT_LINES for a in anchors)
    summaries_ok = all(s.summary.count("\n") < MAX_SUMMARY_LINES for s in summaries)
    return BloatChecks(
        dedup_ok=len(set(keys)) == len(keys),
        within_budget=token_estimate <= budget,
        no_large_blobs=spans_ok and summaries_ok,
        no_binaries=not any(is_binary_file(root, a.path) for a in anchors),
        no_long_logs=not any(log_too_long(root, a.path) for a in anchors),
        stable_order=_ordered(anchors),
        anchors_within_limit=len(anchors) <= MAX_ANCHORS,
    )
