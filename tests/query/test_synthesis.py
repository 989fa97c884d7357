from __future__ import annotations

from codelibrarian.errors import UnverifiedByTrace
from codelibrarian.query.synthesis import SynthesisStage, build_packs, confidence_of
from codelibrarian.query.types import CheckedSet, PipelineContext, StageEvidence

from .fakes import cand, query


def checked(cands: list, **q: object) -> CheckedSet:  # type: ignore[type-arg]
    return CheckedSet(query("x", **q), tuple(cands), ())  # type: ignore[arg-type]


def test_packs_group_by_file_in_rank_order_with_sorted_citations() -> None:
    cands = (
        cand(1, "a.py", 900, start_line=20, symbol="late"),
        cand(2, "b.py", 800),
        cand(3, "a.py", 700, start_line=5, symbol="early"),
    )
    packs, left = build_packs(cands, limit=10, budget=None)
    assert [(p.rank, p.path, p.score, p.tokens) for p in packs] == [
        (1, "a.py", 900, 20),
        (2, "b.py", 800, 10),
    ]
    assert [c.symbol for c in packs[0].citations] == ["early", "late"]
    assert str(packs[0].citations[0]) == "a.py:5-7 (early)"
    assert left == 0


def test_budget_trims_then_leaves_out() -> None:
    cands = (
        cand(1, "a.py", 900, tokens=50),
        cand(2, "a.py", 850, tokens=50, start_line=9),
        cand(3, "b.py", 800, tokens=60),
        cand(4, "c.py", 700, tokens=10),
    )
    packs, left = build_packs(cands, limit=10, budget=70)
    # a.py (100) does not fit whole: its best chunk alone (50); b.py (60) no; c.py (10) yes
    assert [(p.path, p.tokens) for p in packs] == [("a.py", 50), ("c.py", 10)]
    assert left == 1
    assert sum(p.tokens for p in packs) <= 70


def test_confidence_formula() -> None:
    cands = (cand(1, "a.py", 800, bm25=10, graph_rank=5), cand(2, "b.py", 600, bm25=3))
    packs, _ = build_packs(cands, limit=10, budget=None)
    # top 800 -> 560; 1 of 2 packs backed by two signals -> 500 x 0.3 = 150
    assert confidence_of(packs, cands, 0) == 710
    assert confidence_of(packs, cands, 2) == 410
    assert confidence_of((), cands, 0) == 0


def test_response_carries_evidence_traces_and_no_summary_without_provider() -> None:
    ctx = PipelineContext("q_fixed")
    ctx.evidence.append(("retrieval", StageEvidence.of("retrieval", "found")))
    ctx.traces.append(UnverifiedByTrace("stage_failed:scoring", "boom"))
    stage = SynthesisStage(summarize=True)
    res = stage.execute(checked([cand(1, "a.py", 500, bm25=1, graph_rank=1)]), ctx)
    r = res.output
    assert r.query_id == "q_fixed"
    assert r.stages == ("retrieval", "synthesis")
    assert r.summary is None
    codes = [t.code for t in r.traces]
    assert codes == [
        "unverified_by_trace(stage_failed:scoring)",
        "unverified_by_trace(provider_unavailable)",
    ]
    assert r.confidence == (700 * 500 + 300 * 1000) // 1000 - 150


def test_summary_with_provider() -> None:
    stage = SynthesisStage(summarize=True, llm=lambda p: " It is in a.py. ")
    res = stage.execute(checked([cand(1, "a.py", 500)]), PipelineContext("q"))
    assert res.output.summary == "It is in a.py."
    assert res.traces == ()
