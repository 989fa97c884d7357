"""The workspace index: symbols, references, imports, chunks, graphs in SQLite.

Public surface: the records, the ``Storage`` protocol with ``SqliteStore``,
``open_store``/``index_path``, ``pagerank`` and (in ``indexer``/``repomap``)
``index_workspace`` and ``render_map``.
"""

from __future__ import annotations

from .graph import pagerank
from .records import Chunk, ChunkHit, FileRecord, ImportRecord, Reference, Symbol
from .store import SqliteStore, Storage, index_path, open_store

__all__ = [
    "Chunk",
    "ChunkHit",
    "FileRecord",
    "ImportRecord",
    "Reference",
    "SqliteStore",
    "Storage",
    "Symbol",
    "index_path",
    "open_store",
    "pagerank",
]
