"""Local lane: the change in progress and the code around it.

Candidates (scores in thousandths):

- ``local_diff``: the current change, one candidate per file; a file whose diff
  exceeds 1,500 tokens is split into one candidate per hunk (each carrying the
  file header). relevance 1000, specificity 900, risk 700 (1000 for deletions);
  recency from the file's modification time against ``as_of`` in the work tree
  (``auto`` / ``base`` changes), 5 for a diff given as text. The policy engine
  pins the ``local_diff`` candidates (see ``policy_engine``).
- ``recent_edit``: the current code around each changed file's hunks (the whole
  file when it is at most 600 tokens, else each hunk's lines with 12 lines of
  context, merged), *without the lines the diff itself prints* (a hunk's context
  lines and the lines it removes or adds): the diff is pinned, so repeating them
  would spend the budget twice on one line. With the index, a window keeps to
  the definitions its hunks sit in (the rest of the function being changed, not
  its neighbours; module-level hunks keep the plain window). Each window is an
  excerpt whose gaps are the ``⋮`` marker, framed by the first lines of the
  definitions enclosing its hunks when those start above it. relevance
  800, specificity 700, risk 500, same recency. For a diff given as text whose
  ``+`` lines are not in the work tree (the diff is not applied), the windows use
  the hunks' old-side line numbers (and the diff prints the old side's context
  and removed lines).
- A change to a sensitive file yields one ``local_diff`` with a placeholder body
  (the policy engine excludes it; the file is never read).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from ..composer.determinism import recency_bucket
from ..composer.excerpt import render_excerpt
from ..composer.shrink import diff_body
from ..composer.types import Candidate, DiffHunk
from ..workspace.git import FileDiff, Hunk
from .base import PLACEHOLDER, SourceContext

__all__ = ["LocalSource", "changed_line_count", "diff_shown_lines", "hunk_windows"]

_SPLIT_DIFF = 1500
_WHOLE_FILE = 600
_CONTEXT = 12
#: a window keeps only the lines of the definitions its hunks sit in (when the index
#: knows them): the rest of the function being changed, not its neighbours
CLIP_TO_DEFINITION = True
#: changed files whose definition ranges one index generation keeps
_MEMO_FILES = 512


def changed_line_count(diffs: Sequence[FileDiff]) -> int:
    """Added plus removed lines of a change."""
    total = 0
    for d in diffs:
        for h in d.hunks:
            total += sum(1 for ln in h.lines if ln[:1] in ("+", "-"))
    return total


def _applied(hunks: Sequence[Hunk], lines: Sequence[str]) -> bool:
    """Whether the ``+`` lines of the hunks sit at their new-side positions in ``lines``."""
    checked = found = 0
    for h in hunks:
        for number in h.added()[:20]:
            checked += 1
            idx = number - 1
            added = [t[1:] for t in h.lines if t.startswith("+")]
            if 0 <= idx < len(lines) and lines[idx] in added:
                found += 1
    return checked == 0 or found * 2 >= checked


def hunk_windows(
    hunks: Sequence[Hunk], n_lines: int, *, new_side: bool, context: int = _CONTEXT
) -> list[tuple[int, int]]:
    """Merged 1-based inclusive line windows around hunks, clipped to the file."""
    spans: list[tuple[int, int]] = []
    for h in hunks:
        start, count = (h.new_start, h.new_lines) if new_side else (h.old_start, h.old_lines)
        a = max(1, start - context)
        b = min(n_lines, start + max(count, 1) - 1 + context)
        if a <= b:
            spans.append((a, b))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def diff_shown_lines(hunks: Sequence[Hunk], *, new_side: bool) -> frozenset[int]:
    """The file's line numbers (on one side) that the hunks print themselves.

    On the old side a hunk prints its context and removed lines, on the new side
    its context and added lines: ``old_lines`` / ``new_lines`` lines from the
    start, so a pure insertion prints none of the old side.
    """
    out: set[int] = set()
    for h in hunks:
        start, count = (h.new_start, h.new_lines) if new_side else (h.old_start, h.old_lines)
        out.update(range(start, start + count))
    return frozenset(out)


def _symbol_lines(ctx: SourceContext, path: str) -> tuple[tuple[int, int], ...]:
    """The line ranges of a file's definitions in the index, kept per index generation
    (``memo["shared"]``): a resident process reads them once per changed file."""
    if ctx.store is None:
        return ()
    memo: dict[str, tuple[tuple[int, int], ...]] = ctx.memo.setdefault("shared", {}).setdefault(
        "local.symbol_lines", {}
    )
    found = memo.get(path)
    if found is None:
        found = tuple(sorted({(s.start_line, s.end_line) for s in ctx.store.symbols(path=path)}))
        if len(memo) < _MEMO_FILES:
            memo[path] = found
    return found


def _definitions(
    ctx: SourceContext, path: str, hunks: Sequence[Hunk], *, new_side: bool
) -> list[tuple[int, int, tuple[int, ...], tuple[int, int] | None]]:
    """Per hunk: its first and last line, the first lines of the definitions enclosing
    it (outermost first) and the lines of the innermost ones (``None``: module level).

    Read from the index; without one every hunk is at module level, unframed.
    """
    symbols = _symbol_lines(ctx, path) if hunks else ()
    out: list[tuple[int, int, tuple[int, ...], tuple[int, int] | None]] = []
    for h in hunks:
        first, count = (h.new_start, h.new_lines) if new_side else (h.old_start, h.old_lines)
        last = first + max(count, 1) - 1
        heads = tuple(sorted({a for a, b in symbols if a < first <= b}))
        inner = [
            min(((b - a, a, b) for a, b in symbols if a <= at <= b), default=None)
            for at in (first, last)
        ]
        bounds = None
        if inner[0] is not None and inner[1] is not None:
            bounds = (min(inner[0][1], inner[1][1]), max(inner[0][2], inner[1][2]))
        out.append((first, last, heads, bounds))
    return out


def _language(path: str) -> str | None:
    ext = posixpath.splitext(path)[1].lower().lstrip(".")
    return ext or None


class LocalSource:
    """The current diff (``local_diff``) and the code it touches (``recent_edit``)."""

    name = "local"

    def _recency(self, ctx: SourceContext, path: str) -> int:
        if ctx.trigger.change.mode == "diff":
            return 5
        try:
            mtime = int((ctx.root / path).stat().st_mtime)
        except OSError:
            return 5
        return recency_bucket(ctx.trigger.as_of - mtime)

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        out: list[Candidate] = []
        for diff in sorted(ctx.changes, key=lambda d: d.path):
            if diff.binary or not diff.hunks:
                continue
            recency = self._recency(ctx, diff.path)
            risk = 1000 if diff.status == "deleted" else 700
            if ctx.sensitive(diff.path):
                # never carry a sensitive file's change: the policy engine excludes this
                out.append(
                    ctx.candidate(
                        kind="local_diff",
                        lane="local",
                        path=diff.path,
                        content=PLACEHOLDER,
                        title=diff.path,
                        relevance=1000,
                        specificity=900,
                        risk=risk,
                        recency_bucket=recency,
                    )
                )
                continue
            hunks = tuple(DiffHunk(h.header, h.lines, 0) for h in diff.hunks)
            text = diff_body(hunks)
            if ctx.tokenizer.count(text) <= _SPLIT_DIFF or len(diff.hunks) == 1:
                out.append(
                    ctx.candidate(
                        kind="local_diff",
                        lane="local",
                        path=diff.path,
                        content=text,
                        title=f"{diff.path} (current change)",
                        relevance=1000,
                        specificity=900,
                        risk=risk,
                        recency_bucket=recency,
                        language="diff",
                        hunks=hunks,
                    )
                )
            else:
                for index in range(len(diff.hunks)):
                    out.append(
                        ctx.candidate(
                            kind="local_diff",
                            lane="local",
                            path=diff.path,
                            content=diff_body((hunks[index],)),
                            title=f"{diff.path} (current change, hunk {index + 1})",
                            chunk_index=index + 1,
                            relevance=1000,
                            specificity=900,
                            risk=risk,
                            recency_bucket=recency,
                            language="diff",
                            hunks=(hunks[index],),
                        )
                    )
            if diff.status == "deleted":
                continue
            current = ctx.read(diff.path)
            if not current:
                continue
            out.extend(self._around(ctx, diff, current, recency))
        return out

    def _around(
        self, ctx: SourceContext, diff: FileDiff, current: str, recency: int
    ) -> list[Candidate]:
        lines = current.splitlines()
        lang = _language(diff.path)
        new_side = ctx.trigger.change.mode != "diff" or _applied(diff.hunks, lines)
        shown = diff_shown_lines(diff.hunks, new_side=new_side)
        if ctx.tokenizer.count(current) <= _WHOLE_FILE:
            windows = [(1, max(1, len(lines)))]
        else:
            windows = hunk_windows(diff.hunks, len(lines), new_side=new_side, context=_CONTEXT)
        owners = _definitions(ctx, diff.path, diff.hunks, new_side=new_side)
        out: list[Candidate] = []
        for index, (a, b) in enumerate(windows):
            inside = [o for o in owners if a <= o[0] <= b]
            allowed: set[int] | None = None
            if CLIP_TO_DEFINITION and inside and all(o[3] is not None for o in inside):
                allowed = set()
                for o in inside:
                    assert o[3] is not None
                    allowed.update(range(o[3][0], o[3][1] + 1))
            picked = [
                n for n in range(a, b + 1) if n not in shown and (allowed is None or n in allowed)
            ]
            if not any(lines[n - 1].strip() for n in picked):
                continue  # the diff prints all of this window
            heads = {head for o in inside for head in o[2] if head < picked[0]}
            excerpt = tuple((n, lines[n - 1]) for n in sorted({*heads, *picked}))
            out.append(
                ctx.candidate(
                    kind="recent_edit",
                    lane="local",
                    path=diff.path,
                    content=render_excerpt(excerpt),
                    title=diff.path,
                    chunk_index=index,
                    relevance=800,
                    specificity=700,
                    risk=500,
                    recency_bucket=recency,
                    lines=(excerpt[0][0], excerpt[-1][0]),
                    language=lang,
                    excerpt=excerpt,
                )
            )
        return out
