"""The faster ranking paths answer what their plain definitions answer.

PageRank sums inflows in a canonical edge order and stops at a tolerance: held to its
plain edge-by-edge definition, the fixed point's error bound and any order of the
stored edges, and its sorted graph is kept per index generation. Span ranking keeps
each chunk's words with the file's layout and builds only the best ``limit`` spans;
chunk words are found on lower-cased ASCII text. Each property compares the fast path
with the plain one on drawn inputs.
"""

from __future__ import annotations

import heapq
import random
from pathlib import Path
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


def _arrays(packed: PackedGraph) -> tuple[Any, Any, Any]:
    return tuple(np.frombuffer(b, dtype="<i8") for b in (packed.src, packed.dst, packed.weight))  # type: ignore[return-value]


def _plain_pagerank(packed: PackedGraph, seeds: dict[str, int]) -> tuple[list[float], int, float]:
    """The definition, edge by edge in plain floats: each step adds a node's inflows in
    (source position) order; stops once a step moves less than the tolerance in all
    (L1), at most 60 steps. Returns the ranks, the steps taken and the last step's size."""
    order = packed.order
    n = len(order)
    src, dst, wts = (a.tolist() for a in _arrays(packed))
    out = [0.0] * n
    for s, w in zip(src, wts, strict=True):
        out[s] += w
    inflow = sorted(zip(dst, src, wts, strict=True))
    p = [0.0] * n
    for name in sorted(seeds):
        if name in order and seeds[name] > 0:
            p[order.index(name)] = float(seeds[name])
    total = sum(p)
    p = [1.0 / n] * n if total <= 0 else [x / total for x in p]
    r = p[:]
    steps, delta = 0, 0.0
    for steps in range(1, 61):  # noqa: B007  (the count is returned)
        flow = [0.0] * n
        for d, s, w in inflow:
            flow[d] += r[s] * (w / out[s])
        lost = sum(r[i] for i in range(n) if out[i] == 0)
        nxt = [0.85 * (flow[i] + lost * p[i]) + 0.15 * p[i] for i in range(n)]
        delta = sum(abs(a - b) for a, b in zip(nxt, r, strict=True))
        r = nxt
        if delta < locate.PR_TOLERANCE:
            break
    return r, steps, delta


def _fixed_point(packed: PackedGraph, seeds: dict[str, int]) -> Any:
    """The exact personalized PageRank: the fixed point, by a linear solve."""
    order = packed.order
    n = len(order)
    src, dst, wts = _arrays(packed)
    out = np.bincount(src, weights=wts.astype(float), minlength=n)
    m = np.zeros((n, n))
    for s, d, w in zip(src.tolist(), dst.tolist(), wts.tolist(), strict=True):
        m[d, s] += w / out[s]
    p = np.zeros(n)
    for name, v in seeds.items():
        if name in order and v > 0:
            p[order.index(name)] = float(v)
    p = np.full(n, 1.0 / n) if p.sum() <= 0 else p / p.sum()
    m += np.outer(p, out == 0)  # a dangling node's rank returns to the seeds
    return np.linalg.solve(np.eye(n) - 0.85 * m, 0.15 * p)


def _shuffled(packed: PackedGraph, seed: int) -> PackedGraph:
    """The same edges in another order (sources no longer grouped)."""
    src = np.frombuffer(packed.src, dtype="<i8")
    perm = np.random.default_rng(seed).permutation(len(src))
    parts = [
        np.frombuffer(b, dtype="<i8")[perm].astype("<i8").tobytes()
        for b in (packed.src, packed.dst, packed.weight)
    ]
    return PackedGraph(packed.order, parts[0], parts[1], parts[2])


graphs = st.lists(edge, min_size=1, max_size=80)
seed_sets = st.dictionaries(st.sampled_from(NODES), st.integers(0, 1000), max_size=5)


@settings(max_examples=150, deadline=None)
@given(graphs, seed_sets, st.integers(0, 2**16))
def test_pagerank_is_the_same_for_any_edge_order(
    edges: list[tuple[str, str, int]], seeds: dict[str, int], seed: int
) -> None:
    """Inflows are summed in a canonical order: the stored order of the edges changes no float."""
    combined = combine({"ref": edges})
    if not combined:
        return
    packed = pack(combined)
    got = locate.pagerank(_GraphStore(packed), {}, seeds)  # type: ignore[arg-type]
    assert locate.pagerank(_GraphStore(_shuffled(packed, seed)), {}, seeds) == got  # type: ignore[arg-type]
    assert locate.pagerank(_GraphStore(packed), {}, seeds) == got  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(graphs, seed_sets)
def test_pagerank_is_the_power_iteration_and_within_its_bound(
    edges: list[tuple[str, str, int]], seeds: dict[str, int]
) -> None:
    """Each rank is the edge-by-edge definition's (to the rounding of 32-bit float steps), and
    once the tolerance stopped it, within (0.85 / 0.15) x the last step of the fixed point."""
    combined = combine({"ref": edges})
    if not combined:
        return
    packed = pack(combined)
    got = locate.pagerank(_GraphStore(packed), {}, seeds)  # type: ignore[arg-type]
    plain, steps, delta = _plain_pagerank(packed, seeds)
    for name, value in zip(packed.order, plain, strict=True):
        # 32-bit steps: each operation rounds by 6e-8 of its value, and the steps contract
        # the error by 0.85 (or the tolerance stops one step apart): within 2 ppm, and
        # a rank may round the other way
        assert abs(got[name] - value * 1_000_000) <= 0.5 + 2.0
    exact = _fixed_point(packed, seeds)
    error = float(np.abs(np.asarray(plain) - exact).sum())
    if delta < locate.PR_TOLERANCE:
        assert error <= 0.85 / 0.15 * delta + 1e-12
    else:  # stopped by the step cap: the step map contracts by 0.85 from at most 2 apart
        assert steps == 60
        assert error <= 2 * 0.85**60 / 0.15 + 1e-12


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

    def symbol_lines(self, path: str) -> dict[str, int]:
        return {s.name: s.start_line for s in self._symbols}


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


