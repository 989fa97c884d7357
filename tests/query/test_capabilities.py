from __future__ import annotations

from pathlib import Path

from codelibrarian.query.capabilities import adapt, detect_capabilities
from codelibrarian.query.embed import HashingEmbedder, VectorIndex
from codelibrarian.query.pipeline import MemoryStageCache, build_pipeline

from .fakes import FakeDense, FakeStore, query


def test_bare_store_adapts_to_keyword_only_without_graph() -> None:
    store = FakeStore({"a.py": ["load config"]})
    report = detect_capabilities(store)
    caps = report.capabilities
    assert caps.full_text_search and not caps.vector_search and not caps.graph_traversal
    assert caps.persistence == "memory" and not caps.transactions
    missing = {e.capability for e in report.events if e.event == "capability_missing"}
    assert {"vector_search", "graph_traversal", "caching", "transactions"} <= missing
    plan = adapt(caps, {"bm25", "dense", "graph", "scoring"})
    assert plan.features == ("bm25", "scoring")
    assert [(a.original, a.adapted) for a in plan.adaptations] == [
        ("semantic_retrieval", "keyword_retrieval"),
        ("graph_expansion", "skip"),
        ("cache_lookup", "direct_execution"),
    ]
    assert all(e.event == "behavior_adapted" for e in plan.events)


def test_adaptations_are_recorded_in_the_result() -> None:
    store = FakeStore({"a.py": ["load config"]})
    result = build_pipeline(store).run(query("load config"))
    assert result.run_of("graph_expansion").status == "skipped"
    codes = [t.code for t in result.traces]
    assert "unverified_by_trace(adapted:semantic_retrieval->keyword_retrieval)" in codes
    assert "unverified_by_trace(adapted:graph_expansion->skip)" in codes
    assert result.response is not None
    assert any(stage == "capabilities" for stage, _ in result.response.evidence)


def test_full_capabilities() -> None:
    store = FakeStore({"a.py": ["x"], "b.py": ["y"]}, graphs={"ref": [("a.py", "b.py", 5)]})
    report = detect_capabilities(store, dense=FakeDense([(1, 5)]), cache=MemoryStageCache(4))
    caps = report.capabilities
    assert caps.vector_search and caps.vector_count == 1
    assert caps.graph_traversal and caps.relationship_types == ("ref",)
    assert caps.caching and caps.cache_max_size == 4
    plan = adapt(caps, {"bm25", "dense", "graph"})
    assert plan.features == ("bm25", "dense", "graph") and plan.adaptations == ()
    assert report.graphs["ref"] == [("a.py", "b.py", 5)]


def test_failing_search_means_no_fts() -> None:
    store = FakeStore({"a.py": ["x"]}, fail_search=True)
    report = detect_capabilities(store)
    assert not report.capabilities.full_text_search
    assert any(
        e.capability == "full_text_search" and "RuntimeError" in e.detail for e in report.events
    )
    plan = adapt(report.capabilities, {"bm25"})
    assert plan.features == ()
    assert plan.adaptations[0].adapted == "no_retrieval"


def test_empty_vector_store_is_missing(tmp_path: Path) -> None:
    store = FakeStore({"a.py": ["x"]})
    vectors = VectorIndex(tmp_path / "v.db", HashingEmbedder())
    try:
        caps = detect_capabilities(store, dense=vectors).capabilities
        assert not caps.vector_search
        vectors.sync(store)
        caps = detect_capabilities(store, dense=vectors).capabilities
        assert caps.vector_search and caps.vector_dimensions == (64,)
        assert caps.vector_metrics == ("cosine",)
    finally:
        vectors.close()
