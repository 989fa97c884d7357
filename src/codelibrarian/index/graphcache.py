"""The derived-graph cache: the file graphs ranking walks, stored once per generation.

Ranking walks the combined graph (``graph.combine`` of the ref, import and co-change
graphs, packed) on every composition; deriving it costs seconds, loading it a few
milliseconds. :class:`GraphCache` keeps three rows per generation through the
backend's :class:`~.storage.GraphCacheRows`: the combined graph, the ref graph alone
and the basis they were derived from (``graphdelta.Basis``). It holds no SQL.

**Who derives, and who stores** (the lock protocol; ``docs/index.md``):

* rows of the current generation are read and used;
* stale rows are brought up to date around the edited files (``graphdelta.update``),
  else rebuilt (``graphdelta.build``), from the records of one snapshot;
* the result is stored by one store only, the one whose claim
  (:meth:`~.storage.GraphCacheRows.claim_derived`) is ``held``: it looks at the rows
  again under the claim (another may have stored them meanwhile), derives, stores
  and releases. A reader that finds another reader ``storing`` waits for its rows
  (polling, at most :data:`GRAPHS_WAIT_S`, then it derives in memory); one that
  finds an index run (``indexing``) derives in memory and stores nothing;
* a read-only store asks the backend to have a writable connection do it
  (:meth:`~.storage.GraphCacheRows.derived_by_writer`), else derives in memory.

A process killed while it stores leaves the old rows or all three new ones.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from . import graph, graphdelta

if TYPE_CHECKING:
    from .storage import Edges, GraphCacheRows

__all__ = ["DERIVED_KINDS", "GRAPHS_WAIT_S", "GraphCache"]

#: graph_cache rows kept together, one generation: the combined graph, the ref graph
#: alone and what they were derived from (``graphdelta.Basis``)
DERIVED_KINDS = ("combined", "ref.packed", "graph.basis")
#: how long a reader waits for another reader storing the same graphs (seconds)
GRAPHS_WAIT_S = 60.0
_GRAPHS_POLL_S = 0.02


class GraphCache:
    """The file graphs of one store's index, read from its cache rows or derived."""

    def __init__(self, rows: GraphCacheRows) -> None:
        self.rows = rows

    def combined(self) -> graph.PackedGraph:
        """The three file graphs combined (``graph.combine``), packed, of this generation.

        What ranking walks on every composition: loading it is a few milliseconds.
        After an edit it is brought up to date by re-deriving only the edited files'
        neighbourhood (``graphdelta``), not rebuilt; the indexer leaves that to the
        first reader, which stores it (:meth:`derived`).
        """
        rows = self.rows
        with rows.snapshot():
            gen = rows.generation()
            got = rows.derived_rows(("combined",)).get("combined")
        if got is not None and got[0] == gen:
            try:
                return graph.PackedGraph.load(got[1])
            except (ValueError, TypeError, EOFError):
                pass  # an unreadable cache entry: rebuild it
        return self.derived().combined

    def ref_edges(self) -> Edges:
        """The reference graph's edges ``(src, dst, weight)``, sorted."""
        return graphdelta.unpack(self.derived().ref)

    def refresh(self, *, defer: bool = False) -> bool:
        """Bring the cached file graphs up to this generation if they are behind.

        With ``defer``, graphs an edit made stale are left to their first reader
        when a delta will bring them up (``graphdelta.delta_likely``: the same files,
        at most a third of them changed); only a full build is done now. Returns
        whether the graphs are current afterwards.
        """
        old, current = self._stored()
        if current:
            return True
        if defer and old is not None:
            with self.rows.snapshot():
                if graphdelta.delta_likely(self.rows, old.basis):
                    return False
        self.derived()
        return True

    def derived(self) -> graphdelta.Derived:
        """The combined and ref graphs of the current content, with their basis: read
        from the cache, brought up to date from an older one, or built (stored by the
        store that may, as the module docstring says)."""
        old, current = self._stored()
        if current:
            assert old is not None
            return old
        if self.rows.readonly:
            got = self.rows.derived_by_writer()
            return got if got is not None else self._derive(old)[0]
        deadline = time.monotonic() + GRAPHS_WAIT_S
        while True:
            claim = self.rows.claim_derived()
            if claim.state == "indexing":
                return self._derive(self._stored()[0])[0]  # an index run writes
            if claim.state == "storing":
                if time.monotonic() >= deadline:
                    return self._derive(self._stored()[0])[0]
                time.sleep(_GRAPHS_POLL_S)  # another reader stores them: wait, then read
                old, current = self._stored()
                if current:
                    assert old is not None
                    return old
                continue
            try:
                old, current = self._stored()  # stored while we took the claim?
                if current:
                    assert old is not None
                    return old
                derived, gen = self._derive(old)
                data = (derived.combined.dump(), derived.ref.dump(), derived.basis.dump())
                self.rows.put_derived_rows(list(zip(DERIVED_KINDS, data, strict=True)), gen)
                return derived
            finally:
                claim.release()

    def edge_counts(self) -> dict[str, int | None]:
        """Edges of each graph kind, counted without unpacking a graph; ``ref`` is None
        while the graphs wait for their first reader (``refresh(defer=True)``)."""
        rows = self.rows
        with rows.snapshot():
            gen = rows.generation()
            stored = rows.derived_generations(DERIVED_KINDS)
            refs: int | None = None
            if len(stored) == len(DERIVED_KINDS) and set(stored.values()) == {gen}:
                data = rows.derived_rows(("ref.packed",))["ref.packed"][1]
                refs = len(graph.PackedGraph.load(data).src) // 8
            imports = rows.edge_count("import")
            cochange = rows.edge_count("cochange")
        return {"ref": refs, "import": imports, "cochange": cochange}

    def _stored(self) -> tuple[graphdelta.Derived | None, bool]:
        """The cached graphs with their basis (None when missing or unreadable), and
        whether they are of the current generation; read in one snapshot."""
        with self.rows.snapshot():
            gen = self.rows.generation()
            rows = self.rows.derived_rows(DERIVED_KINDS)
        if len(rows) != len(DERIVED_KINDS) or len({g for g, _ in rows.values()}) != 1:
            return None, False
        basis = graphdelta.Basis.load(rows["graph.basis"][1])
        if basis is None:
            return None, False
        try:
            old = graphdelta.Derived(
                graph.PackedGraph.load(rows["combined"][1]),
                graph.PackedGraph.load(rows["ref.packed"][1]),
                basis,
            )
        except (ValueError, TypeError, EOFError):
            return None, False
        return old, rows["combined"][0] == gen

    def _derive(self, old: graphdelta.Derived | None) -> tuple[graphdelta.Derived, int]:
        """The graphs of the committed content (from ``old`` when a delta is right) and
        the generation they belong to, read in one snapshot."""
        with self.rows.snapshot():
            gen = self.rows.generation()
            fresh = graphdelta.update(self.rows, old) if old is not None else None
            return (fresh if fresh is not None else graphdelta.build(self.rows)), gen
