"""The executor: partial results, cancellation, cache, observers, reports."""

from __future__ import annotations

from typing import Any

import pytest

from codelibrarian.errors import UsageError
from codelibrarian.query.capabilities import FEATURES
from codelibrarian.query.pipeline import MemoryStageCache, QueryPipeline, build_pipeline
from codelibrarian.query.report import ErrorLocalizer, ProgressReporter
from codelibrarian.query.scoring import ScoringStage
from codelibrarian.query.types import (
    STAGE_NAMES,
    CancellationToken,
    CandidateSet,
    PipelineContext,
    QueryCancelled,
    StageResult,
)

from .fakes import FakeStore, query

STORE = FakeStore(
    {
        "pkg/config.py": ["def load config toml", "def save config"],
        "pkg/paths.py": ["def find root"],
        "pkg/http.py": ["retry backoff"],
    },
    graphs={"import": [("pkg/config.py", "pkg/paths.py", 1)]},
)


class Exploding(ScoringStage):
    def execute(self, input: CandidateSet, context: PipelineContext) -> StageResult[CandidateSet]:
        raise RuntimeError("scoring blew up")


class Recorder:
    def __init__(self, cancel_at: str | None = None, token: CancellationToken | None = None):
        self.events: list[tuple[str, str]] = []
        self.cancel_at = cancel_at
        self.token = token

    def on_stage_start(self, stage: str, input_summary: str, estimate: Any) -> None:
        self.events.append(("start", stage))

    def on_stage_progress(self, stage: str, permille: int, message: str) -> None:
        self.events.append(("progress", stage))
        if stage == self.cancel_at and self.token is not None:
            self.token.cancel("user pressed ^C")

    def on_stage_complete(self, stage: str, result: Any, output_summary: str) -> None:
        self.events.append(("complete", stage))
        if stage == self.cancel_at and self.token is not None:
            self.token.cancel("stop after this stage")

    def on_stage_error(self, stage: str, error: BaseException, localized: Any = None) -> None:
        self.events.append(("error", stage))

    def on_stage_skipped(self, stage: str, reason: str) -> None:
        self.events.append(("skipped", stage))


def pipeline(**kw: Any) -> QueryPipeline:
    return build_pipeline(STORE, **kw)


def test_full_run_completes_with_all_stages() -> None:
    rec = Recorder()
    result = pipeline().run(query("load config"), observer=rec)
    assert result.status == "completed" and result.success
    assert [r.stage for r in result.runs] == list(STAGE_NAMES)
    assert [e for e in rec.events if e[0] == "complete"] == [("complete", s) for s in STAGE_NAMES]
    assert result.response is not None
    assert result.response.paths[0] == "pkg/config.py"
    assert result.report.progress_percent == 100
    assert result.report.overall_status == "completed"
    # every contributing stage is cited in the response
    assert set(result.response.stages) >= {"retrieval", "scoring", "synthesis"}


def test_failed_stage_gives_partial_result_with_code() -> None:
    p = pipeline()
    stages = [Exploding() if s.name == "scoring" else s for s in p.stages]
    broken = QueryPipeline(stages)
    rec = Recorder()
    result = broken.run(query("load config"), observer=rec)
    assert result.status == "partial" and not result.success
    assert result.failed_stages == ("scoring",)
    assert "unverified_by_trace(stage_failed:scoring)" in [t.code for t in result.traces]
    assert result.response is not None and result.response.packs  # later stages still ran
    assert "unverified_by_trace(stage_failed:scoring)" in [t.code for t in result.response.traces]
    assert ("error", "scoring") in rec.events
    err = result.run_of("scoring").error
    assert err is not None and err.failed_stage == "scoring"
    assert "unexpected RuntimeError" in err.root_cause
    assert err.recovery_options[0].action == "skip"
    diag = result.report.stage("scoring")
    assert diag.status == "failed" and diag.error is not None and diag.error.recoverable


def test_failed_retrieval_still_returns_an_empty_response() -> None:
    store = FakeStore({"a.py": ["x"]})
    p = build_pipeline(store)
    store.fail_search = True  # breaks after capability detection said FTS works
    result = p.run(query("x"))
    assert result.status == "partial"
    assert result.response is not None and result.response.packs == ()
    assert "unverified_by_trace(stage_failed:retrieval)" in [t.code for t in result.traces]


def test_cancellation_between_stages_stops_work() -> None:
    token = CancellationToken()
    rec = Recorder(cancel_at="graph_expansion", token=token)
    result = pipeline().run(query("load config"), observer=rec, cancel=token)
    assert result.status == "cancelled" and result.response is None
    started = [s for kind, s in rec.events if kind == "start"]
    assert "scoring" not in started and "synthesis" not in started
    assert result.run_of("scoring").status == "cancelled"
    assert "unverified_by_trace(cancelled)" in [t.code for t in result.traces]


def test_cancellation_inside_a_stage() -> None:
    token = CancellationToken()
    rec = Recorder(cancel_at="retrieval", token=token)  # cancels at the first progress tick
    result = pipeline().run(query("load config"), observer=rec, cancel=token)
    assert result.status == "cancelled"
    run = result.run_of("retrieval")
    assert run.status == "cancelled" and run.result is None
    assert [s for kind, s in rec.events if kind == "start"] == ["retrieval"]


