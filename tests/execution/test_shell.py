"""The shell around the core, on a real git repository with a real index and store."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.errors import NotFound, RunStateError, UsageError
from codelibrarian.execution.ledger import read_entries
from codelibrarian.execution.store import load_traces
from codelibrarian.workspace.state import State

from .conftest import make_service
from .library import compiled
from .sim import op, s

TASK = "add returns the wrong result: add(2, 3) gives -1"


def _ledger(repo: Path, run_id: str) -> list[dict[str, Any]]:
    entries, _ = read_entries(repo / ".librarian" / "runs" / run_id / "ledger.jsonl")
    return entries


def _work(service: Any, run_id: str, answers: dict[str, Any], limit: int = 20) -> Any:
    """Play the agent: take each handed-out step, submit the scripted output."""
    view = None
    for _ in range(limit):
        view, docs = service.next(run_id)
        if not docs:
            return view
        for d in docs:
            value = answers[d["step"]]
            out = value(d) if callable(value) else value
            view = service.submit(run_id, d["step"], out)
    return view


def test_an_agent_driven_run_with_builtin_steps(buggy_repo: Path) -> None:
    tree = op("sequence", s("tp_change_impact", files=["calc/ops.py"]), s("test_agent"),
              s("test_noop"))  # fmt: skip
    service = make_service(buggy_repo)
    view = service.start(compiled(tree), TASK)
    assert view.status == "running" and [p["step"] for p in view.pending] == ["test_agent"]
    _, (doc,) = service.next(view.run_id)
    assert doc["role"] == "Thinker" and doc["output_schema"]["required"] == ["conclusion"]
    assert doc["context"]["tokens"] <= doc["context"]["budget"] == 400
    final = service.submit(view.run_id, "test_agent", {"conclusion": "add subtracts"})
    assert final.status == "succeeded"
    impact = final.outputs["tp_change_impact"]
    assert impact["changed"] == ["calc/ops.py"]
    assert "calc/cli.py" in [a["path"] for a in impact["affected"]]
    assert impact["tests"] == ["tests/test_ops.py"]
    assert final.outputs["test_agent"] == {"conclusion": "add subtracts"}
    check = service.verify(view.run_id)
    assert check.ok and check.outputs_checked == 3
    kinds = [e["kind"] for e in _ledger(buggy_repo, view.run_id)]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("step_result") == 3 and kinds.count("primitive_dispatch") == 3


def test_the_ledger_holds_no_paths_task_or_content_and_outputs_are_private(
    buggy_repo: Path,
) -> None:
    tree = op("sequence", s("tp_change_impact", files=["calc/ops.py"]), s("test_agent"))
    service = make_service(buggy_repo)
    view = service.start(compiled(tree), TASK)
    service.submit(view.run_id, "test_agent", {"conclusion": "the subtraction in add"})
    folder = buggy_repo / ".librarian" / "runs" / view.run_id
    text = (folder / "ledger.jsonl").read_text()
    for private in ("calc/ops.py", "calc/cli.py", "add returns", "subtraction", "def add"):
        assert private not in text
    for path in (folder / "run.json", *folder.glob("steps/*/*")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_violation_is_evidence_and_a_retry_hands_the_step_back(buggy_repo: Path) -> None:
    tree = op("retry", s("test_agent"), attempts=2, backoff="constant", base_delay_ms=0)
    service = make_service(buggy_repo)
    view = service.start(compiled(tree), TASK)
    after = service.submit(view.run_id, "test_agent", {"conclusion": ""})
    assert after.status == "running" and after.pending[0]["dispatch"] == "test_agent.2"
    _, (doc,) = service.next(view.run_id)
    assert doc["attempt"] == 2
    assert any("output.conclusion" in r for r in doc["previous_violations"])
    done = service.submit(view.run_id, "test_agent", {"conclusion": "fixed"})
    assert done.status == "succeeded"
    entries = _ledger(buggy_repo, view.run_id)
    results = [(e["dispatch"], e["status"]) for e in entries if e["kind"] == "step_result"]
    assert results == [("test_agent.1", "violated"), ("test_agent.2", "success")]
    post = [e for e in entries if e["kind"] == "contract_check" and e["phase"] == "postcondition"]
    assert [p["satisfied"] for p in post] == [False, True]
    assert post[0]["violations"] == ["named:predicate_false"]


def test_submit_is_idempotent_and_refuses_other_steps(buggy_repo: Path) -> None:
    service = make_service(buggy_repo)
    view = service.start(compiled(op("sequence", s("test_agent"), s("test_noop"))), TASK)
    with pytest.raises(UsageError, match="not waiting"):
        service.submit(view.run_id, "test_noop", {"ok": True})
    with pytest.raises(UsageError, match="JSON object"):
        service.submit(view.run_id, "test_agent", ["not", "an", "object"])
    out = {"conclusion": "once"}
    first = service.submit(view.run_id, "test_agent", out)
    again = service.submit(view.run_id, "test_agent", out)
    assert first.status == again.status == "succeeded" and again.already_recorded
    results = [e for e in _ledger(buggy_repo, view.run_id) if e["kind"] == "step_result"]
    assert [e["step"] for e in results] == ["test_agent", "test_noop"]
    with pytest.raises(UsageError, match="not waiting"):
        service.submit(view.run_id, "test_agent", {"conclusion": "twice"})


def test_llm_steps_are_matched_by_capability(buggy_repo: Path) -> None:
    calls: list[str] = []
    service = make_service(
        buggy_repo, calls=calls, answer=lambda _u, _s: {"conclusion": "A", "confidence": 700}
    )
    view = service.start(compiled(op("sequence", s("test_think"), s("test_noop"))), TASK)
    assert view.status == "succeeded" and len(calls) == 1
    assert "Context pack:" in calls[0] and TASK in calls[0]
    entries = _ledger(buggy_repo, view.run_id)
    kinds = [e["kind"] for e in entries]
    assert kinds.index("capability_required") < kinds.index("capability_matched")
    matched = next(e for e in entries if e["kind"] == "capability_matched")
    assert (matched["provider"], matched["model"]) == ("fake", "fake-model")
    required = next(e for e in entries if e["kind"] == "capability_required")
    assert required["required"] == ["reasoning"]


def test_an_llm_step_without_a_model_degrades_to_the_agent(buggy_repo: Path) -> None:
    from codelibrarian.execution.models import ModelAccess
    from codelibrarian.providers.registry import ProviderRegistry

    service = make_service(buggy_repo)
    service.model_access = lambda provider: ModelAccess(ProviderRegistry(env={}), (), provider)
    view = service.start(compiled(op("sequence", s("test_think"))), TASK)
    assert view.status == "running"
    _, (doc,) = service.next(view.run_id)
    assert doc["degraded"].startswith("unverified_by_trace(provider_unavailable)")
    done = service.submit(view.run_id, "test_think", {"conclusion": "B", "confidence": 10})
    assert done.status == "succeeded"
    # unattended, the same step cannot be worked: it fails with the reason
    blocked = service.start(compiled(op("sequence", s("test_think"))), TASK, provider="none")
    assert blocked.status == "failed"
    result = next(e for e in _ledger(buggy_repo, blocked.run_id) if e["kind"] == "step_result")
    assert result["codes"] == ["provider_unavailable"]


def test_escalation_waits_for_a_human(buggy_repo: Path) -> None:
    tree = op("quorum", s("test_agent", "a1"), s("test_agent", "a2"), s("test_agent", "a3"))
    service = make_service(buggy_repo)
    view = service.start(compiled(tree), TASK)
    assert len(view.pending) == 3
    for sid, value in (("a1", "x"), ("a2", "y"), ("a3", "z")):
        view = service.submit(view.run_id, sid, {"conclusion": value})
    assert view.status == "awaiting_human" and view.awaiting == {
        "kind": "escalate", "node": "quorum#1", "reason": "vote_tied"
    }  # fmt: skip
    done = service.decide(view.run_id, approved=True, note="x is right, ship it")
    assert done.status == "succeeded" and done.outputs["quorum#1"]["method"] == "human"
    decision = next(e for e in _ledger(buggy_repo, view.run_id) if e["kind"] == "human_decision")
    assert decision["approved"] is True and len(decision["note"]) == 32
    with pytest.raises(UsageError, match="not waiting for a human"):
        service.decide(view.run_id, approved=False)


def test_productive_compositions_need_approval(buggy_repo: Path) -> None:
    service = make_service(buggy_repo)
    tree = op("loop", s("test_agent"), until="steps.test_agent.output.score >= 5")
    with pytest.raises(UsageError, match="productive") as exc:
        service.start(compiled(tree), TASK)
    assert "--approve" in (exc.value.hint or "")
    view = service.start(compiled(tree), TASK, approve=True)
    assert view.status == "running"
    view = service.submit(view.run_id, "test_agent", {"conclusion": "c", "score": 7})
    assert view.status == "succeeded"


def test_status_reads_without_writing_and_resume_repeats_nothing(buggy_repo: Path) -> None:
    service = make_service(buggy_repo)
    tree = op("sequence", s("test_noop"), s("test_agent"), s("test_noop", "again"))
    view = service.start(compiled(tree), TASK)
    ledger = buggy_repo / ".librarian" / "runs" / view.run_id / "ledger.jsonl"
    before = ledger.read_bytes()
    status = make_service(buggy_repo).status(view.run_id)
    assert status.status == "running" and ledger.read_bytes() == before
    resumed = make_service(buggy_repo).resume(view.run_id)
    assert resumed.status == "running"
    done = make_service(buggy_repo).submit(view.run_id, "test_agent", {"conclusion": "ok"})
    assert done.status == "succeeded"
    dispatched = [e["dispatch"] for e in _ledger(buggy_repo, view.run_id)
                  if e["kind"] == "primitive_dispatch"]  # fmt: skip
    assert dispatched == ["test_noop.1", "test_agent.1", "again.1"]


def test_a_tampered_ledger_is_detected_and_not_traced(buggy_repo: Path) -> None:
    service = make_service(buggy_repo)
    good = service.start(compiled(op("sequence", s("test_noop"))), TASK)
    bad = service.start(compiled(op("sequence", s("test_noop"), s("test_noop", "b"))), TASK)
    path = buggy_repo / ".librarian" / "runs" / bad.run_id / "ledger.jsonl"
    lines = path.read_text().splitlines()
    entry = json.loads(lines[3])
    entry["at"] += 1
    lines[3] = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n")
    check = service.verify(bad.run_id)
    assert not check.ok and check.broken_at == 3 and "hash" in check.reason
    with pytest.raises(RunStateError):
        service.resume(bad.run_id)
    loaded = load_traces(State(buggy_repo))
    assert [t.run_id for t in loaded.traces] == [good.run_id] and loaded.skipped == 1
    assert loaded.skipped_runs == (bad.run_id,)  # what planning reports as runs_skipped
    trace = loaded.traces[0]
    assert trace.status == "succeeded" and trace.composition_id == "test_flow"
    assert [(st.step_id, st.outcome, st.attempts) for st in trace.steps] == [
        ("test_noop", "success", 1)
    ]
    out = next((buggy_repo / ".librarian/runs" / good.run_id / "steps").glob("*/output.json"))
    out.write_text('{"ok": false}\n')
    assert service.verify(good.run_id).outputs_bad == ("test_noop.1",)


def test_traces_merge_retries_and_sort_by_start(buggy_repo: Path) -> None:
    service = make_service(buggy_repo)
    tree = op("retry", s("test_agent"), attempts=3, backoff="constant", base_delay_ms=0)
    first = service.start(compiled(tree), TASK)
    service.submit(first.run_id, "test_agent", {"conclusion": ""})
    service.submit(first.run_id, "test_agent", {"conclusion": "ok"})
    second = service.start(compiled(op("sequence", s("test_noop"))), TASK)
    waiting = service.start(compiled(op("sequence", s("test_noop"), s("test_agent"))), TASK)
    traces = load_traces(State(buggy_repo)).traces
    assert [t.run_id for t in traces] == [first.run_id, second.run_id, waiting.run_id]
    unfinished = traces[2]
    assert (unfinished.status, unfinished.finished_at) == ("running", None)
    # the agent step is still out: it has no outcome yet, so it is not in the trace
    assert [(st.step_id, st.outcome) for st in unfinished.steps] == [("test_noop", "success")]
    (step,) = traces[0].steps
    assert (step.outcome, step.attempts) == ("success", 2)
    assert traces[0].finished_at is not None and traces[0].pattern_id is None


def test_unknown_run_and_unknown_composition(buggy_repo: Path) -> None:
    service = make_service(buggy_repo)
    with pytest.raises(NotFound, match="no workflow run"):
        service.status("20260101-000000-abcdef")
    with pytest.raises(NotFound) as exc:
        service.start("tc_root_cause_recovry", TASK)
    assert "tc_root_cause_recovery" in (exc.value.hint or "")


def test_step_outputs_reach_the_history_before_the_next_context(buggy_repo: Path) -> None:
    from codelibrarian.sources.sessions import load_session_entries

    tree = op("sequence", s("test_noop"), s("test_noop", "b"), s("test_agent"))
    service = make_service(buggy_repo)
    view = service.start(compiled(tree), TASK)
    sessions = State(buggy_repo).sessions_dir
    mine = [e for e in load_session_entries(sessions) if e.session == f"run-{view.run_id}"]
    assert len(mine) == 2  # both builtin outputs, written once, before the handout
    service.submit(view.run_id, "test_agent", {"conclusion": "done"})
    mine = [e for e in load_session_entries(sessions) if e.session == f"run-{view.run_id}"]
    assert len(mine) == 3 and "done" in mine[-1].text
