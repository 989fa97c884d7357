"""The storage protocol: what an index backend provides, and what is derived above it.

The rest of the library reads the index through :class:`Storage` and the indexer
writes it through :class:`IndexStore`; neither names a backend. A backend (the
embedded SQLite one, ``store.SqliteStore``) implements five small protocols of
records and primitives, and builds the front from two engines that hold no SQL::

    callers (ranking, sources, query, service)  ->  Storage = RecordReader + the rows below
        search()/common_terms()    search.Bm25Search over        TextIndex       (backend)
        edges()/combined_graph()   graphcache.GraphCache over    GraphCacheRows  (backend)
        history                                                  HistoryRecords  (backend)
    the indexer                                  ->  IndexStore = Storage + RecordWriter

What every backend promises (the conformance suite, ``tests/index/test_storage_conformance.py``,
checks it on each backend of ``tests/index/storage_backends.py``):

* **One repository.** A store is opened for one repository and every read and
  write is scoped to it; no method takes a repository argument. A backend that
  keeps many repositories in one database binds the repository when it opens.
* **Generations.** :meth:`RecordReader.generation` is a counter that every
  committed write of content advances (files, symbols, references, imports,
  chunks, co-change and past commits); writes that change no content (mtimes,
  skipped files, meta, layouts, derived graphs) leave it alone. Everything derived
  from the index (term memos, graphs, per-generation memos of the callers) is keyed
  by it.
* **Snapshots.** Inside :meth:`RecordReader.snapshot` every read sees one committed
  generation, whatever other connections commit meanwhile; outside it each call
  reads the latest committed state. A writer's batch is visible whole or not at
  all.
* **Content addressing.** ``FileRecord.content_hash`` is the file's git blob id
  (``workspace.files.blob_id``): rows that depend only on a file's content (its
  symbols, references, chunks and their search rows, its span layout) may be
  shared by every commit and branch holding the same blob.
* **Total orders.** Every list a method returns is in the order its docstring
  states, ending in a unique key; two backends holding the same rows answer
  byte-identically, so packs do not depend on the backend.
* **Integers where order is decided.** Scores come back as floats from the
  primitives (:class:`TextIndex`), and the engine above rounds them the same way
  for every backend.

Chunk ids are integers unique in the index; a file's chunks get new ids when it is
written again, so a caller keeps an id for one generation only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias, runtime_checkable

from .records import (
    Chunk,
    ChunkHit,
    EdgeKind,
    FileData,
    FileRecord,
    ImportRecord,
    Reference,
    Symbol,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .graph import PackedGraph
    from .graphdelta import Derived

    #: a term's matches: chunk ids ascending, and the term's BM25 addend in each
    TermScores: TypeAlias = tuple[NDArray[np.int64], NDArray[np.float64]]

__all__ = [
    "ChunkHead",
    "DerivedClaim",
    "Edges",
    "GraphCacheRows",
    "GraphRecords",
    "HistoryRecords",
    "IndexStore",
    "RecordReader",
    "RecordWriter",
    "ScoredChunk",
    "Storage",
    "TextIndex",
]

#: weighted file edges ``(src, dst, weight)``
Edges: TypeAlias = list[tuple[str, str, int]]
#: what a search hit shows of its chunk: ``(path, start_line, end_line, symbol, kind, tokens)``
ChunkHead: TypeAlias = tuple[str, int, int, str | None, str, int]
#: a chunk matched by a whole query: ``(chunk_id, *ChunkHead[:5], score, tokens)``
ScoredChunk: TypeAlias = tuple[int, str, int, int, str | None, str, float, int]


# ------------------------------------------------------------------ records


@runtime_checkable
class RecordReader(Protocol):
    """The index's records as the indexer wrote them; every list sorted as stated."""

    def generation(self) -> int:
        """The content counter (module docstring); 0 for an empty index."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one committed generation (re-entrant: an inner one joins)."""
        ...

    def meta(self, key: str) -> str | None:
        """A value :meth:`RecordWriter.set_meta` stored, None when there is none."""
        ...

    def files(self) -> list[FileRecord]:
        """Every listed or parsed file, by path."""
        ...

    def file(self, path: str) -> FileRecord | None: ...

    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        ...

    def file_states(
        self, paths: Iterable[str] | None = None
    ) -> dict[str, tuple[str, int, int, int]]:
        """``path -> (content_hash, size, mtime_ns, stage)`` (stage 0 listed, 2 parsed)
        of every file, or of those of ``paths`` the index holds."""
        ...

    def progress(self) -> tuple[int, int]:
        """``(listed, parsed)`` file counts."""
        ...

    def pending_paths(self) -> list[str]:
        """Listed but not yet parsed, sorted."""
        ...

    def skipped(self) -> list[tuple[str, str]]:
        """``(path, reason)`` of every file left out at its last listing, by path."""
        ...

    def skipped_states(self) -> dict[str, tuple[str, int, int]]:
        """``path -> (reason, size, mtime_ns)`` of every skipped file."""
        ...

    def parse_errors(self) -> list[tuple[str, str]]:
        """``(path, error)`` of every file indexed as text because its parse failed."""
        ...

    def counts(self) -> dict[str, int]:
        """Row counts: ``files symbols refs`` (uses) ``imports chunks chunks_fts cochange``."""
        ...

    def symbols(self, path: str | None = None, name: str | None = None) -> list[Symbol]:
        """Definitions, filtered by path and/or name; by path, start line, end line
        descending (the outer one first), name, kind."""
        ...

    def symbol_lines(self, path: str) -> dict[str, int]:
        """``name -> first line`` of ``path``'s symbols (the last in :meth:`symbols` order)."""
        ...

    def definition_paths(self, name: str, limit: int) -> list[str]:
        """The paths of the first ``limit`` definitions of ``name`` (one per definition,
        by path then line)."""
        ...

    def name_part_counts(self, parts: Collection[str]) -> dict[str, int]:
        """``path -> how many of its symbols have a name part in parts``
        (``tokenize.name_parts``); files with none left out."""
        ...

    def reference_file_counts(self) -> dict[str, int]:
        """``name -> how many files reference it``."""
        ...

    def references(self, path: str | None = None, name: str | None = None) -> list[Reference]:
        """One per use, by path, line, name, kind."""
        ...

    def imports(self, path: str | None = None) -> list[ImportRecord]:
        """By path, line, spec."""
        ...

    def import_specs(self) -> list[tuple[str, str, int, str | None]]:
        """Every ``(path, spec, line, resolved)``, in :meth:`imports` order."""
        ...

    def imports_into(self, paths: Collection[str]) -> list[tuple[str, str]]:
        """Distinct resolved import edges ``(src, dst)`` into ``paths`` (no
        self-imports), sorted."""
        ...

    def count_resolved_imports(self) -> int: ...

    def chunk(self, chunk_id: int) -> Chunk:
        """The chunk; ``errors.NotFound`` when there is none (ids change on re-index)."""
        ...

    def chunks_for(self, path: str) -> list[Chunk]:
        """A file's chunks by start line, end line, id."""
        ...

    def stored_layout(self, path: str) -> bytes | None:
        """The span layout :meth:`RecordWriter.put_layouts` stored for ``path``
        (``layouts.py``); None when there is none (a backend may keep none)."""
        ...

    def paths_without_layout(self) -> list[str]:
        """Parsed files with no stored layout, by path."""
        ...


