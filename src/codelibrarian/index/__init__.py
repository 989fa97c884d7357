"""The workspace index: symbols, references, imports, chunks, graphs in SQLite.

Public surface: the records, the storage protocol (``Storage`` read by every
caller, ``IndexStore`` written by the indexer; ``storage.py``) with its SQLite
backend ``SqliteStore``, ``open_store``/``index_path``, ``pagerank``,
``index_workspace``/``update_paths`` and ``render_map``/``rank_files``. See
``docs/index.md``.

Names load on first use: ``import codelibrarian.index.store`` does not pull in
the indexer, the parser or tree-sitter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_getattr

if TYPE_CHECKING:
    from .graph import pagerank
    from .indexer import IndexStats, UpdateResult, index_workspace, update_paths
    from .records import Chunk, ChunkHit, FileRecord, ImportRecord, Reference, Symbol
    from .repomap import rank_files, render_map
    from .storage import IndexStore, Storage
    from .store import SqliteStore, index_path, open_store

__all__ = [
    "Chunk",
    "ChunkHit",
    "FileRecord",
    "ImportRecord",
    "IndexStats",
    "IndexStore",
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

#: name -> submodule; imported on first use, so importing one submodule stays cheap
_EXPORTS: dict[str, str] = {
    "Chunk": "records",
    "ChunkHit": "records",
    "FileRecord": "records",
    "ImportRecord": "records",
    "IndexStats": "indexer",
    "IndexStore": "storage",
    "Reference": "records",
    "SqliteStore": "store",
    "Storage": "storage",
    "Symbol": "records",
    "UpdateResult": "indexer",
    "index_path": "store",
    "index_workspace": "indexer",
    "open_store": "store",
    "pagerank": "graph",
    "rank_files": "repomap",
    "render_map": "repomap",
    "update_paths": "indexer",
}


__getattr__ = lazy_getattr(__name__, _EXPORTS)
