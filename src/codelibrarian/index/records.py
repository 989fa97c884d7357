"""Value types of the index: what a parse produces and what the store returns.

All are frozen, slotted dataclasses. Lines are 1-based and inclusive. Paths are
repository-relative POSIX strings. Scores and weights are integers so that no
float ever decides an order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "EDGE_KINDS",
    "Chunk",
    "ChunkData",
    "ChunkHit",
    "ChunkRow",
    "EdgeKind",
    "FileData",
    "FileRecord",
    "ImportRecord",
    "Reference",
    "ReferenceGroup",
    "Symbol",
    "SymbolRow",
    "estimate_tokens",
    "expand_lines",
    "join_lines",
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


#: ``(name, kind, parent, start_line, end_line, signature, doc)``, as ``Symbol`` minus path
SymbolRow = tuple[str, str, str | None, int, int, str, str | None]
#: ``(name, kind, count, lines)``: one file's ``count`` uses of a name on ``lines``
#: (distinct, ascending, space-separated); a row per name instead of per use is a
#: fifth of the rows to write
ReferenceGroup = tuple[str, str, int, str]
#: ``ChunkData``'s fields in order
ChunkRow = tuple[int, int, str | None, str, str, int, str, str, str]


@dataclass(frozen=True, slots=True)
class FileData:
    """Everything the indexer writes for one file, produced by a parse worker.

    The bulky parts are plain tuples (rows in the tables' column order), not
    record objects: a file's data crosses from the pool worker to the writer by
    pickle, and a frozen dataclass costs ~10x a tuple to unpickle (on the stdlib,
    several seconds of the writer's time for ~600k references), and references
    come grouped by name (:data:`ReferenceGroup`).
    """

    path: str
    language: str
    content_hash: str
    size: int
    mtime_ns: int
    tokens: int
    lines: int
    parse_error: str | None
    symbols: tuple[SymbolRow, ...] = ()
    references: tuple[ReferenceGroup, ...] = ()
    #: raw import specs with their line: resolution needs the whole file list
    import_specs: tuple[tuple[str, int], ...] = ()
    chunks: tuple[ChunkRow, ...] = field(default=())
    #: the ``symbol_parts`` rows of ``symbols`` without the file id, ``(part, ords)``
    #: (``schema.symbol_part_ords``); None: the writer derives them
    symbol_parts: tuple[tuple[str, str], ...] | None = None


def estimate_tokens(size: int) -> int:
    """A file's token estimate from its size in bytes (about 4 a token for code).

    The index stores this, not an exact count: counting every file exactly cost
    as much as a third of parsing, and whoever needs the exact number of a file
    (a source deciding whether it fits whole) counts the text it is about to use.
    """
    return (size + 3) // 4


def join_lines(lines: Iterable[int]) -> str:
    """The ``lines`` field of a :data:`ReferenceGroup`: distinct, ascending, space-separated."""
    return " ".join(map(str, sorted(set(lines))))


def expand_lines(lines: str) -> list[int]:
    """The line numbers of a :data:`ReferenceGroup`."""
    return [int(x) for x in lines.split()]
