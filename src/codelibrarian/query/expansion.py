"""Stage 2, graph expansion: neighbours over reference, import and co-change edges.

Starting from the files of the retrieved chunks (the seeds), a breadth-first walk
follows edges in both directions (a file that imports a seed matters as much as
one the seed imports) for ``depth_hops(query.depth)`` hops: L0 none, L1 one, L2
two, L3 three. Each hop keeps at most ``fanout`` neighbours per file, chosen by
combined edge weight (``index.graph.combine``: ref x1, import x100,
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
from typing import Any, Literal

from ..index.graph import combine, pagerank
from .base import Stopwatch
from .schemas import CandidateSetModel, schema_of
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
    """Undirected adjacency: ``path -> ((weight, neighbour, strongest kind), ...)``,
    strongest first."""

    adjacency: dict[str, tuple[tuple[int, str, str], ...]]
    combined: tuple[tuple[str, str, int], ...]
    #: directed out-edges of the combined graph: ``src -> ((dst, weight), ...)``
    out: dict[str, tuple[tuple[str, int], ...]]

    def subgraph(self, nodes: set[str]) -> list[tuple[str, str, int]]:
        """The combined edges with both ends in ``nodes``, sorted."""
        return sorted((a, b, w) for a in nodes for b, w in self.out.get(a, ()) if b in nodes)

    @staticmethod
    def build(graphs: dict[str, list[tuple[str, str, int]]]) -> Neighbourhood:
        combined = combine(graphs)
        # the kind that contributed most weight to each undirected pair names the edge
        kind_of: dict[tuple[str, str], tuple[int, str]] = {}
        mult = {"ref": 1, "import": 100, "cochange": 20}
        for kind in sorted(graphs):
            for a, b, w in graphs[kind]:
                key = (a, b) if a < b else (b, a)
                cand = (w * mult.get(kind, 1), kind)
                prev = kind_of.get(key)
                if prev is None or cand > prev:
                    kind_of[key] = cand
        # undirected strength of a pair = the stronger direction (co-change edges are
        # stored both ways, imports one way: summing would double-count co-change)
        acc: dict[str, dict[str, int]] = defaultdict(dict)
        for a, b, w in combined:
            acc[a][b] = max(acc[a].get(b, 0), w)
            acc[b][a] = max(acc[b].get(a, 0), w)
        adjacency = {
            node: tuple(
                sorted(
                    (
                        (w, nb, kind_of.get((node, nb) if node < nb else (nb, node), (0, "ref"))[1])
                        for nb, w in nbrs.items()
                    ),
                    key=lambda t: (-t[0], t[1]),
                )
            )
            for node, nbrs in acc.items()
        }
        out: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for a, b, w in combined:
            out[a].append((b, w))
        return Neighbourhood(adjacency, tuple(combined), {k: tuple(v) for k, v in out.items()})


@dataclass(slots=True)
class GraphExpansionStage:
    """Add graph neighbours of the retrieved files and rank the walked subgraph."""

    store: QueryStore
    kinds: Sequence[EdgeKind] = ALL_KINDS
    fanout: int = 6
    #: files added at most, per requested result
    added_per_result: int = 2
    _memo: dict[str, Neighbourhood] = field(default_factory=dict)

    name: str = "graph_expansion"
    description: str = "Expand candidates with reference/import/co-change neighbours"
    cacheable: bool = True

    @property
    def input_schema(self) -> dict[str, Any]:
        return schema_of(CandidateSetModel)

    @property
    def output_schema(self) -> dict[str, Any]:
        return schema_of(CandidateSetModel)

    def estimate(self, input: CandidateSet) -> StageEstimate:
        hops = depth_hops(input.query.depth)
        return StageEstimate(2 + hops * 5, 0, True)

    def passthrough(self, input: CandidateSet, context: PipelineContext) -> CandidateSet:
        return input

    def neighbourhood(self, context: PipelineContext) -> Neighbourhood:
        key = context.cache_namespace or "_"
        hood = self._memo.get(key)
        if hood is None:
            graphs: dict[str, list[tuple[str, str, int]]] = {
                kind: self.store.edges(kind) for kind in sorted(self.kinds)
            }
            hood = Neighbourhood.build(graphs)
            self._memo.clear()
            if context.cache_namespace:
                self._memo[key] = hood
        return hood

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
            chunks = self.store.chunks_for(path)
            if not chunks:
                continue
            ch = chunks[0]
            out.append(
                Candidate(
                    ch.chunk_id,
                    ch.path,
                    ch.start_line,
                    ch.end_line,
                    ch.symbol,
                    ch.kind,
                    ch.tokens,
                    f"graph:{kind}",
                    score=0,
                    graph_rank=graph_rank(path),
                    hops=hop,
                    via=via,
                )
            )
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
                edges=len(hood.combined),
            ),
            StageEvidence.of(
                "computation",
                f"personalized PageRank over {len(walked)} files / {len(sub)} edges",
                nodes=len(walked),
                edges=len(sub),
            ),
        )
        warnings = () if hood.combined else ("the index has no graph edges",)
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
