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

import bisect
import marshal
import re
import sys
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .tokenize import name_parts_uncached

if TYPE_CHECKING:
    from .records import Chunk
    from .storage import IndexStore, RecordReader

__all__ = [
    "CONTAINERS",
    "FORMAT",
    "WORD",
    "chunk_words",
    "decode",
    "encode",
    "layout_record",
    "own_ranges",
    "raw_layout",
    "write_layouts",
]

#: the layout encoding's version; bump it when ``query/locate.py``'s raw layout changes
FORMAT = 1
#: files whose layouts are committed together (one transaction each)
BATCH_FILES = 64
#: a chunk word: a run of ASCII letters, digits and ``_`` not starting with a digit
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: symbol kinds whose chunk holds others (its own lines are what they leave out)
CONTAINERS = frozenset({"class", "interface", "struct", "trait", "enum", "object", "module"})

#: one part of a raw layout: ``(position, chunk id, start, end, symbol, kind, tokens, own,
#: frame, name parts, head, container)``, plain values only (``layouts.py`` stores it
#: with ``marshal``); the name parts are stored sorted, not split again by each reader
RawPart = tuple[
    int,
    int,
    int,
    int,
    "str | None",
    str,
    int,
    tuple[tuple[int, int], ...],
    tuple[int, ...],
    "tuple[str, ...] | None",
    bool,
    bool,
]


#: a layout as plain values: its parts and its word table
RawLayout = tuple[tuple[RawPart, ...], dict[str, int]]


def own_ranges(
    chunk: Chunk, ordered: Sequence[Chunk], starts: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    """The lines of ``chunk`` not covered by a chunk nested inside it, as ranges.

    ``ordered`` are the file's chunks by first line and ``starts`` their first
    lines, so only the chunks starting inside ``chunk`` are looked at.
    """
    lo = bisect.bisect_left(starts, chunk.start_line)
    hi = bisect.bisect_right(starts, chunk.end_line)
    inner = sorted(
        (c.start_line, c.end_line)
        for c in ordered[lo:hi]
        if c.end_line <= chunk.end_line
        and (c.start_line, c.end_line) != (chunk.start_line, chunk.end_line)
    )
    out: list[tuple[int, int]] = []
    at = chunk.start_line
    for a, b in inner:
        if a > at:
            out.append((at, a - 1))
        at = max(at, b + 1)
    if at <= chunk.end_line:
        out.append((at, chunk.end_line))
    return tuple(out)


def chunk_words(text: str, keep: Callable[[str], str] = sys.intern) -> frozenset[str]:
    """The lower-cased words of a chunk, each passed through ``keep``."""
    # interned: a warm process keeps the layouts of thousands of files, whose words repeat
    if text.isascii():  # lower-casing ASCII first finds the same words, lower-cased
        return frozenset(map(keep, WORD.findall(text.lower())))
    return frozenset(keep(w.lower()) for w in WORD.findall(text))


def raw_layout(
    rows: Sequence[Chunk],
    starts_of: Mapping[str, int],
    *,
    split: Callable[[str], frozenset[str]] = name_parts_uncached,
    keep: Callable[[str], str] = str,
) -> RawLayout:
    """A file's span layout as plain values (``query/locate.py``'s ``_Layout``): its parts
    and its word table (each lower-cased word -> a bit mask of the parts whose chunk has
    it), from its chunk rows and ``name -> first line`` of its symbols.

    ``split`` gives a symbol name's parts and ``keep`` each word: the defaults are for
    the index, which sees every file once (no query-time cache filled, nothing interned:
    stored joined in one string, the words are never kept one by one); a reader building
    a layout it keeps passes the cached split and ``sys.intern``.
    """
    out: list[RawPart] = []
    words: dict[str, int] = {}
    ordered = sorted(rows, key=lambda c: (c.start_line, c.end_line, c.chunk_id))
    starts = [c.start_line for c in ordered]
    for index, c in enumerate(ordered):
        container = c.kind in CONTAINERS
        own = own_ranges(c, ordered, starts) if container else ((c.start_line, c.end_line),)
        if not own:
            continue
        frame: tuple[int, ...] = ()
        owner = c.symbol.rsplit(".", 1)[0] if c.symbol and "." in c.symbol else None
        if owner is not None:
            parent = starts_of.get(owner.rsplit(".", 1)[-1])
            if parent is not None and parent < c.start_line:
                frame = (parent,)
        bit = 1 << len(out)
        for word in chunk_words(c.text, keep):
            words[word] = words.get(word, 0) | bit
        head = index == 0 or c.kind == "module"
        raw = (index, c.chunk_id, c.start_line, c.end_line, c.symbol, c.kind, c.tokens)
        names = tuple(sorted(split(c.symbol))) if c.symbol else None
        out.append((*raw, own, frame, names, head, container))
    return tuple(out), words


def layout_record(store: RecordReader, path: str) -> bytes:
    """``path``'s span layout built from its rows, encoded as the index stores it: the
    parts, then the words joined by newlines (a word never holds one) and their masks
    in the same order, so a reader looks a word up without building a dict."""
    rows = store.chunks_for(path)
    parts, words = raw_layout(rows, store.symbol_lines(path) if rows else {})
    joined = "\n" + "\n".join(words) + "\n" if words else ""
    return encode((parts, joined, tuple(words.values())))


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
    store: IndexStore,
    *,
    build: Callable[[IndexStore, str], bytes] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Store the layout of every parsed file that has none; returns how many were written.

    The caller holds the index's writer lock. ``build`` (default: :func:`layout_record`)
    gives a file's stored layout.
    """
    if build is None:
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
