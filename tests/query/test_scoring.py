from __future__ import annotations

from codelibrarian.query.scoring import (
    WEIGHTS,
    ScoringStage,
    intent_terms,
    recency_bucket,
    words_of_path,
)
from codelibrarian.query.types import PipelineContext

from .fakes import cand, cset, query

AS_OF = 1_800_000_000


def test_weights_sum_to_1000() -> None:
    assert sum(WEIGHTS.values()) == 1000


def test_recency_buckets() -> None:
    assert recency_bucket(0) == 0
    assert recency_bucket(86_399) == 0
    assert recency_bucket(86_400) == 1
    assert recency_bucket(40 * 86_400) == 3
    assert recency_bucket(400 * 86_400) == 5
    assert recency_bucket(None) == 5


def test_terms_and_path_words() -> None:
    assert intent_terms("How does the HTTPClient retry?") == (
        "client",
        "http",
        "httpclient",
        "retry",
    )
    assert {"pkg", "http", "client", "py"} <= words_of_path("pkg/http_client.py")


def test_signals_on_fixed_input() -> None:
    q = query("http retry", as_of=AS_OF)
    a = cand(1, "pkg/http.py", fused=1000, bm25=4000, dense=500, graph_rank=1000, symbol="retry")
    b = cand(2, "pkg/other.py", fused=500, bm25=1000, graph_rank=0)
    stage = ScoringStage(recency=lambda paths: {"pkg/http.py": AS_OF - 3600})
    res = stage.execute(cset([b, a], q), PipelineContext("q"))
    first, second = res.output.candidates
    assert first.path == "pkg/http.py"
    assert dict(first.signals) == {
        "fused": 1000,
        "lexical": 1000,
        "semantic": 500,
        "graph": 1000,
        "path": 500,
        "name": 500,
        "recency": 1000,
    }
    # 300 + 150 + 50 + 150 + 60 + 50 + 80
    assert first.score == 840
    assert dict(second.signals)["lexical"] == 250 and dict(second.signals)["recency"] == 0
    assert second.score == (300 * 500 + 150 * 250) // 1000


def test_without_history_warns_and_ties_break_by_path() -> None:
    q = query("nothing", as_of=AS_OF)
    res = ScoringStage().execute(cset([cand(2, "b.py"), cand(1, "a.py")], q), PipelineContext("q"))
    assert [c.path for c in res.output.candidates] == ["a.py", "b.py"]
    assert res.warnings


def test_code_ranks_above_tests_for_a_code_question() -> None:
    """A test file repeats the code's words (it calls the code and asserts on it), so
    by text alone it often outranks the code. For a question about the code, the code
    comes first; a question about tests keeps the tests' own rank."""
    stage = ScoringStage()
    code = cand(1, "pkg/retry.py", fused=800, bm25=3000, symbol="backoff")
    test = cand(2, "tests/test_retry.py", fused=1000, bm25=4000, symbol="test_backoff")
    res = stage.execute(cset([test, code], query("retry backoff delay")), PipelineContext("q"))
    assert [c.path for c in res.output.candidates] == ["pkg/retry.py", "tests/test_retry.py"]
    asked = stage.execute(
        cset([test, code], query("tests for retry backoff")), PipelineContext("q")
    )
    assert asked.output.candidates[0].path == "tests/test_retry.py"
