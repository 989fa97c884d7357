"""The workspace index: symbols, references, imports, chunks, graphs in SQLite.

Public surface: the records, the ``Storage`` protocol with ``SqliteStore``,
``open_store``/``index_path``, ``pagerank``, ``index_workspace``/``update_paths``
and ``render_map``/``rank_files``. See ``docs/index.md``.
"""

from __future__ import annotations

from .graph import pagerank
from .indexer import IndexStats, UpdateResult, index_workspace, update_paths
from .records import Chunk, ChunkHit, FileRecord, ImportRecord, Reference, Symbol
from .repomap import rank_files, render_map
from .store import SqliteStore, Storage, index_path, open_store

__all__ = [
    "Chunk",
    "ChunkHit",
    "FileRecord",
    "ImportRecord",
    "IndexStats",
    "Reference",
    "SqliteStore",
    "Storage",
    "Symbol",
    "UpdateResult",
    "index_path",
    "index_workspace",
    "open_store",
    "pagerank",
    "rank_files",
    "render_map",
    "update_paths",
]
