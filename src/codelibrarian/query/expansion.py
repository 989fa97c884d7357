"""Stage 2, graph expansion: neighbours over reference, import and co-change edges.

Starting from the files of the retrieved chunks (the seeds), a breadth-first walk
follows edges in both directions (a file that imports a seed matters as much as
one the seed imports) for ``depth_hops(query.depth)`` hops: L0 none, L1 one, L2
two, L3 three. Each hop keeps at most ``fanout`` neighbours per file, chosen by
combined edge weight (``index.graph.EDGE_MULTIPLIERS``: ref x1, import x100,
cochange x20) then path, and the walk adds at most ``max_added`` files in all.

Every file in the walk (seeds included) then gets a ``graph_rank``: personalized
PageRank (``index.graph.pagerank``, integer parts per million) over the
subgraph the walk touched, personalised by the seeds' fused retrieval scores.
A newly reached file enters as its first chunk (the module header), with
``origin = graph:<kind>`` and ``via`` naming the file it was reached from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ..index.graph import EDGE_MULTIPLIERS, pagerank
from ..index.records import Chunk
from .base import MiddleStage, Stopwatch
from .types import (
    Candidate,
    CandidateSet,
    PipelineContext,
    QueryStore,
    StageEstimate,
    StageEvidence,
    StageResult,
    depth_hops,
)

__all__ = ["GraphExpansionStage", "Neighbourhood"]

EdgeKind = Literal["ref", "import", "cochange"]
ALL_KINDS: tuple[EdgeKind, ...] = ("ref", "import", "cochange")


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The graphs combined for walking.

    ``adjacency`` is undirected: ``path -> ((weight, neighbour, kind), ...)``,
    strongest first, where a pair's weight is its stronger direction in the
    combined graph (co-change edges are stored both ways, imports one way, so
    summing directions would double-count co-change) and ``kind`` the graph that
    contributed most. ``out`` holds the combined directed edges for PageRank.
    """

    adjacency: dict[str, tuple[tuple[int, str, str], ...]]
    out: dict[str, tuple[tuple[str, int], ...]]
    edge_count: int

    def subgraph(self, nodes: set[str]) -> list[tuple[str, str, int]]:
        """The combined edges with both ends in ``nodes``, sorted."""
        return sorted((a, b, w) for a in nodes for b, w in self.out.get(a, ()) if b in nodes)

    @staticmethod
    def build(graphs: dict[str, list[tuple[str, str, int]]]) -> Neighbourhood:
        # the same sum as ``index.graph.combine``, plus the strongest kind per pair
        directed: dict[tuple[str, str], int] = defaultdict(int)
        strongest: dict[tuple[str, str], tuple[int, str]] = {}
        for kind in sorted(graphs):
            m = EDGE_MULTIPLIERS.get(kind, 1)
            for a, b, w in graphs[kind]:
                if a == b or w <= 0 or m <= 0:
                    continue
                v = w * m
                directed[(a, b)] += v
                key = (a, b) if a < b else (b, a)
                prev = strongest.get(key)
                if prev is None or (v, kind) > prev:
                    strongest[key] = (v, kind)
        adj: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
        for (a, b), (_v, kind) in strongest.items():
            weight = max(directed.get((a, b), 0), directed.get((b, a), 0))
            adj[a].append((-weight, b, kind))
            adj[b].append((-weight, a, kind))
        out: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for (a, b), w in directed.items():
            out[a].append((b, w))
        adjacency = {
            node: tuple((-neg, nb, kind) for neg, nb, kind in sorted(items))
            for node, items in adj.items()
        }
        return Neighbourhood(adjacency, {k: tuple(v) for k, v in out.items()}, len(directed))


