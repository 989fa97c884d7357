"""The storage backends the conformance suite (``test_storage_conformance.py``) runs on.

A backend is entered here once: how to create a new, empty index of one repository
(a writable store, as the indexer holds it), how to open another connection of the
same index (another process's view) and a read-only one, and where its primitives
are (the text index under the search engine, the graph rows under the graph cache).
Every test of the suite then runs on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codelibrarian.index.storage import GraphCacheRows, IndexStore, Storage, TextIndex
from codelibrarian.index.store import SqliteStore

__all__ = ["BACKENDS", "Backend"]


@dataclass(frozen=True, slots=True)
class Backend:
    name: str
    #: a new, empty index of the repository ``name`` under the folder; the store holds
    #: the writer's rights (as the indexer's does)
    create: Callable[[Path, str], IndexStore]
    #: another connection of the same index: writable, but it must claim to store
    #: derived rows
    reopen: Callable[[Path, str], IndexStore]
    #: a read-only connection of the same index
    reader: Callable[[Path, str], Storage]
    #: the store's full-text primitives and graph rows
    text: Callable[[IndexStore], TextIndex]
    graph_rows: Callable[[IndexStore], GraphCacheRows]


def _sqlite_path(folder: Path, repo: str) -> Path:
    path = folder / repo / ".librarian" / "index.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _sqlite_text(store: IndexStore) -> TextIndex:
    assert isinstance(store, SqliteStore)
    return store._bm25.text


def _sqlite_graph_rows(store: IndexStore) -> GraphCacheRows:
    assert isinstance(store, SqliteStore)
    return store._graphs.rows


SQLITE = Backend(
    name="sqlite",
    create=lambda folder, repo: SqliteStore(_sqlite_path(folder, repo), locked=True),
    reopen=lambda folder, repo: SqliteStore(_sqlite_path(folder, repo)),
    reader=lambda folder, repo: SqliteStore(_sqlite_path(folder, repo), readonly=True),
    text=_sqlite_text,
    graph_rows=_sqlite_graph_rows,
)

#: every backend the suite runs on
BACKENDS: tuple[Backend, ...] = (SQLITE,)
