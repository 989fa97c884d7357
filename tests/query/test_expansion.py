from __future__ import annotations

from codelibrarian.query.expansion import GraphExpansionStage
from codelibrarian.query.types import PipelineContext

from .fakes import FakeStore, cand, cset, query

# a chain a -> b -> c -> d (imports) plus a co-change a <-> x
STORE = FakeStore(
    {p: [f"text of {p}"] for p in ("a.py", "b.py", "c.py", "d.py", "x.py", "y.py")},
    graphs={
        "import": [("a.py", "b.py", 1), ("b.py", "c.py", 1), ("c.py", "d.py", 1)],
        "cochange": [("a.py", "x.py", 3), ("x.py", "a.py", 3)],
        "ref": [],
    },
)


def seeds(depth: str) -> object:
    return cset([cand(1, "a.py", 100, fused=100)], query("a", depth=depth))  # type: ignore[arg-type]


def run(depth: str, **kw: object) -> list[tuple[str, int, str | None, str]]:
    stage = GraphExpansionStage(STORE, **kw)  # type: ignore[arg-type]
    out = stage.execute(seeds(depth), PipelineContext("q")).output  # type: ignore[arg-type]
    return [(c.path, c.hops, c.via, c.origin) for c in out.candidates]


def test_l0_adds_nothing() -> None:
    assert run("L0") == [("a.py", 0, None, "bm25")]


def test_l1_adds_direct_neighbours_both_directions() -> None:
    got = run("L1")
    assert got[0][0] == "a.py"
    assert {p for p, *_ in got[1:]} == {"b.py", "x.py"}
    assert ("b.py", 1, "a.py", "graph:import") in got
    assert ("x.py", 1, "a.py", "graph:cochange") in got


def test_depth_bounds_the_walk() -> None:
    l2 = {p for p, *_ in run("L2")}
    l3 = {p for p, *_ in run("L3")}
    assert l2 == {"a.py", "b.py", "x.py", "c.py"}
    assert l3 == l2 | {"d.py"}
    assert ("c.py", 2, "b.py", "graph:import") in run("L2")


def test_fanout_and_cap() -> None:
    # import (1 x100) beats co-change (3 x20): with one neighbour per file, the chain wins
    assert [p for p, *_ in run("L3", fanout=1)] == ["a.py", "b.py", "c.py", "d.py"]
    # at most max(1, limit x added_per_result) files are added
    assert [p for p, *_ in run("L3", added_per_result=0)] == ["a.py", "b.py"]


def test_graph_rank_is_integer_and_seed_personalised() -> None:
    stage = GraphExpansionStage(STORE)
    res = stage.execute(seeds("L2"), PipelineContext("q"))  # type: ignore[arg-type]
    ranks = {c.path: c.graph_rank for c in res.output.candidates}
    assert max(ranks.values()) == 1000
    assert all(isinstance(v, int) and 0 <= v <= 1000 for v in ranks.values())
    assert res.evidence and res.evidence[0].type == "computation"


def test_no_edges_warns() -> None:
    bare = FakeStore({"a.py": ["x"]})
    res = GraphExpansionStage(bare).execute(seeds("L1"), PipelineContext("q"))  # type: ignore[arg-type]
    assert res.warnings == ("the index has no graph edges",)
