"""Value types of the index: what a parse produces and what the store returns.

All are frozen, slotted dataclasses. Lines are 1-based and inclusive. Paths are
repository-relative POSIX strings. Scores and weights are integers so that no
float ever decides an order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "EDGE_KINDS",
    "Chunk",
    "ChunkData",
    "ChunkHit",
    "EdgeKind",
    "FileData",
    "FileRecord",
    "ImportRecord",
    "Reference",
    "Symbol",
]

EdgeKind = Literal["ref", "import", "cochange"]
EDGE_KINDS: tuple[EdgeKind, ...] = ("ref", "import", "cochange")


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One indexed file. ``parse_error`` is set when it was indexed as plain text."""

    path: str
    language: str
    content_hash: str
    size: int
    tokens: int
    parse_error: str | None = None


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition: ``kind`` is function, method, class, interface, struct, enum,
    trait, module, constant, type or macro; ``parent`` the enclosing definition's name."""

    name: str
    kind: str
    parent: str | None
    path: str
    start_line: int
    end_line: int
    signature: str
    doc: str | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of an identifier (a call, a type use, ...) at ``line`` of ``path``."""

    name: str
    kind: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """An import as written (``spec``) and the repository file it resolves to, if any.

    ``resolved`` is None for external dependencies (stdlib, packages, system headers).
    """

    path: str
    spec: str
    line: int
    resolved: str | None


@dataclass(frozen=True, slots=True)
class Chunk:
    """A symbol-aligned slice of a file; ``kind`` is the symbol kind or ``module``."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    text: str
    tokens: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """A search result. ``score`` is an integer (BM25 x 1000), higher is better."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    score: int
    tokens: int


@dataclass(frozen=True, slots=True)
class ChunkData:
    """A chunk before storage (no id yet)."""

    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    text: str
    tokens: int
    content_hash: str
    #: names of the symbols the chunk covers, space-separated (FTS ``symbols`` column)
    symbols: str
    #: camelCase/snake_case parts of the chunk's identifiers (FTS ``parts`` column)
    parts: str


@dataclass(frozen=True, slots=True)
class FileData:
    """Everything the indexer writes for one file, produced by a parse worker."""

    path: str
    language: str
    content_hash: str
    size: int
    mtime_ns: int
    tokens: int
    lines: int
    parse_error: str | None
    symbols: tuple[Symbol, ...] = ()
    references: tuple[Reference, ...] = ()
    #: raw import specs with their line: resolution needs the whole file list
    import_specs: tuple[tuple[str, int], ...] = ()
    chunks: tuple[ChunkData, ...] = field(default=())
