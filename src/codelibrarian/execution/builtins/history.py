"""Builtin history search (``tp_search_history``): commits touching the task's words or paths.

Reads ``git log`` (newest first, at most 2,000 commits back). A commit matches by
its subject (at least one task keyword, or two when the task has four or more) or
by its files (one of the given paths, or a changed file of the current change).
Commits matching both rank first, then by recency.
"""

from __future__ import annotations

from typing import Any

from ...errors import LibrarianError
from ...trigger import derive_keywords
from ...workspace.git import recent_commits
from . import BuiltinContext, BuiltinFn

__all__ = ["EXECUTORS", "search_history"]

_SCAN = 2000


def search_history(ctx: BuiltinContext) -> dict[str, Any]:
    inp = ctx.input
    query = str(inp.get("query") or inp.get("task") or "")
    keywords = [k.lower() for k in derive_keywords(query)]
    paths = {str(p) for p in inp.get("paths", ()) or ()}
    if not paths and not inp.get("query"):
        paths = set(ctx.changed_paths)
    limit = int(inp.get("max_commits", 30))
    need = 2 if len(keywords) >= 4 else 1
    try:
        commits = recent_commits(ctx.root, limit=_SCAN)
    except LibrarianError:
        commits = ()
    ctx.check()
    hits: list[tuple[int, int, dict[str, Any]]] = []
    for order, c in enumerate(commits):
        words = c.subject.lower()
        by_message = sum(1 for k in keywords if k in words) >= need if keywords else False
        by_path = bool(paths) and any(f in paths for f in c.files)
        if not (by_message or by_path):
            continue
        matched = "both" if by_message and by_path else ("message" if by_message else "path")
        rank = 0 if matched == "both" else 1
        hits.append(
            (
                rank,
                order,
                {
                    "sha": c.sha,
                    "subject": c.subject[:300],
                    "author_time": c.timestamp,
                    "files": list(c.files[:50]),
                    "matched": matched,
                },
            )
        )
    hits.sort(key=lambda h: (h[0], h[1]))
    chosen = [h[2] for h in hits[:limit]]
    touched = sorted({f for c in chosen for f in c["files"] if (ctx.root / f).is_file()})
    return {"commits": chosen, "paths": touched[:100], "commit_count": len(hits)}


EXECUTORS: dict[str, BuiltinFn] = {"tp_search_history": search_history}