class RecordWriter(Protocol):
    """The indexer's writes. The caller holds the index's writer lock; each call is one
    transaction, visible whole or not at all."""

    def list_files(
        self, rows: Sequence[tuple[str, str, str, int, int, int]], *, new: Collection[str] = ()
    ) -> None:
        """New or changed files as listed, not parsed (stage 0): ``(path, language, blob
        id, size, mtime_ns, lines)``; a changed file's old rows go. ``new`` names paths
        the index does not hold (nothing to delete)."""
        ...

    def write_files(self, batch: Sequence[tuple[FileData, Sequence[ImportRecord]]]) -> None:
        """Replace each file's rows (stage 2): symbols, references, imports, chunks and
        their search rows; ``content_hash`` is the blob id."""
        ...

    def delete_files(self, paths: Iterable[str]) -> None: ...

    def touch_files(self, items: Sequence[tuple[str, int]]) -> None:
        """New mtimes ``(path, mtime_ns)`` of unchanged files (no new generation)."""
        ...

    def set_skipped(
        self, rows: Sequence[tuple[str, str, int, int]], gone: Iterable[str] = ()
    ) -> None:
        """Remember skipped files ``(path, reason, size, mtime_ns)``; forget ``gone``."""
        ...

    def set_import_resolutions(self, changes: Sequence[tuple[str, str, int, str | None]]) -> None:
        """Set ``resolved`` of the ``(path, spec, line, resolved)`` rows."""
        ...

    def put_layouts(self, rows: Sequence[tuple[str, bytes]]) -> None:
        """Store ``(path, layout)`` of parsed files (derived: no new generation)."""
        ...

    def set_meta(self, values: Mapping[str, str]) -> None: ...

    def bulk_load(self) -> AbstractContextManager[None]:
        """Many :meth:`write_files` ahead (a first index): a backend may defer its
        secondary indexes until the block ends."""
        ...