def test_the_canonical_graph_is_rebuilt_for_a_new_index_generation(tmp_path: Path) -> None:
    """The sorted graph is kept per index generation: a write that adds an import edge
    gives the next compose a graph that has it (and the same graph while nothing moved)."""
    from codelibrarian.api import Librarian
    from codelibrarian.config import Config, IndexConfig
    from tests.helpers import make_repo, write_files

    repo = make_repo(
        tmp_path / "r",
        {
            "pkg/__init__.py": "",
            "pkg/ledger.py": "def ledger_total(lines):\n    return sum(lines)\n",
            "pkg/report.py": "from pkg.ledger import ledger_total\n\n\ndef report(x):\n"
            "    return ledger_total(x)\n",
        },
    )
    task = "fix the ledger total in the report"
    with Librarian(repo, Config(index=IndexConfig(background=False))) as lib:
        lib.compose(task, budget=2000, use_cache=False, record=False)
        first = lib._ws.memo["ranking.graph"]
        lib.compose(task + " again", budget=2000, use_cache=False, record=False)
        assert lib._ws.memo["ranking.graph"] is first  # same generation: kept
        write_files(
            repo,
            {
                "pkg/audit.py": "from pkg.ledger import ledger_total\n\n\ndef audit(x):\n"
                "    return ledger_total(x)\n"
            },
        )
        lib.compose(task, budget=2000, use_cache=False, record=False)
        second = lib._ws.memo["ranking.graph"]
    assert second is not first
    ends = [*second.starts.tolist()[1:], len(second.src)]
    runs = {
        second.order[t]: [second.order[i] for i in second.src[a:b].tolist()]
        for t, a, b in zip(second.targets.tolist(), second.starts.tolist(), ends, strict=True)
    }
    assert "pkg/audit.py" in runs["pkg/ledger.py"]
    assert "pkg/audit.py" not in first.order
    # the canonical order: targets ascending, each target's sources ascending
    assert second.targets.tolist() == sorted(set(second.targets.tolist()))
    for sources in runs.values():
        assert [second.index[s] for s in sources] == sorted(second.index[s] for s in sources)


def test_span_frames_read_from_symbol_lines_match_the_full_symbols(tmp_path: Path) -> None:
    """A layout reads only ``name -> first line`` of a file's symbols: on a real index,
    with names defined more than once, that map is the one the full symbol rows give
    (the last of a name wins) and the spans' frames are those of the owners' rows."""
    from codelibrarian.index.indexer import index_workspace
    from codelibrarian.index.store import open_store
    from tests.helpers import make_repo

    body = (
        "class Client:\n"
        "    def run(self):\n        return 1\n\n"
        "    def retry(self):\n        return 2\n\n\n"
        "def run():\n    return 3\n\n\n"
        "class Pool:\n"
        "    class Client:\n"
        "        def run(self):\n            return 4\n\n"
        "    def run(self):\n        return 5\n"
    )
    repo = make_repo(tmp_path / "r", {"a.py": body, "b.py": body.replace("Pool", "Queue")})
    index_workspace(repo)
    with open_store(repo, readonly=True) as store:
        for path in ("a.py", "b.py"):
            full = {s.name: s for s in store.symbols(path=path)}
            assert store.symbol_lines(path) == {k: s.start_line for k, s in full.items()}
            assert len(full) < len(store.symbols(path=path))  # some names repeat
            layout = locate._layout(store, path, None)
            for part in layout.parts:
                c = part.chunk
                owner = c.symbol.rsplit(".", 1)[0] if c.symbol and "." in c.symbol else None
                parent = full.get(owner.rsplit(".", 1)[-1]) if owner else None
                want = (
                    (parent.start_line,)
                    if parent is not None and parent.start_line < c.start_line
                    else ()
                )
                assert part.frame == want
            assert any(part.frame for part in layout.parts)
        assert store.symbol_lines("missing.py") == {}


def test_layout_parts_are_made_as_read_and_kept_from_the_second_read() -> None:
    raw = [
        (0, 7, 1, 9, None, "module", 40, ((1, 2),), (), None, True, True),
        (1, 8, 3, 9, "Pool.drain", "method", 30, ((3, 9),), (3,), ("drain", "pool"), False, False),
    ]
    parts = locate._Parts(raw)
    assert len(parts) == 2 and bool(parts)
    first = list(parts)
    assert first[1].chunk == locate._Bare(8, 3, 9, "Pool.drain", "method", 30)
    assert first[1].parts == frozenset({"drain", "pool"}) and first[0].parts is None
    assert parts._made is None  # read once: nothing kept
    second = list(parts)
    assert second == first and parts._made is not None  # read again: kept
    assert list(parts)[1] is second[1] and parts[1] is second[1] and parts[0:1] == (first[0],)
    assert parts == locate._Parts(raw)
