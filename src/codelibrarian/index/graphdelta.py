"""Keep the stored file graphs current after an edit by re-deriving only what changed.

The combined graph (``graph.combine`` of the ref, import and co-change graphs) and the
ref graph alone are derived from the whole index and cached by index generation. Any
write bumps the generation, so one edited file used to cost a full rebuild on the next
composition: every definition and reference of the repository read back, 174,000
reference edges weighed in Python, all edges combined and packed again (about 2-5 s on
the 1,790-file stdlib, far more at 20,000 files). An agent edits and composes in a loop,
so it paid that on nearly every call.

A file's outgoing edges depend only on its own references and imports, on who defines
each name it references (and how many files do), and on its co-change rows. So after
files ``F`` change content (none came or went):

* the names whose set of defining files changed are ``N``: for each file of ``F``, its
  defined names before (kept in a *basis* beside the cached graphs) and now,
  symmetric difference; names defined by more than ``graph.MAX_DEFINERS`` files both
  before and after carry no edges either way and are dropped from ``N``;
* the sources to re-derive are ``S = F`` plus every file referencing a name of ``N``,
  plus every file whose resolved import or co-change rows differ from the basis (a
  checkout at another commit brings a new co-change history);
* the rows of ``S`` are derived exactly as the full build derives them (the same
  ``graph`` functions over the same rows, restricted to those sources), every other row
  is kept, and the result is packed in the same sorted order.

The records come from the backend's ``storage.GraphRecords`` (read inside one
snapshot by ``graphcache.GraphCache``); nothing here knows the backend. The result is
byte-identical to a full rebuild (a property test compares them over random edit
sequences). Files added or removed (imports re-resolve), a missing or
unreadable basis, or a change reaching more than a third of the files fall back to the
full build.
"""

from __future__ import annotations

import marshal
import sys
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import graph

if TYPE_CHECKING:
    from .storage import GraphRecords

__all__ = ["Basis", "Derived", "build", "delta_likely", "unpack", "update"]

#: format of a stored basis; a different value is ignored (full rebuild)
_BASIS_VERSION = 2
#: above this share of the files (per-mille) re-deriving costs more than rebuilding
_MAX_SHARE_PERMILLE = 333

Edges = list[tuple[str, str, int]]


@dataclass(frozen=True, slots=True)
class Basis:
    """What the cached graphs were derived from, enough to tell what an edit changed."""

    #: path -> content hash
    hashes: dict[str, str]
    #: path -> the names it defines, sorted
    defs: dict[str, tuple[str, ...]]
    #: the import edges, as ``store.edges("import")`` returns them
    imports: Edges
    #: the co-change edges, as ``store.edges("cochange")`` returns them
    cochange: Edges

    def dump(self) -> bytes:
        return marshal.dumps((_BASIS_VERSION, self.hashes, self.defs, self.imports, self.cochange))

    @classmethod
    def load(cls, data: bytes) -> Basis | None:
        try:
            version, *fields = marshal.loads(data)
        except (ValueError, TypeError, EOFError):
            return None
        if version != _BASIS_VERSION or len(fields) != 4:
            return None
        hashes, defs, imports, cochange = fields
        return cls(
            dict(hashes), dict(defs), [tuple(e) for e in imports], [tuple(e) for e in cochange]
        )


@dataclass(frozen=True, slots=True)
class Derived:
    """The cached graphs of one index generation and their basis."""

    combined: graph.PackedGraph
    ref: graph.PackedGraph
    basis: Basis


# ---------------------------------------------------------------- build


def _both(ref: Edges, imports: Edges, cochange: Edges) -> tuple[Edges, Edges]:
    """(combined rows, ref-only rows) from per-kind rows, as the full build makes them."""
    combined = graph.combine({"ref": ref, "import": imports, "cochange": cochange})
    return combined, ref  # ref rows are already what ``combine`` would make of them alone


def build(rows: GraphRecords) -> Derived:
    """Derive both graphs and their basis from the whole index (the references are
    streamed, and each edge list is packed and dropped as soon as it is done)."""
    hashes = rows.content_hashes()
    by_file: dict[str, set[str]] = {p: set() for p in hashes}
    for path, name in rows.defined_names():
        by_file[path].add(name)
    defs = [(name, path) for path, names in by_file.items() for name in names]
    ref = graph.reference_edges(defs, rows.reference_sums())
    del defs
    imports = rows.import_edges()
    cochange = rows.cochange_edges()
    ref_packed = graph.pack(ref)
    combined = graph.pack(_both(ref, imports, cochange)[0])
    del ref
    basis = Basis(
        hashes,
        {p: tuple(sorted(names)) for p, names in sorted(by_file.items())},
        imports,
        cochange,
    )
    return Derived(combined, ref_packed, basis)


# ---------------------------------------------------------------- update


def _moved(before: Edges, after: Edges) -> set[str]:
    """Sources whose rows differ between two sorted edge lists."""
    rows: tuple[dict[str, list[tuple[str, str, int]]], ...] = ({}, {})
    for edges, into in zip((before, after), rows, strict=True):
        for edge in edges:
            into.setdefault(edge[0], []).append(edge)
    return {p for p in rows[0].keys() | rows[1].keys() if rows[0].get(p) != rows[1].get(p)}


@dataclass(frozen=True, slots=True)
class _Plan:
    redo: set[str]
    #: the changed files' defined names now
    defs: dict[str, set[str]]
    imports: Edges
    cochange: Edges
    #: path -> content hash, now
    hashes: dict[str, str]