# ------------------------------------------------------------------ full text


class TextIndex(Protocol):
    """What ``search.Bm25Search`` needs: the chunks' full-text rows, scored.

    The scoring is FTS5's ``bm25`` with column weights ``path 4, symbols 6, body 1,
    parts 1`` (``search.BM25_WEIGHTS``) over one row per chunk whose columns are the
    file's path, the names of the symbols the chunk covers, its text, and the
    identifier parts (``ChunkData.symbols``/``parts``), tokenized as FTS5's
    ``unicode61 remove_diacritics 2`` with ``_`` a token character. In IEEE doubles,
    evaluated as written (k1 = 1.2, b = 0.75)::

        idf(t)   = log((N - n + 0.5) / (n + 0.5)), or 1e-6 when that is <= 0
        addend   = idf(t) * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / avgdl)))

    for ``N`` rows of which ``n`` hold ``t``, ``f`` the sum of the column weights of
    ``t``'s occurrences in the row, ``D`` the row's tokens over all columns and
    ``avgdl`` the total tokens over ``N``. A query's score is its terms' addends
    summed from 0.0 in query order (a term the row lacks adds 0.0). Scores here are
    that sum (FTS5's ``bm25()`` negated: higher is better); a backend reproduces the
    floats to the last bit, or packs may differ where two scores round differently.
    """

    def generation(self) -> int: ...

    def chunk_count(self) -> int:
        """Rows of the text index (``N``)."""
        ...

    def term_count(self, term: str) -> int:
        """Rows that hold ``term`` (``n``), counted without scoring them."""
        ...

    def term_scores(self, term: str) -> TermScores:
        """Every row holding ``term``: chunk ids ascending, and the term's addend in each."""
        ...

    def best_chunks(self, terms: Sequence[str], fetch: int) -> list[ScoredChunk]:
        """The ``fetch`` best chunks of the query "any of ``terms``" with their heads,
        by score descending, then chunk id."""
        ...

    def chunk_heads(self, ids: Collection[int]) -> dict[int, ChunkHead]:
        """The heads of the chunks ``ids`` (ids the index no longer holds left out)."""
        ...


# ------------------------------------------------------------------ graphs


class GraphRecords(Protocol):
    """The records the file graphs are derived from (``graphdelta``): read by the
    derivation inside one :meth:`GraphCacheRows.snapshot`."""

    def content_hashes(self) -> dict[str, str]:
        """``path -> content hash`` of every file."""
        ...

    def defined_names(self) -> Iterator[tuple[str, str]]:
        """``(path, name)`` of every definition (a name once per definition)."""
        ...

    def reference_sums(self) -> Iterator[tuple[str, str, int]]:
        """``(path, name, uses)``, one per file and referenced name."""
        ...

    def import_edges(self) -> Edges:
        """Resolved imports ``(importer, imported, statements)``, no self-imports, sorted."""
        ...

    def cochange_edges(self) -> Edges:
        """Co-change rows ``(src, dst, shared commits)``, sorted."""
        ...

    def names_defined_in(self, paths: Collection[str]) -> dict[str, set[str]]:
        """``path -> the names it defines`` for each of ``paths`` (an empty set for none)."""
        ...

    def definitions_of(self, names: Collection[str]) -> list[tuple[str, str]]:
        """Distinct ``(name, path)`` definitions of ``names``."""
        ...

    def referrers(self, names: Collection[str]) -> set[str]:
        """The files that reference any of ``names``."""
        ...

    def reference_sums_of(self, paths: Collection[str]) -> list[tuple[str, str, int]]:
        """:meth:`reference_sums` of ``paths`` only."""
        ...

    def edge_count(self, kind: Literal["import", "cochange"]) -> int:
        """``len(import_edges())`` or ``len(cochange_edges())``, counted in place."""
        ...