@dataclass(slots=True)
class GraphExpansionStage(MiddleStage):
    """Add graph neighbours of the retrieved files and rank the walked subgraph."""

    store: QueryStore
    kinds: Sequence[EdgeKind] = ALL_KINDS
    fanout: int = 6
    #: files added at most, per requested result
    added_per_result: int = 2
    _memo: dict[str, Neighbourhood] = field(default_factory=dict)
    #: first chunk of each file reached so far, for the current cache namespace
    _heads: dict[str, Chunk | None] = field(default_factory=dict)

    name: str = "graph_expansion"
    description: str = "Expand candidates with reference/import/co-change neighbours"
    cacheable: bool = True

    def estimate(self, input: CandidateSet) -> StageEstimate:
        hops = depth_hops(input.query.depth)
        return StageEstimate(2 + hops * 5, 0, True)

    def neighbourhood(self, context: PipelineContext) -> Neighbourhood:
        key = context.cache_namespace or "_"
        hood = self._memo.get(key)
        if hood is None:
            graphs: dict[str, list[tuple[str, str, int]]] = {
                kind: self.store.edges(kind) for kind in sorted(self.kinds)
            }
            hood = Neighbourhood.build(graphs)
            self._memo.clear()
            self._heads.clear()
            if context.cache_namespace:
                self._memo[key] = hood
        return hood

    def _head(self, path: str, context: PipelineContext) -> Chunk | None:
        if path in self._heads and context.cache_namespace:
            return self._heads[path]
        chunks = self.store.chunks_for(path)
        head = chunks[0] if chunks else None
        if context.cache_namespace:
            self._heads[path] = head
        return head

    def execute(self, input: CandidateSet, context: PipelineContext) -> StageResult[CandidateSet]:
        watch = Stopwatch()
        hops = depth_hops(input.query.depth)
        if hops == 0 or not input.candidates:
            reason = "depth L0: no expansion" if hops == 0 else "no seeds to expand"
            return StageResult(
                input, watch.ms(), (StageEvidence.of("computation", reason, added=0),)
            )
        hood = self.neighbourhood(context)
        seeds: dict[str, int] = {}
        for c in input.candidates:
            seeds[c.path] = max(seeds.get(c.path, 0), c.fused or c.score)
        max_added = max(1, input.query.limit * self.added_per_result)

        reached: dict[str, tuple[int, str, str]] = {}  # path -> (hops, via, kind)
        frontier = sorted(seeds)
        for hop in range(1, hops + 1):
            nxt: list[str] = []
            for node in frontier:
                context.cancel.raise_if_cancelled(self.name)
                taken = 0
                for _w, nb, kind in hood.adjacency.get(node, ()):
                    if taken >= self.fanout or len(reached) >= max_added:
                        break
                    if nb in seeds or nb in reached:
                        continue
                    reached[nb] = (hop, node, kind)
                    nxt.append(nb)
                    taken += 1
            context.progress(self.name, hop, hops + 1, f"hop {hop}: {len(reached)} files")
            frontier = sorted(nxt)
            if not frontier or len(reached) >= max_added:
                break

        walked = set(seeds) | set(reached)
        sub = hood.subgraph(walked)
        ranks = pagerank(sub, seeds, nodes=sorted(walked)) if walked else {}
        top = max(ranks.values(), default=0)

        def graph_rank(path: str) -> int:
            return ranks.get(path, 0) * 1000 // top if top > 0 else 0

        out = [replace(c, graph_rank=graph_rank(c.path)) for c in input.candidates]
        added = 0
        for path in sorted(reached):
            hop, via, kind = reached[path]
            ch = self._head(path, context)
            if ch is None:
                continue
            found = Candidate.of_chunk(ch, f"graph:{kind}")
            out.append(replace(found, graph_rank=graph_rank(path), hops=hop, via=via))
            added += 1
        by_kind: dict[str, int] = defaultdict(int)
        for _hop, _via, kind in reached.values():
            by_kind[kind] += 1
        evidence = (
            StageEvidence.of(
                "computation",
                f"walked {hops} hop(s) from {len(seeds)} files, added {added}",
                seeds=len(seeds),
                added=added,
                by_kind=dict(sorted(by_kind.items())),
                edges=hood.edge_count,
            ),
            StageEvidence.of(
                "computation",
                f"personalized PageRank over {len(walked)} files / {len(sub)} edges",
                nodes=len(walked),
                edges=len(sub),
            ),
        )
        warnings = () if hood.edge_count else ("the index has no graph edges",)
        # keep retrieval's order for seeds; graph-only files follow by rank, then path
        seeds_part = list(out[: len(input.candidates)])
        extra = sorted(out[len(input.candidates) :], key=lambda c: (-c.graph_rank, c.path))
        return StageResult(
            CandidateSet(input.query, tuple(seeds_part + extra)),
            watch.ms(),
            evidence,
            warnings,
            resources=(("items", len(out)),),
        )
