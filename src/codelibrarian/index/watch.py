"""``librarian index --watch``: re-index saved files and record save events.

Changes reported by ``watchfiles`` are debounced (it batches events within the
debounce window), filtered (``.git/``, ``.librarian/``, ignored files) and passed
to ``update_paths``. Every re-indexed or removed file is appended to
``State.events_path`` as one JSON line — ``{"ts": <epoch s>, "event": "save" |
"delete", "file": <id>}`` — where the id is an HMAC of the path with the
workspace secret, so the event log never holds a path. Workspace vitals read it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..config import Config
from ..workspace.private import private_append
from ..workspace.state import State
from .indexer import UpdateResult, update_paths
from .storage import IndexStore
from .store import SqliteStore

__all__ = ["append_events", "file_id", "relevant_paths", "watch_workspace"]

_SKIP_DIRS = (".git", ".librarian")


def file_id(secret: bytes, rel: str) -> str:
    """Stable, path-free id of a repository file: HMAC-SHA256 of its path, 32 hex chars."""
    return hmac.new(secret, b"file:" + rel.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def append_events(events_path: Path, secret: bytes, result: UpdateResult, *, now: int) -> int:
    """Append one event per changed/removed file; returns how many were written."""
    rows = [{"ts": now, "event": "save", "file": file_id(secret, p)} for p in result.changed]
    rows += [{"ts": now, "event": "delete", "file": file_id(secret, p)} for p in result.removed]
    if not rows:
        return 0
    private_append(events_path, "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))
    return len(rows)


def relevant_paths(root: Path, changed: Iterable[str]) -> list[str]:
    """Repo-relative POSIX paths of ``changed`` absolute paths, minus state and VCS folders."""
    out: set[str] = set()
    base = str(root)
    for raw in changed:
        try:
            rel = os.path.relpath(raw, base)
        except ValueError:
            continue
        if rel.startswith("..") or rel == ".":
            continue
        rel = Path(rel).as_posix()
        if rel.split("/", 1)[0] in _SKIP_DIRS:
            continue
        out.add(rel)
    return sorted(out)


def watch_workspace(
    root: Path,
    config: Config | None = None,
    *,
    debounce_ms: int = 300,
    stop_event: threading.Event | None = None,
    on_update: Callable[[UpdateResult], None] | None = None,
    clock: Callable[[], float] = time.time,
) -> None:
    """Block, re-indexing files as they are saved, until ``stop_event`` is set (or Ctrl-C)."""
    root = Path(root).resolve()
    state = State(root).ensure()
    secret = state.secret()
    from watchfiles import watch  # deferred: only --watch needs it

    with SqliteStore(state.index_path) as store:
        _watch(
            root,
            config,
            store,
            watch,
            events_path=state.events_path,
            secret=secret,
            debounce_ms=debounce_ms,
            stop_event=stop_event,
            on_update=on_update,
            clock=clock,
        )


def _watch(
    root: Path,
    config: Config | None,
    store: IndexStore,
    watch: Callable[..., Iterable[set[tuple[Any, str]]]],
    *,
    events_path: Path,
    secret: bytes,
    debounce_ms: int,
    stop_event: threading.Event | None,
    on_update: Callable[[UpdateResult], None] | None,
    clock: Callable[[], float],
) -> None:
    for changes in watch(
        root,
        debounce=debounce_ms,
        step=50,
        stop_event=stop_event,
        raise_interrupt=False,
        watch_filter=lambda _change, path: (
            not any(f"/{d}/" in path or path.endswith(f"/{d}") for d in _SKIP_DIRS)
        ),
    ):
        rels = relevant_paths(root, (p for _, p in changes))
        if not rels:
            continue
        result = update_paths(root, rels, config, store=store)
        append_events(events_path, secret, result, now=int(clock()))
        if on_update is not None:
            on_update(result)
