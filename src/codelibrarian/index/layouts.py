"""Span layouts stored with the index: built once per file content, read by any process.

A file's span layout (``query/locate.py``: its chunks in line order, their own line
ranges and frames, and the word -> part bit mask table found by a regex over every
chunk's text) depends only on the file's chunk and symbol rows. Building it reads
every chunk text of the file and scans it: about 1 ms per 50 chunks, paid by every
process the first time it ranks the file. Here it is built once, by an index run
that is not answering a task (``librarian index`` and the background run that
finishes an answer-first index), and stored in ``layouts``, one row per file.

**Never stale.** A row belongs to a ``files`` row (``ON DELETE CASCADE``), and the
index replaces a file's row whenever its content changes (``list_files``), so a
changed or deleted file's layout goes in the same transaction as its old chunks.
Rows are written only for parsed files (``stage`` 2) by a writer that holds the
index's writer lock, so no other writer moves the file between the read of its
chunks and the write of its layout.

**Encoding.** ``marshal`` of plain tuples, ints and strings (no pickled objects),
compressed with zlib at level 1; the first element is :data:`FORMAT`, and a row of
another format (or one that does not decode) is treated as absent: the reader
builds the layout itself, as it did before this table existed.

**A killed run** leaves the batches it committed: every stored row is complete and
valid, the missing ones are built by their readers, and the next run writes them.
"""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import SqliteStore

__all__ = ["FORMAT", "decode", "encode", "write_layouts"]

#: the layout encoding's version; bump it when ``query/locate.py``'s raw layout changes
FORMAT = 1
#: files whose layouts are committed together (one transaction each)
BATCH_FILES = 64


def encode(raw: Any) -> bytes:
    """A raw layout (``locate._raw_layout``) as stored."""
    return zlib.compress(marshal.dumps((FORMAT, raw)), 1)


def decode(blob: bytes) -> Any | None:
    """The raw layout of a stored row; None when it is of another format or unreadable."""
    try:
        got = marshal.loads(zlib.decompress(blob))
    except (ValueError, EOFError, TypeError, zlib.error):
        return None
    if not isinstance(got, tuple) or len(got) != 2 or got[0] != FORMAT:
        return None
    return got[1]


def write_layouts(
    store: SqliteStore,
    *,
    build: Callable[[SqliteStore, str], bytes] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Store the layout of every parsed file that has none; returns how many were written.

    The caller holds the index's writer lock. ``build`` (default: the span ranking's
    own, ``locate.layout_record``) gives a file's stored layout.
    """
    if build is None:
        from ..query.locate import layout_record

        build = layout_record
    paths = store.paths_without_layout()
    done = 0
    for i in range(0, len(paths), BATCH_FILES):
        batch = paths[i : i + BATCH_FILES]
        store.put_layouts([(path, build(store, path)) for path in batch])
        done += len(batch)
        if progress is not None:
            progress(done, len(paths))
    return done
