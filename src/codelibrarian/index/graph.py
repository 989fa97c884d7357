"""File graphs and a deterministic personalized PageRank.

Three graphs connect files:

* ``ref`` — file A references an identifier that file B defines. In the spirit of
  Aider's repo map, but with integer weights: a reference is worth
  ``_BASE`` times ``isqrt(100 * count) / 10`` (diminishing returns for repeated use),
  x10 for a long, specific identifier (8+ characters with ``_`` or camelCase), /10
  for a private one (leading ``_``), /10 when more than five files define the name.
  Names defined in more than ``MAX_DEFINERS`` files (``__init__``, ``get``...) carry
  no signal and are skipped.
* ``import`` — resolved imports, one edge per importing file and target.
* ``cochange`` — files changed in the same recent commit (bulk commits skipped).

``pagerank`` sorts its nodes and edges, iterates a fixed way in numpy and returns
integer parts-per-million, so equal inputs give equal ranks whatever their order,
the process or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import marshal
import math
import sys
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "EDGE_MULTIPLIERS",
    "MAX_DEFINERS",
    "PackedGraph",
    "cochange_edges",
    "combine",
    "name_weight",
    "pack",
    "pagerank",
    "reference_edges",
]

_BASE = 10
MAX_DEFINERS = 50
#: how much one unit of each graph's weight counts when graphs are combined
EDGE_MULTIPLIERS: dict[str, int] = {"ref": 1, "import": 100, "cochange": 20}


def _is_specific(name: str) -> bool:
    if len(name) < 8:
        return False
    return "_" in name.strip("_") or (
        any(c.isupper() for c in name) and any(c.islower() for c in name)
    )


def _multiplier(name: str, definers: int) -> int:
    mult = _BASE * 100
    if _is_specific(name):
        mult *= 10
    if name.startswith("_"):
        mult //= 10
    if definers > 5:
        mult //= 10
    return mult


def name_weight(name: str, definers: int, count: int) -> int:
    """Integer weight of ``count`` references to ``name`` defined in ``definers`` files."""
    return max(1, _multiplier(name, definers) * math.isqrt(100 * count) // 100)


def reference_edges(
    definitions: Iterable[tuple[str, str]], references: Iterable[tuple[str, str, int]]
) -> list[tuple[str, str, int]]:
    """Edges ``(referencing file, defining file, weight)`` from ``(name, path)``
    definitions and ``(path, name, count)`` reference counts; sorted."""
    definers: dict[str, set[str]] = defaultdict(set)
    for name, path in definitions:
        definers[name].add(path)
    # per name, its defining files and the name-dependent factor of ``name_weight``,
    # worked out once (a name is referenced from many files; the stdlib has ~10
    # references per name); None for a name that makes no edge
    plans: dict[str, tuple[tuple[str, ...], int] | None] = {}
    # source -> target -> weight (a dict per source: no key tuple per added weight)
    acc: dict[str, dict[str, int]] = {}
    for src, name, count in references:
        if name in plans:
            plan = plans[name]
        else:
            targets = definers.get(name)
            if not targets or len(targets) > MAX_DEFINERS:
                plan = plans[name] = None
            else:
                plan = plans[name] = (tuple(targets), _multiplier(name, len(targets)))
        if plan is None:
            continue
        w = max(1, plan[1] * math.isqrt(100 * int(count)) // 100)
        row = acc.get(src)
        if row is None:
            row = acc[src] = {}
        for dst in plan[0]:
            if dst != src:
                row[dst] = row.get(dst, 0) + w
    return _sorted_edges(acc)


def _sorted_edges(acc: Mapping[str, Mapping[str, int]]) -> list[tuple[str, str, int]]:
    """``(src, dst, weight)`` rows of nested weights, sorted (each pair occurs once)."""
    return [(a, b, w) for a in sorted(acc) for b, w in sorted(acc[a].items())]


def cochange_edges(
    commits: Iterable[Sequence[str]], *, max_files: int, known: set[str] | None = None
) -> list[tuple[str, str, int]]:
    """Symmetric edges between files changed in the same commit; weight = shared commits.

    Commits touching more than ``max_files`` files (bulk renames, formatting) are skipped;
    with ``known``, files not in it (deleted since) are ignored.
    """
    acc: dict[tuple[str, str], int] = defaultdict(int)
    for files in commits:
        paths = sorted({p for p in files if known is None or p in known})
        if len(paths) < 2 or len(files) > max_files:
            continue
        for i, a in enumerate(paths):
            for b in paths[i + 1 :]:
                acc[(a, b)] += 1
                acc[(b, a)] += 1
    return sorted((a, b, w) for (a, b), w in acc.items())


def combine(
    graphs: Mapping[str, Sequence[tuple[str, str, int]]],
    multipliers: Mapping[str, int] | None = None,
) -> list[tuple[str, str, int]]:
    """Sum several edge lists into one, each scaled by its integer multiplier."""
    mult = dict(EDGE_MULTIPLIERS if multipliers is None else multipliers)
    acc: dict[str, dict[str, int]] = {}
    for kind in sorted(graphs):
        m = mult.get(kind, 1)
        if m <= 0:
            continue
        for a, b, w in graphs[kind]:
            if a != b and w > 0:
                row = acc.get(a)
                if row is None:
                    row = acc[a] = {}
                row[b] = row.get(b, 0) + w * m
    return _sorted_edges(acc)


@dataclass(frozen=True, slots=True)
class PackedGraph:
    """A combined file graph as flat arrays, cheap to store and to load.

    ``order`` is every node, sorted; ``src``, ``dst`` (node positions) and
    ``weight`` are little-endian int64 arrays (``array('q')`` bytes, which
    ``numpy.frombuffer`` reads without a copy), one entry per edge, in the sorted
    edge order of ``combine``.
    """

    order: tuple[str, ...]
    src: bytes
    dst: bytes
    weight: bytes

    def dump(self) -> bytes:
        return marshal.dumps((self.order, self.src, self.dst, self.weight))

    @classmethod
    def load(cls, data: bytes) -> PackedGraph:
        order, src, dst, weight = marshal.loads(data)
        return cls(tuple(order), bytes(src), bytes(dst), bytes(weight))


def pack(edges: Sequence[tuple[str, str, int]]) -> PackedGraph:
    """``edges`` (as ``combine`` returns them) as a :class:`PackedGraph`."""
    order = tuple(sorted({a for a, _, _ in edges} | {b for _, b, _ in edges}))
    index = {name: i for i, name in enumerate(order)}
    src = array("q", [index[a] for a, _, _ in edges])
    dst = array("q", [index[b] for _, b, _ in edges])
    weight = array("q", [w for _, _, w in edges])
    if sys.byteorder != "little":  # pragma: no cover - the stored form is little-endian
        for arr in (src, dst, weight):
            arr.byteswap()
    return PackedGraph(order, src.tobytes(), dst.tobytes(), weight.tobytes())


def pagerank(
    edges: Iterable[tuple[str, str, int]],
    personalization: Mapping[str, int] | None = None,
    *,
    nodes: Iterable[str] = (),
    damping_permille: int = 850,
    iterations: int = 100,
    tolerance: float = 1e-10,
) -> dict[str, int]:
    """Personalized PageRank; ranks in integer parts per million (summing to ~1,000,000).

    ``personalization`` maps nodes to non-negative integer weights (missing = 0; all
    zero or None = uniform). Dangling nodes jump by the personalization vector.
    """
    import numpy as np  # imported on use: a cache-hit compose never needs it

    merged: dict[tuple[str, str], int] = defaultdict(int)
    names: set[str] = set(nodes)
    for a, b, w in edges:
        names.add(a)
        names.add(b)
        if w > 0 and a != b:
            merged[(a, b)] += int(w)
    if personalization:
        names.update(k for k, v in personalization.items() if v > 0)
    order = sorted(names)
    n = len(order)
    if n == 0:
        return {}
    index = {name: i for i, name in enumerate(order)}
    keys = sorted(merged)
    src = np.fromiter((index[a] for a, _ in keys), dtype=np.int64, count=len(keys))
    dst = np.fromiter((index[b] for _, b in keys), dtype=np.int64, count=len(keys))
    wts = np.fromiter((merged[k] for k in keys), dtype=np.float64, count=len(keys))
    out = np.bincount(src, weights=wts, minlength=n)
    norm = np.zeros(len(keys), dtype=np.float64)
    if keys:
        norm = wts / out[src]
    dangling = out == 0

    p = np.zeros(n, dtype=np.float64)
    if personalization:
        for k in sorted(personalization):
            if personalization[k] > 0:
                p[index[k]] = float(personalization[k])
    total = p.sum()
    p = np.full(n, 1.0 / n) if total <= 0 else p / total

    d = damping_permille / 1000.0
    r = p.copy()
    for _ in range(iterations):
        flow = np.bincount(dst, weights=r[src] * norm, minlength=n) if keys else np.zeros(n)
        nxt = d * (flow + r[dangling].sum() * p) + (1.0 - d) * p
        delta = float(np.abs(nxt - r).sum())
        r = nxt
        if delta < tolerance:
            break
    ppm = np.rint(r * 1_000_000).astype(np.int64)
    return {name: int(ppm[i]) for i, name in enumerate(order)}
