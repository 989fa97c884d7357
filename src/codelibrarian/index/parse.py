"""Parse one file into everything the index stores about it.

This is the work done in the process pool: read the bytes, hash them, parse
with tree-sitter, run our tags query, build chunks and count tokens. It takes
and returns plain values (picklable), and never touches the database.

A file whose parse raises, or whose tree is mostly ``ERROR`` nodes, is still
indexed as text (chunks, full-text search) with ``parse_error`` recorded. A
tree with a few errors keeps the symbols tree-sitter recovered.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..tokens import Tokenizer, get_tokenizer
from ..workspace.files import content_hash
from .chunks import build_chunks
from .imports import specs_from_captures
from .languages import language_for, load_queries
from .records import FileData, ReferenceGroup, Symbol
from .symbols import extract

__all__ = ["ERROR_SHARE_LIMIT", "parse_batch", "parse_source"]

#: a tree whose ERROR nodes cover more than this share (per-mille) of the bytes is text
ERROR_SHARE_LIMIT = 500
TOKENIZER_MODEL = "gpt-4o"


def _error_share(root: Any, size: int) -> int:
    """Per-mille of the file's bytes inside ERROR (or missing) nodes."""
    if size == 0:
        return 0
    if root.type == "ERROR":
        return 1000
    covered = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error:
            covered += node.end_byte - node.start_byte
            continue
        if node.has_error:
            stack.extend(node.children)
    return covered * 1000 // size


def parse_source(
    path: str,
    data: bytes,
    *,
    tokenizer: Tokenizer,
    max_tokens: int,
    mtime_ns: int = 0,
) -> FileData:
    """Index one file's content (``data``) found at repository path ``path``."""
    text = data.decode("utf-8", "replace")
    label, lang = language_for(path)
    parse_error: str | None = None
    symbols: tuple[Symbol, ...] = ()
    refs: tuple[ReferenceGroup, ...] = ()
    specs: tuple[tuple[str, int], ...] = ()
    if lang is not None:
        try:
            queries = load_queries(lang.name)
            tree = queries.parser.parse(data)
            share = _error_share(tree.root_node, len(data)) if tree.root_node.has_error else 0
            if share > ERROR_SHARE_LIMIT:
                parse_error = f"syntax errors cover {share // 10}% of the file"
            else:
                found = extract(
                    tree.root_node, queries.defs, path, lang.name, refs_query=queries.refs
                )
                symbols, refs = found.symbols, found.references
                specs = specs_from_captures(lang.name, found.imports)
        except Exception as exc:  # a grammar crash must not stop the whole index
            parse_error = f"{type(exc).__name__}: {exc}"[:300]
    plain = "module" if lang is not None and parse_error is None else "text"
    chunks = build_chunks(path, text, symbols, tokenizer, max_tokens, plain_kind=plain)
    return FileData(
        path=path,
        language=label,
        content_hash=content_hash(data),
        size=len(data),
        mtime_ns=mtime_ns,
        tokens=tokenizer.count(text),
        lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
        parse_error=parse_error,
        symbols=tuple(
            [
                (s.name, s.kind, s.parent, s.start_line, s.end_line, s.signature, s.doc)
                for s in symbols
            ]
        ),
        references=refs,
        import_specs=specs,
        chunks=tuple(
            [
                (
                    c.start_line,
                    c.end_line,
                    c.symbol,
                    c.kind,
                    c.text,
                    c.tokens,
                    c.content_hash,
                    c.symbols,
                    c.parts,
                )
                for c in chunks
            ]
        ),
    )


def parse_batch(
    root: str, items: Sequence[tuple[str, int]], max_tokens: int
) -> list[FileData | tuple[str, str]]:
    """Worker entry: parse ``(path, mtime_ns)`` items under ``root``.

    Returns a ``FileData`` per readable file, or ``(path, reason)`` for a file
    that vanished or became unreadable since it was listed.
    """
    tokenizer = get_tokenizer(TOKENIZER_MODEL)
    base = Path(root)
    out: list[FileData | tuple[str, str]] = []
    for rel, mtime_ns in items:
        try:
            data = (base / rel).read_bytes()
        except OSError:
            out.append((rel, "unreadable"))
            continue
        out.append(
            parse_source(rel, data, tokenizer=tokenizer, max_tokens=max_tokens, mtime_ns=mtime_ns)
        )
    return out
