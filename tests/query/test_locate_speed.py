"""The faster ranking paths answer exactly what the plain definitions answer.

PageRank repeats each node's rank along its edges instead of gathering it edge by
edge; span ranking keeps each chunk's words with the file's layout and builds only
the best ``limit`` spans; chunk words are found on lower-cased ASCII text. Each
property compares the fast path with the plain one on drawn inputs.
"""

from __future__ import annotations

import heapq
import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.index.graph import PackedGraph, combine, pack
from codelibrarian.index.records import Chunk, ChunkHit, Symbol
from codelibrarian.query import locate
from codelibrarian.query.locate import LocatedFile, LocateRequest, rank_spans

NODES = tuple(f"f{i}.py" for i in range(12))
edge = st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.integers(1, 500))


class _GraphStore:
    """The one read ``pagerank`` makes: the packed combined graph."""

    def __init__(self, packed: PackedGraph) -> None:
        self.packed = packed

    def combined_graph(self) -> PackedGraph:
        return self.packed


def _plain_pagerank(packed: PackedGraph, seeds: dict[str, int]) -> dict[str, int]:
    """The definition: gather each edge's source rank, sum inflows edge by edge."""
    order = packed.order
    n = len(order)
    src = np.frombuffer(packed.src, dtype="<i8")
    dst = np.frombuffer(packed.dst, dtype="<i8")
    wts = np.frombuffer(packed.weight, dtype="<i8").astype(np.float64)
    out = np.bincount(src, weights=wts, minlength=n)
    norm = wts / out[src]
    dangling = out == 0
    p = np.zeros(n)
    for name in sorted(seeds):
        if name in order and seeds[name] > 0:
            p[order.index(name)] = float(seeds[name])
    p = np.full(n, 1.0 / n) if p.sum() <= 0 else p / p.sum()
    r = p.copy()
    for _ in range(60):
        flow = np.bincount(dst, weights=r[src] * norm, minlength=n)
        nxt = 0.85 * (flow + r[dangling].sum() * p) + 0.15 * p
        delta = float(np.abs(nxt - r).sum())
        r = nxt
        if delta < 1e-9:
            break
    return dict(zip(order, np.rint(r * 1_000_000).astype(np.int64).tolist(), strict=True))


def _shuffled(packed: PackedGraph, seed: int) -> PackedGraph:
    """The same edges in another order (sources no longer grouped)."""
    src = np.frombuffer(packed.src, dtype="<i8")
    perm = np.random.default_rng(seed).permutation(len(src))
    parts = [
        np.frombuffer(b, dtype="<i8")[perm].astype("<i8").tobytes()
        for b in (packed.src, packed.dst, packed.weight)
    ]
    return PackedGraph(packed.order, parts[0], parts[1], parts[2])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(edge, min_size=1, max_size=80),
    st.dictionaries(st.sampled_from(NODES), st.integers(0, 1000), max_size=5),
    st.integers(0, 2**16),
)
def test_pagerank_is_the_edge_by_edge_definition(
    edges: list[tuple[str, str, int]], seeds: dict[str, int], seed: int
) -> None:
    combined = combine({"ref": edges})
    if not combined:
        return
    packed = pack(combined)
    assert locate.pagerank(_GraphStore(packed), {}, seeds) == _plain_pagerank(packed, seeds)  # type: ignore[arg-type]
    mixed = _shuffled(packed, seed)
    assert locate.pagerank(_GraphStore(mixed), {}, seeds) == _plain_pagerank(mixed, seeds)  # type: ignore[arg-type]


@given(st.text(max_size=200) | st.text(alphabet="aB_9 İK\u212a.xyZ(", max_size=200))
def test_chunk_words_are_the_lower_cased_words(text: str) -> None:
    assert locate._words(text) == frozenset(w.lower() for w in locate._WORD.findall(text))


WORDS = ("retry", "Timeout", "client", "parse", "json", "error", "self", "x", "İd")
KINDS = ("function", "method", "class", "module", "constant")


class _SymbolStore:
    def __init__(self, symbols: list[Symbol]) -> None:
        self._symbols = symbols

    def symbols(self, path: str | None = None, name: str | None = None) -> list[Symbol]:
        return list(self._symbols)


def _chunks(rnd: random.Random) -> list[Chunk]:
    out = []
    for i in range(rnd.randint(1, 30)):
        start = rnd.randint(1, 200)
        symbol = rnd.choice((None, "Client", "Client.retry", "parse_json", "Timeout.error"))
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 12)))
        out.append(
            Chunk(
                i + 1,
                "a.py",
                start,
                start + rnd.randint(0, 40),
                symbol,
                rnd.choice(KINDS),
                text,
                10,
                "h",
            )
        )
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 30), st.booleans())
def test_span_limit_is_a_prefix_of_the_full_ranking(seed: int, limit: int, diff: bool) -> None:
    rnd = random.Random(seed)
    chunks = _chunks(rnd)
    hits = tuple(
        ChunkHit(
            c.chunk_id, c.path, c.start_line, c.end_line, c.symbol, c.kind, rnd.randint(-5, 900), 10
        )
        for c in rnd.sample(chunks, rnd.randint(0, len(chunks)))
    )
    request = LocateRequest(
        task="retry the client on timeout",
        keywords=("retry", "client", "timeouts"),
        changed=("b.py",) if diff else (),
        diff_words=("Timeout", "timeout", "parse") if diff else (),
    )
    file = LocatedFile("a.py", 800, (), hits, False, True)
    store: Any = _SymbolStore([Symbol("Client", "class", None, "a.py", 1, 300, "class Client")])
    quoted = frozenset(c.chunk_id for c in chunks[:2])
    full = rank_spans(store, request, file, quoted_chunks=quoted, chunks=chunks)
    assert (
        rank_spans(store, request, file, quoted_chunks=quoted, chunks=chunks, limit=limit)
        == full[:limit]
    )
    keys = [(-s.score, s.start, s.chunk_id) for s in full]
    assert keys == sorted(keys)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(edge, min_size=1, max_size=80),
    st.dictionaries(st.sampled_from(NODES), st.integers(0, 1000), max_size=5),
    st.frozensets(st.sampled_from(NODES), max_size=4),
    st.integers(1, 14),
)
def test_graph_signal_is_the_normalized_ranking(
    edges: list[tuple[str, str, int]], seeds: dict[str, int], excluded: frozenset[str], best: int
) -> None:
    combined = combine({"ref": edges})
    if not combined:
        return
    store: Any = _GraphStore(pack(combined))
    ranks = locate.pagerank(store, {}, seeds)
    normalized = locate._normalize({p: r for p, r in ranks.items() if p not in excluded})
    was = locate._GRAPH_CANDIDATES
    locate._GRAPH_CANDIDATES = best  # the cut, at a size these small graphs reach
    try:
        got = locate._graph_signal(store, {}, seeds, excluded)
    finally:
        locate._GRAPH_CANDIDATES = was
    assert got[0] == ranks
    assert got[1] == {p: v for p, v in normalized.items() if v}
    assert got[2] == [
        p for p, _ in heapq.nsmallest(best, normalized.items(), key=locate._best_first)
    ]