def _plan(rows: GraphRecords, basis: Basis) -> _Plan | None:
    """What to re-derive, or None when only a full build is right (files came or went,
    or too much changed)."""
    hashes = rows.content_hashes()
    if hashes.keys() != basis.hashes.keys():
        return None
    changed = {p for p, h in hashes.items() if basis.hashes[p] != h}
    imports, cochange = rows.import_edges(), rows.cochange_edges()
    moved = _moved(basis.imports, imports) | _moved(basis.cochange, cochange)
    if (len(changed) + len(moved)) * 1000 > len(hashes) * _MAX_SHARE_PERMILLE:
        return None
    now = rows.names_defined_in(changed)
    added: dict[str, int] = {}
    removed: dict[str, int] = {}
    for path in changed:
        old = set(basis.defs.get(path, ()))
        for name in now[path] - old:
            added[name] = added.get(name, 0) + 1
        for name in old - now[path]:
            removed[name] = removed.get(name, 0) + 1
    names = set(added) | set(removed)
    counts = dict.fromkeys(names, 0)
    for name, _ in rows.definitions_of(names):
        counts[name] += 1
    relevant = {
        n
        for n in names
        if min(counts[n], counts[n] - added.get(n, 0) + removed.get(n, 0)) <= graph.MAX_DEFINERS
    }
    redo = changed | moved | rows.referrers(relevant)
    if len(redo) * 1000 > len(hashes) * _MAX_SHARE_PERMILLE:
        return None
    return _Plan(redo, now, imports, cochange, hashes)


def _splice(old: graph.PackedGraph, redo: set[str], rows: Edges) -> graph.PackedGraph:
    """``old`` without the rows of sources in ``redo``, plus ``rows`` (all from ``redo``),
    packed exactly as ``graph.pack`` packs the same edge list."""
    import numpy as np  # imported on use, like the PageRank that reads these arrays

    order = old.order
    src = np.frombuffer(old.src, dtype="<i8")
    dst = np.frombuffer(old.dst, dtype="<i8")
    wts = np.frombuffer(old.weight, dtype="<i8")
    position = {name: i for i, name in enumerate(order)}
    gone = np.fromiter((position[p] for p in redo if p in position), dtype=np.int64)
    keep = ~np.isin(src, gone)
    src, dst, wts = src[keep], dst[keep], wts[keep]
    used = np.unique(np.concatenate([src, dst]))
    names = {order[i] for i in used.tolist()}
    for a, b, _ in rows:
        names.add(a)
        names.add(b)
    new_order = tuple(sorted(names))
    if new_order != order:
        where = {name: i for i, name in enumerate(new_order)}
        remap = np.fromiter((where.get(name, -1) for name in order), dtype=np.int64)
        src, dst = remap[src], remap[dst]
        position = where
    add_src = np.fromiter((position[a] for a, _, _ in rows), dtype=np.int64, count=len(rows))
    add_dst = np.fromiter((position[b] for _, b, _ in rows), dtype=np.int64, count=len(rows))
    add_w = np.fromiter((w for _, _, w in rows), dtype=np.int64, count=len(rows))
    src = np.concatenate([src, add_src])
    dst = np.concatenate([dst, add_dst])
    wts = np.concatenate([wts, add_w])
    by = np.lexsort((dst, src))
    return graph.PackedGraph(
        new_order,
        src[by].astype("<i8").tobytes(),
        dst[by].astype("<i8").tobytes(),
        wts[by].astype("<i8").tobytes(),
    )


def delta_likely(rows: GraphRecords, basis: Basis) -> bool:
    """Whether :func:`update` will probably bring graphs of ``basis`` up to the index's
    content (the same files, at most the share of them changed), judged from the
    content hashes alone: what the indexer asks before leaving the work to a reader."""
    hashes = rows.content_hashes()
    if hashes.keys() != basis.hashes.keys():
        return False
    changed = sum(1 for p, h in hashes.items() if basis.hashes[p] != h)
    return changed * 1000 <= len(hashes) * _MAX_SHARE_PERMILLE


def update(rows: GraphRecords, old: Derived) -> Derived | None:
    """``old`` brought up to the index's current content, or None when only a full
    :func:`build` is right (see the module docstring)."""
    plan = _plan(rows, old.basis)
    if plan is None:
        return None
    redo = plan.redo
    refs = rows.reference_sums_of(redo)
    defs = rows.definitions_of({name for _, name, _ in refs})
    ref = graph.reference_edges(defs, refs)
    combined, ref_only = _both(
        ref,
        [e for e in plan.imports if e[0] in redo],
        [e for e in plan.cochange if e[0] in redo],
    )
    kept = dict(old.basis.defs)
    for path, names in plan.defs.items():
        kept[path] = tuple(sorted(names))
    basis = Basis(plan.hashes, dict(sorted(kept.items())), plan.imports, plan.cochange)
    return Derived(_splice(old.combined, redo, combined), _splice(old.ref, redo, ref_only), basis)


def unpack(packed: graph.PackedGraph) -> Edges:
    """The edge list ``(src, dst, weight)`` of a packed graph, in its stored order."""
    cols = []
    for raw in (packed.src, packed.dst, packed.weight):
        arr = array("q")
        arr.frombytes(raw)
        if sys.byteorder != "little":  # pragma: no cover - the stored form is little-endian
            arr.byteswap()
        cols.append(arr)
    order = packed.order
    return [(order[a], order[b], w) for a, b, w in zip(cols[0], cols[1], cols[2], strict=True)]
