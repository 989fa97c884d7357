from __future__ import annotations

from codelibrarian.query.rerank import SAME_FILE_PENALTY, RerankingStage, diversify
from codelibrarian.query.types import PipelineContext

from .fakes import cand, cset, query


def test_diversify_penalises_repeats_and_caps_per_file() -> None:
    cands = (
        cand(1, "a.py", 900, start_line=1),
        cand(2, "a.py", 880, start_line=10),
        cand(3, "a.py", 870, start_line=20),
        cand(4, "a.py", 860, start_line=30),
        cand(5, "b.py", 800),
    )
    out = diversify(cands, limit=10, max_per_file=3, files_factor=2)
    assert [(c.chunk_id, c.score) for c in out] == [
        (1, 900),
        (5, 800),
        (2, 880 - SAME_FILE_PENALTY),
        (3, 870 - 2 * SAME_FILE_PENALTY),
    ]


def test_diversify_keeps_best_files_only() -> None:
    cands = tuple(cand(i, f"f{i}.py", 1000 - i) for i in range(1, 8))
    out = diversify(cands, limit=2, max_per_file=3, files_factor=2)
    assert [c.path for c in out] == ["f1.py", "f2.py", "f3.py", "f4.py"]


def test_without_provider_records_trace_and_stays_deterministic() -> None:
    res = RerankingStage().execute(
        cset([cand(1, "b.py", 5), cand(2, "a.py", 5)]), PipelineContext("q")
    )
    assert [c.path for c in res.output.candidates] == ["a.py", "b.py"]
    assert [t.code for t in res.traces] == ["unverified_by_trace(provider_unavailable)"]


def test_llm_reorders_files_it_names() -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return "3, 1"

    cands = [cand(1, "a.py", 900), cand(2, "b.py", 800), cand(3, "c.py", 700)]
    res = RerankingStage(llm=llm).execute(cset(cands, query("x")), PipelineContext("q"))
    assert [c.path for c in res.output.candidates] == ["c.py", "a.py", "b.py"]
    assert "1. a.py" in prompts[0] and "Task: x" in prompts[0]
    assert res.traces == ()
    assert any(e.type == "llm" for e in res.evidence)
    assert dict(res.resources)["api_calls"] == 1


def test_llm_garbage_keeps_order_with_warning() -> None:
    cands = [cand(1, "a.py", 900), cand(2, "b.py", 800)]
    res = RerankingStage(llm=lambda p: "no idea, 42").execute(cset(cands), PipelineContext("q"))
    assert [c.path for c in res.output.candidates] == ["a.py", "b.py"]
    assert res.warnings


def test_provider_failure_degrades_with_trace() -> None:
    from codelibrarian.errors import ProviderError

    def llm(prompt: str) -> str:
        raise ProviderError("model crashed")

    cands = [cand(1, "a.py", 900), cand(2, "b.py", 800)]
    res = RerankingStage(llm=llm).execute(cset(cands), PipelineContext("q"))
    assert [c.path for c in res.output.candidates] == ["a.py", "b.py"]
    assert [t.code for t in res.traces] == ["unverified_by_trace(provider_error)"]
    assert res.warnings == ("LLM rerank failed (provider_error); deterministic order kept",)
