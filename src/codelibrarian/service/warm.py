"""Warming: build, ahead of a call, the per-file tables a first-time task needs.

A warm process (a resident server) answers a task it has seen before from its
per-generation memo; a task it has not seen pays, for every file it ranks for the
first time, that file's span layout (its chunks, own line ranges and words, read
from the index) and a secret scan of the whole file (to check excerpts against).
:func:`warm_steps` does that work for every indexed file, the most imported
first, one file per step, so a caller (the resident server) can run it in idle
time and stop between any two steps.

Warming only fills caches with exactly what a call would compute itself (the
layout ``rank_spans`` reads or builds, the spans the secret gate finds), so it
never changes an answer. A layout the index stored (``index/layouts.py``: written
by ``librarian index`` and the background run) is read, not built: a fifth of the
time, and its word table stays in its compact stored form (about two thirds of a
built table's memory). Layouts go in the index generation's memo (dropped when the
index moves on); scans go in the gate's span store, which persists them in
``.librarian/cache`` for later processes too. Memory is bounded by
``max_entries``: layouts are warmed, most imported file first, until they hold
that many entries (a file's distinct words plus its chunks: the CPython standard
library's 1,790 files hold 610,000, about 170 MB in all when built, 120 MB when
read); the files left out are laid out (or read) on demand, as before. Progress is
kept in the memo, so a new run resumes where the last stopped and a finished
generation costs nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..query.locate import warm_layout
from ..sources.base import read_text

if TYPE_CHECKING:
    from ..index.storage import Storage
    from .workspace import WorkspaceSession

__all__ = ["MAX_ENTRIES", "warm_steps"]

#: entries (per file: distinct words plus chunks) that warmed layouts may hold,
#: about 200 MB: all of a 2,000-file repository, the most imported part of a larger one
MAX_ENTRIES = 700_000
#: save the span store after this many newly scanned files (and at the end)
_SAVE_EVERY = 500


def _order(store: Storage, files: tuple[str, ...]) -> list[str]:
    """Indexed files, the most imported first (then by path): the files most tasks
    reach are warm soonest."""
    into: Counter[str] = Counter()
    for _src, dst, _weight in store.edges("import"):
        into[dst] += 1
    return sorted(files, key=lambda p: (-into[p], p))


def warm_steps(
    ws: WorkspaceSession, *, max_entries: int = MAX_ENTRIES
) -> Iterator[tuple[int, int]]:
    """Warm the current index generation one file per step; yields ``(done, total)``.

    Ends at once when there is no index, when everything is warm, or when the index
    generation changes under it (the next run starts on the new one).
    """
    if not ws.state.exists():
        return
    store = ws.open_store()
    memo = ws.generation_memo(store)
    if memo.get("warm.done"):
        return
    order = memo.get("warm.order")
    if order is None:
        order = _order(store, ws.indexed_files(store))
        memo["warm.order"] = order
    total = len(order)
    start = int(memo.get("warm.next", 0))
    scanned = 0
    try:
        for i in range(start, total):
            store = ws.open_store()  # a call in between may have reopened it
            if ws.generation_memo(store) is not memo:
                return
            path = order[i]
            if not ws.is_sensitive(path):
                if memo.get("warm.entries", 0) < max_entries:
                    kept = warm_layout(store, path, memo)
                    memo["warm.entries"] = memo.get("warm.entries", 0) + kept
                text = read_text(ws.root, path)
                if text:
                    ws.gate.warm_source(text)
                    scanned += 1
                    if scanned % _SAVE_EVERY == 0:
                        ws.save_scans()
            memo["warm.next"] = i + 1
            yield i + 1, total
        memo["warm.done"] = True
    finally:
        if scanned:
            ws.save_scans()