@dataclass(frozen=True, slots=True)
class DerivedClaim:
    """A backend's answer to "may I store derived graphs now?".

    ``held``: yes, until ``release()`` (an index run's own store: at once, with a
    ``release`` that does nothing); ``indexing``: an index run is writing, so derive
    in memory and store nothing; ``storing``: another reader is storing them, so wait
    for its rows and read them.
    """

    state: Literal["held", "indexing", "storing"]
    release: Callable[[], None]


class GraphCacheRows(GraphRecords, Protocol):
    """What ``graphcache.GraphCache`` needs: rows of derived data keyed by kind, each
    stamped with the generation it was derived from, and the claim that lets one
    reader of many store them."""

    #: the store cannot write; :meth:`derived_by_writer` may still store for it
    readonly: bool

    def generation(self) -> int: ...

    def snapshot(self) -> AbstractContextManager[None]: ...

    def derived_rows(self, kinds: Sequence[str]) -> dict[str, tuple[int, bytes]]:
        """``kind -> (generation, data)`` of the stored rows of ``kinds`` (missing ones
        left out)."""
        ...

    def derived_generations(self, kinds: Sequence[str]) -> dict[str, int]:
        """:meth:`derived_rows` without the data."""
        ...

    def put_derived_rows(self, rows: Sequence[tuple[str, bytes]], generation: int) -> None:
        """Store ``(kind, data)`` rows of ``generation`` in one transaction, unless the
        content moved past it meanwhile. Derived data: a store that cannot be done at
        once (contention, a full disk) is skipped, and the next reader derives again."""
        ...

    def claim_derived(self) -> DerivedClaim:
        """Try, without waiting, to become the one store that stores derived rows."""
        ...

    def derived_by_writer(self) -> Derived | None:
        """For a read-only store: the graphs derived and stored by a writable connection
        of the same index, None when there can be none."""
        ...


# ------------------------------------------------------------------ history


class HistoryRecords(Protocol):
    """The recent commits the derived stage reads from git (``history_edits``), and
    the co-change graph. Writes are made under the writer lock and advance the
    generation; each replaces the whole set and records the key it was read with
    (``meta("past_edits_key")``, ``meta("cochange_key")``)."""

    def set_past_edits(self, commits: Sequence[tuple[int, str, Sequence[str]]], key: str) -> None:
        """Replace the past commits: ``(order, message words, paths edited)`` each, order 0
        the newest."""
        ...

    def similar_commits(self, words: Sequence[str], limit: int) -> list[tuple[int, int]]:
        """The ``limit`` commits whose message words best match ``words`` (BM25 over one
        column, FTS5's defaults): ``(order, round(score x 1000))`` best first, ties by
        order; only positive scores."""
        ...

    def past_edits(self, orders: Collection[int]) -> list[tuple[int, str]]:
        """``(order, path)`` of the files the commits ``orders`` edited, sorted."""
        ...

    def set_cochange(self, edges: Sequence[tuple[str, str, int]], key: str) -> None:
        """Replace the co-change rows ``(src, dst, shared commits)``."""
        ...


# ------------------------------------------------------------------ the front


@runtime_checkable
class Storage(RecordReader, Protocol):
    """What the rest of the library reads: the records, the search engine's answers,
    the file graphs and the history. A backend builds :meth:`search` and
    :meth:`common_terms` with ``search.Bm25Search`` and the graph methods with
    ``graphcache.GraphCache`` over its own rows."""

    @property
    def history(self) -> HistoryRecords: ...

    def search(self, query: str, limit: int = 20) -> list[ChunkHit]:
        """BM25 over chunks (``search.Bm25Search.search``): integer scores, higher is
        better, ties by path, line, chunk id."""
        ...

    def common_terms(self, query: str) -> list[str]:
        """The terms of ``query`` :meth:`search` leaves out as too common, sorted."""
        ...

    def edges(self, kind: EdgeKind) -> Edges:
        """Weighted file edges of one kind, sorted (``ref`` derived, ``import`` and
        ``cochange`` read)."""
        ...

    def combined_graph(self) -> PackedGraph:
        """The three graphs combined and packed, current to this generation."""
        ...

    def edge_counts(self) -> dict[str, int | None]:
        """Edges of each kind; ``ref`` None while the stored graphs are stale."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class IndexStore(Storage, RecordWriter, Protocol):
    """What the indexer writes through: the reads, the writes, and the derived graphs
    brought up to date (its store holds the writer lock)."""

    def refresh_graphs(self, *, defer: bool = False) -> bool:
        """Bring the stored graphs up to this generation (``graphcache.GraphCache.refresh``)."""
        ...

    def derived_graphs(self) -> Derived: ...