def test_token_raises() -> None:
    token = CancellationToken()
    token.raise_if_cancelled("x")
    token.cancel()
    with pytest.raises(QueryCancelled):
        token.raise_if_cancelled("x")


def test_stage_cache_serves_cacheable_stages() -> None:
    cache = MemoryStageCache(8)
    p = build_pipeline(STORE, cache=cache, cache_namespace="g1")
    first = p.run(query("load config"), cache=cache)
    searches = len([c for c in STORE.calls if c.startswith("search:")])
    second = p.run(query("load config"), cache=cache)
    assert len([c for c in STORE.calls if c.startswith("search:")]) == searches
    assert second.run_of("retrieval").status == "cached"
    assert second.run_of("scoring").status == "completed"  # not cacheable
    assert first.response is not None and second.response is not None
    assert first.response.packs == second.response.packs
    assert dict(second.report.stage("retrieval").resources)["cache_hits"] == 1


def test_features_skip_stages() -> None:
    result = build_pipeline(STORE, features={"bm25"}).run(query("load config"))
    statuses = {r.stage: r.status for r in result.runs}
    assert statuses == {
        "retrieval": "completed",
        "graph_expansion": "skipped",
        "scoring": "skipped",
        "reranking": "skipped",
        "defeater_check": "skipped",
        "synthesis": "completed",
    }
    assert result.response is not None and result.response.paths == ("pkg/config.py",)
    with pytest.raises(UsageError):
        build_pipeline(STORE, features={"bm25", "magic"})
    assert set(FEATURES) == {"bm25", "dense", "graph", "scoring", "rerank", "defeaters"}


def test_query_id_is_deterministic_and_results_repeat() -> None:
    a = pipeline().run(query("load config"))
    b = pipeline().run(query("load config"))
    assert a.query_id == b.query_id
    assert a.response is not None and b.response is not None
    assert a.response.to_dict() == b.response.to_dict()
    c = pipeline().run(query("load config", as_of=1))
    assert c.query_id != a.query_id


def test_reporter_subscribe_and_unsubscribe_with_fixed_clock() -> None:
    ticks = iter(range(0, 10**12, 2_000_000))  # every reading advances 2 ms
    reporter = ProgressReporter("q", "intent", STAGE_NAMES, clock_ns=lambda: next(ticks))
    seen: list[int] = []
    unsubscribe = reporter.subscribe(lambda r: seen.append(r.progress_percent))
    pipeline().run(query("load config"), reporter=reporter)
    assert seen and seen == sorted(seen) and seen[-1] == 100
    n = len(seen)
    unsubscribe()
    reporter.finish("completed")
    assert len(seen) == n
    report = reporter.get_status()
    assert all(s.duration_ms is not None and s.duration_ms >= 0 for s in report.stages)
    assert report.to_dict()["stages"][0]["io"]["input_summary"].startswith("intent of")


def test_error_localizer_root_causes() -> None:
    loc = ErrorLocalizer()
    import sqlite3

    e = loc.localize(sqlite3.DatabaseError("file is not a database"), "retrieval", "q")
    assert e.root_cause == "the index could not be read"
    assert "librarian index" in e.suggestions[0]
    assert [o.action for o in e.recovery_options] == ["fallback", "retry", "abort"]
    c = loc.localize(QueryCancelled("scoring"), "scoring", "q")
    assert c.code == "cancelled" and not c.recoverable


def test_resolve_llm_needs_configuration(tmp_path: Any) -> None:
    from codelibrarian.query.pipeline import resolve_llm

    completer, trace = resolve_llm(tmp_path, env={})
    assert completer is None and trace is not None
    assert trace.code == "unverified_by_trace(provider_unavailable)"
    assert "LIBRARIAN_LLM_PROVIDER" in trace.detail


def test_llm_rerank_through_a_provider_client() -> None:
    from codelibrarian.providers import FakeClient
    from codelibrarian.query.pipeline import completer_for

    client = FakeClient(responder=lambda messages, schema: "2, 1")
    p = build_pipeline(STORE, llm=completer_for(client))
    result = p.run(query("config root"))
    assert result.response is not None
    assert client.calls, "the reranker asked the provider"
    assert "unverified_by_trace(provider_unavailable)" not in [t.code for t in result.traces]
    assert any(e.type == "llm" for _, e in result.response.evidence)


def test_ctrl_c_cancels_the_query_cooperatively() -> None:
    import signal

    from codelibrarian.cli.query_cmds import _cancel_on_interrupt

    token = CancellationToken()
    before = signal.getsignal(signal.SIGINT)
    with _cancel_on_interrupt(token):
        signal.raise_signal(signal.SIGINT)  # no KeyboardInterrupt inside
        assert token.cancelled and token.reason == "interrupted (Ctrl-C)"
        result = pipeline().run(query("load config"), cancel=token)
    assert result.status == "cancelled" and result.response is None
    assert signal.getsignal(signal.SIGINT) is before
