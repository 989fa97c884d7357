from __future__ import annotations

from codelibrarian.query.retrieval import (
    DENSE_WEIGHT_PERMILLE,
    RRF_K,
    RRF_SCALE,
    RetrievalStage,
    rrf_fuse,
)
from codelibrarian.query.types import PipelineContext

from .fakes import FakeDense, FakeStore, query

STORE = FakeStore(
    {
        "pkg/config.py": ["def load config toml parse", "def save config"],
        "pkg/http.py": ["retry backoff http"],
        "pkg/util.py": ["parse helpers"],
    }
)


def test_rrf_fuse_integer_scores_and_total_order() -> None:
    fused = rrf_fuse({"bm25": [10, 20, 30], "dense": [20, 40]})
    assert fused[0] == (20, RRF_SCALE // (RRF_K + 2) + RRF_SCALE // (RRF_K + 1), 1)
    # 10 (bm25 rank 1) and 40 (dense rank 2) differ; 30 and 40 tie in score? no: ranks 3 vs 2
    assert [c for c, _, _ in fused] == [20, 10, 40, 30]
    assert all(isinstance(s, int) for _, s, _ in fused)


def test_rrf_ties_break_by_best_rank_then_id() -> None:
    fused = rrf_fuse({"a": [7, 3], "b": [3, 7]})
    # both get 1/(k+1) + 1/(k+2): equal score, equal best rank -> lower id first
    assert [c for c, _, _ in fused] == [3, 7]
    assert fused[0][1] == fused[1][1]


def test_bm25_only_keeps_store_order_and_scores() -> None:
    stage = RetrievalStage(STORE)
    res = stage.execute(query("parse config"), PipelineContext("q"))
    paths = [c.path for c in res.output.candidates]
    assert paths[0] == "pkg/config.py"
    assert set(paths) == {"pkg/config.py", "pkg/util.py"}
    top = res.output.candidates[0]
    assert top.origin == "bm25" and top.bm25 == 2000 and top.fused == RRF_SCALE // (RRF_K + 1)
    assert res.evidence[0].type == "retrieval"


def test_dense_hits_fuse_with_bm25_and_mark_origin() -> None:
    # chunk 3 is pkg/http.py (no keyword overlap), chunk 1 is the top BM25 hit
    stage = RetrievalStage(STORE, dense=FakeDense([(3, 800), (1, 600), (999, 500)]))
    res = stage.execute(query("parse config"), PipelineContext("q"))
    by_id = {c.chunk_id: c for c in res.output.candidates}
    assert by_id[1].origin == "bm25+dense" and by_id[1].dense == 600
    assert by_id[3].origin == "dense" and by_id[3].bm25 == 0
    assert 999 not in by_id  # a vector whose chunk is gone is dropped, with a warning
    assert any("no longer in the index" in w for w in res.warnings)
    assert res.output.candidates[0].chunk_id == 1  # in both lists: fused first
    assert by_id[3].fused == DENSE_WEIGHT_PERMILLE * (RRF_SCALE // (RRF_K + 1)) // 1000


def test_no_terms_gives_empty_set_with_warning() -> None:
    res = RetrievalStage(STORE).execute(query("zzz"), PipelineContext("q"))
    assert res.output.candidates == ()
    assert res.warnings


def test_keyword_off_dense_only() -> None:
    store = FakeStore({"a.py": ["parse"], "b.py": ["config"]})
    stage = RetrievalStage(store, dense=FakeDense([(2, 700)]), use_bm25=False)
    res = stage.execute(query("parse config"), PipelineContext("q"))
    assert [(c.chunk_id, c.origin) for c in res.output.candidates] == [(2, "dense")]
    assert store.calls == []  # keyword search never ran


def test_rrf_list_weights() -> None:
    full = rrf_fuse({"bm25": [1], "dense": [2]})
    assert [c for c, _, _ in full] == [1, 2]  # equal scores: best rank ties, lower id
    half = rrf_fuse({"bm25": [1], "dense": [2]}, {"dense": 500})
    assert half[1] == (2, 500 * (RRF_SCALE // (RRF_K + 1)) // 1000, 1)
    assert rrf_fuse({"bm25": [1], "dense": [2]}, {"bm25": 400})[0][0] == 2
