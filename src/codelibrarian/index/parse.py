"""Parse one file into everything the index stores about it.

This is the work done in the process pool: read the bytes, hash them, parse
with tree-sitter, run our tags query, build chunks and count tokens. It takes
and returns plain values, and never touches the database.

A worker hands each result over as a *payload*: the path-free part of a
``FileData`` (everything but path and mtime) as compressed ``marshal`` data.
The same bytes go into the per-user parse cache (``blobcache.py``) under the
file's blob id, so a file with the same content anywhere else is never parsed
again; ``decode_result`` turns a payload back into a ``FileData`` for a path.
``parser_version`` is part of every cache key: it changes with the package
version, the payload format and the tags queries.

A file whose parse raises, or whose tree is mostly ``ERROR`` nodes, is still
indexed as text (chunks, full-text search) with ``parse_error`` recorded. A
tree with a few errors keeps the symbols tree-sitter recovered.
"""

from __future__ import annotations

import hashlib
import marshal
import zlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from .. import __version__
from ..tokens import BpeTokenizer, Tokenizer, get_tokenizer
from ..workspace.files import blob_id
from .chunks import build_chunks
from .imports import specs_from_captures
from .languages import language_for, load_queries
from .records import FileData, ReferenceGroup, Symbol, estimate_tokens
from .schema import symbol_part_ords
from .symbols import extract
from .tokenize import name_parts_remembered, parts_text

__all__ = [
    "ERROR_SHARE_LIMIT",
    "cache_key",
    "decode_result",
    "encode_result",
    "parse_batch",
    "parse_source",
    "parser_version",
]

#: a tree whose ERROR nodes cover more than this share (per-mille) of the bytes is text
ERROR_SHARE_LIMIT = 500
TOKENIZER_MODEL = "gpt-4o"
#: bump when what a parse produces changes without the queries or version changing
#: (2: the symbols' name parts are part of the payload)
PAYLOAD_FORMAT = 2


@cache
def parser_version() -> str:
    """Package version, payload format and a digest of the tags queries."""
    digest = hashlib.blake2b(digest_size=6)
    folder = resources.files(__package__).joinpath("queries")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".scm"):
            digest.update(entry.name.encode())
            digest.update(entry.read_bytes())
    return f"{__version__}.{PAYLOAD_FORMAT}.{digest.hexdigest()}"


def cache_key(blob: str, path: str, max_tokens: int) -> str:
    """The parse cache key of content ``blob`` found at ``path`` (its language matters)."""
    label, _ = language_for(path)
    return f"{blob}:{label}:{parser_version()}:{max_tokens}"


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
                    tree.root_node,
                    queries.defs,
                    path,
                    lang.name,
                    refs_query=queries.refs,
                    source=data,
                )
                symbols, refs = found.symbols, found.references
                specs = specs_from_captures(lang.name, found.imports)
        except Exception as exc:  # a grammar crash must not stop the whole index
            parse_error = f"{type(exc).__name__}: {exc}"[:300]
    plain = "module" if lang is not None and parse_error is None else "text"
    chunks = build_chunks(path, text, symbols, tokenizer, max_tokens, plain_kind=plain)
    # after chunking: the identifier memos now hold most of the names' pieces
    name_ords = symbol_part_ords([s.name for s in symbols], name_parts_remembered)
    return FileData(
        path=path,
        language=label,
        content_hash=blob_id(data),
        size=len(data),
        mtime_ns=mtime_ns,
        tokens=estimate_tokens(len(data)),
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
        symbol_parts=tuple(name_ords),
    )


def encode_result(data: FileData) -> bytes:
    """The path-free part of ``data`` as a compact payload (see the module docstring)."""
    row = (
        data.language,
        data.content_hash,
        data.size,
        data.tokens,
        data.lines,
        data.parse_error,
        data.symbols,
        data.references,
        data.import_specs,
        data.chunks,
        _pack_parts(data.symbol_parts),
    )
    return zlib.compress(marshal.dumps(row), 1)


def decode_result(path: str, mtime_ns: int, payload: bytes) -> FileData:
    """A ``FileData`` for ``path`` from a payload; raises ``ValueError`` on a bad one."""
    try:
        row = marshal.loads(zlib.decompress(payload))
        language, digest, size, tokens, lines, error, syms, refs, specs, chunks, names = row
    except (zlib.error, EOFError, TypeError, ValueError) as exc:
        raise ValueError(f"unreadable parse payload: {exc}") from None
    extra = _path_parts(path)
    if extra:
        chunks = tuple([(*c[:8], " ".join(sorted(extra.union(c[8].split())))) for c in chunks])
    return FileData(
        path=path,
        language=language,
        content_hash=digest,
        size=size,
        mtime_ns=mtime_ns,
        tokens=tokens,
        lines=lines,
        parse_error=error,
        symbols=syms,
        references=refs,
        import_specs=specs,
        chunks=chunks,
        symbol_parts=_unpack_parts(names),
    )


def _pack_parts(rows: tuple[tuple[str, str], ...] | None) -> str | None:
    """``(part, ords)`` rows as one ``part<TAB>ords`` line each, or None when a part holds
    a tab or newline (a name's odd piece: the writer then splits the names itself).

    One new string, not the rows: their parts are the identifier memos' own strings, and
    ``marshal`` marks a string held elsewhere, so a payload would depend on the memos."""
    if rows is None:
        return None
    text = "\n".join([f"{part}\t{ords}" for part, ords in rows])
    if text.count("\t") != len(rows) or text.count("\n") != max(0, len(rows) - 1):
        return None
    return text


def _unpack_parts(text: str | None) -> tuple[tuple[str, str], ...] | None:
    if text is None:
        return None
    if not text:
        return ()
    rows = []
    for line in text.split("\n"):
        part, _, ords = line.partition("\t")
        rows.append((part, ords))
    return tuple(rows)


def _path_parts(path: str) -> set[str]:
    """The identifier parts of a path, which every chunk's FTS ``parts`` column carries."""
    return set(parts_text(path).split())


@cache
def _index_tokenizer() -> Tokenizer:
    """The index's tokenizer without a count cache (each chunk is counted once)."""
    tokenizer = get_tokenizer(TOKENIZER_MODEL)
    return tokenizer.uncached() if isinstance(tokenizer, BpeTokenizer) else tokenizer


#: a worker's answer for one file: ``(path, mtime_ns, payload)``, or ``(path, reason)``
#: when the file vanished or became unreadable since it was listed
ParseOutcome = tuple[str, int, bytes] | tuple[str, str]


def parse_batch(root: str, items: Sequence[tuple[str, int]], max_tokens: int) -> list[ParseOutcome]:
    """Worker entry: parse ``(path, mtime_ns)`` items under ``root`` into payloads."""
    tokenizer = _index_tokenizer()
    base = Path(root)
    out: list[ParseOutcome] = []
    for rel, mtime_ns in items:
        try:
            data = (base / rel).read_bytes()
        except OSError:
            out.append((rel, "unreadable"))
            continue
        parsed = parse_source(rel, data, tokenizer=tokenizer, max_tokens=max_tokens)
        out.append((rel, mtime_ns, encode_result(parsed)))
    return out
