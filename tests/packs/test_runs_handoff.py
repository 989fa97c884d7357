"""The run store: resources, memory, journal and handoff packages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.errors import NotFound, PackValidationError, UsageError
from codelibrarian.packs.runs import RunStore, new_run_id, resolve_resource
from codelibrarian.workspace.files import content_hash
from codelibrarian.workspace.state import State
from tests.packs.conftest import CRITERIA, TASK

AS_OF = 1_800_000_000


def test_resource_uris_resolve_inside_the_run_only(repo: Path) -> None:
    with Librarian(repo) as lib:
        result = lib.pack("Planner", TASK, run_id="res", as_of=AS_OF)
    assert resolve_resource(repo, result.uri) == result.path
    journal = resolve_resource(repo, "resources://runs/res/journal.md")
    assert journal.read_text("utf-8").startswith("# Run res")
    for bad in (
        "resources://runs/res/../../secret",
        "resources://runs/../index.db",
        "file:///etc/passwd",
        "resources://runs/res",
        "resources://runs/re s/journal.md",
    ):
        with pytest.raises(UsageError):
            resolve_resource(repo, bad)
    with pytest.raises(NotFound):
        resolve_resource(repo, "resources://runs/res/context/Verifier.lcp.json")


def test_new_run_ids_are_stable_and_valid() -> None:
    run = new_run_id(AS_OF, "Planner\ngoal")
    assert run == new_run_id(AS_OF, "Planner\ngoal")
    assert run.startswith("20270115-080000-") and len(run) == 22
    assert run != new_run_id(AS_OF, "Planner\nother goal")


def test_pack_without_run_starts_one(repo: Path) -> None:
    with Librarian(repo) as lib:
        result = lib.pack("Planner", TASK, as_of=AS_OF)
        assert result.run_id == new_run_id(AS_OF, f"Planner\n{TASK}")
        assert [r.run_id for r in lib.runs()] == [result.run_id]


def test_handoff_package_and_journal(repo: Path) -> None:
    with Librarian(repo) as lib:
        impl = lib.pack("Implementer", TASK, acceptance=CRITERIA, run_id="team", as_of=AS_OF)
        hand = lib.handoff(
            "team",
            "Implementer",
            "Verifier",
            notes=["post() added", "post() added"],
            risks=["retries may double-send a POST"],
            evidence=["pytest -q tests/test_http_client.py: 1 passed"],
            as_of=AS_OF + 60,
        )
        verifier = lib.pack("Verifier", TASK, acceptance=CRITERIA, run_id="team", as_of=AS_OF + 120)
        detail = lib.run("team")
    path = repo / ".librarian/runs/team/handoff/Implementer→Verifier.json"
    assert hand.path == path
    assert hand.uri == "resources://runs/team/handoff/Implementer→Verifier.json"
    pkg = hand.package
    assert pkg.context_pack_uri == impl.uri
    assert pkg.task_id == impl.pack.task_id
    assert pkg.notes == ["post() added"]  # de-duplicated
    assert pkg.risks[0] == "retries may double-send a POST"
    assert set(impl.pack.risk_notes) <= set(pkg.risks)
    [ref] = pkg.diff_refs
    assert ref.path == "src/app/http_client.py" and ref.status == "modified"
    assert ref.added == 3 and ref.removed == 0
    assert ref.rev == content_hash((repo / ref.path).read_bytes())
    assert json.loads(path.read_text("utf-8"))["from_agent"] == "Implementer"
    journal = (repo / ".librarian/runs/team/journal.md").read_text("utf-8")
    panel = journal.split("### Team Panel", 1)[1]
    lines = [ln for ln in panel.splitlines() if ln.startswith("- ")]
    assert len(lines) == 3
    assert "**Implementer** received pack" in lines[0]
    assert "**Implementer → Verifier** handoff" in lines[1] and "post() added" in lines[1]
    assert "**Verifier** received pack" in lines[2]
    assert detail.summary.agents == ["Implementer", "Verifier"]
    assert detail.summary.handoffs == ["Implementer→Verifier"]
    assert [h.to_agent for h in detail.handoffs] == ["Verifier"]
    memory = RunStore(State(repo)).memory("team")
    assert memory.context_pack_uri == {
        "Implementer": impl.uri,
        "Verifier": verifier.uri,
    }


def test_journal_keeps_other_sections(repo: Path) -> None:
    store = RunStore(State(repo).ensure())
    store.run_dir("j").mkdir(parents=True)
    store.journal_path("j").write_text(
        "# Run j\n\n### Team Panel\n\n- first\n\n### Spikes\n\n- spike A\n", encoding="utf-8"
    )
    store.journal_append("j", "second")
    text = store.journal_path("j").read_text("utf-8")
    assert text == "# Run j\n\n### Team Panel\n\n- first\n- second\n\n### Spikes\n\n- spike A\n"
    store.journal_path("j").write_text("# Notes\n", encoding="utf-8")
    store.journal_append("j", "third")
    assert store.journal_path("j").read_text("utf-8").endswith("### Team Panel\n\n- third\n")


def test_handoff_errors(repo: Path) -> None:
    with Librarian(repo) as lib:
        with pytest.raises(NotFound, match="no run"):
            lib.handoff("nope", "Implementer", "Verifier")
        lib.pack("Planner", TASK, run_id="h", as_of=AS_OF)
        with pytest.raises(UsageError, match="two different agents"):
            lib.handoff("h", "Planner", "Planner")
        with pytest.raises(UsageError, match="unknown agent"):
            lib.handoff("h", "Planner", "Boss")
        done = lib.handoff("h", "Planner", "Implementer", as_of=AS_OF)
        done.path.write_text(done.path.read_text("utf-8").replace('"Planner"', '"Boss"'))
        with pytest.raises(PackValidationError, match="field from_agent"):
            lib.run("h")
        with pytest.raises(NotFound):
            lib.run("missing")
        with pytest.raises(UsageError, match="invalid run id"):
            lib.pack("Planner", TASK, run_id="../x")


def test_decision_rung_anchors_handoffs_and_other_packs(repo: Path) -> None:
    with Librarian(repo) as lib:
        impl = lib.pack("Implementer", TASK, run_id="sup", as_of=AS_OF)
        hand = lib.handoff("sup", "Implementer", "Supervisor", notes=["done"], as_of=AS_OF)
        sup = lib.pack("Supervisor", TASK, run_id="sup", as_of=AS_OF)
    rung = sup.pack.ladder.rungs[4]
    assert rung.ran and rung.reason == "required_for_role"
    decisions = {a.ref: a for a in sup.pack.anchors if a.kind == "decision"}
    assert hand.uri in decisions and impl.uri in decisions
    assert decisions[hand.uri].path == ".librarian/runs/sup/handoff/Implementer→Supervisor.json"
    assert decisions[impl.uri].rev == content_hash(impl.path.read_bytes())


def test_decision_rung_points_at_recorded_history(repo: Path) -> None:
    with Librarian(repo) as lib:
        lib.record_learning(
            "retry backoff in HttpClient", "cap the backoff at 30 s", as_of=AS_OF - 9
        )
        lib.record_session("s1", "implemented retry backoff for get", as_of=AS_OF - 9)
        sup = lib.pack("Supervisor", TASK, run_id="hist", as_of=AS_OF)
    decisions = {a.ref: a for a in sup.pack.anchors if a.kind == "decision"}
    learning = decisions[".librarian/sessions/learnings.jsonl#Learning l1"]
    assert learning.rev == content_hash((repo / learning.path).read_bytes())
    assert ".librarian/sessions/history.jsonl#Session s1" in decisions
    summaries = {s.ref: s.summary for s in sup.pack.micro_summaries}
    assert "cap the backoff at 30 s" in summaries[learning.ref]


def _write_many(root: str, text: str, agent: str, times: int) -> None:
    from codelibrarian.packs.lcp import parse_pack

    store = RunStore(State(Path(root)))
    pack = parse_pack(text, "<test>").model_copy(update={"agent": agent})
    for i in range(times):
        store.write_pack(pack.model_copy(update={"as_of": i}))
        store.journal_append(pack.run_id, f"{agent} {i}")


def test_concurrent_writers_lose_no_memory_or_journal_entry(repo: Path) -> None:
    import multiprocessing

    with Librarian(repo) as lib:
        first = lib.pack("Planner", TASK, run_id="busy", as_of=AS_OF)
    text = first.path.read_text("utf-8")
    ctx = multiprocessing.get_context("fork")
    agents = ("Thinker", "Implementer", "Verifier", "Reviewer")
    procs = [ctx.Process(target=_write_many, args=(str(repo), text, a, 25)) for a in agents]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    memory = RunStore(State(repo)).memory("busy")
    assert sorted(memory.context_pack_uri) == sorted(("Planner", *agents))
    journal = (repo / ".librarian/runs/busy/journal.md").read_text("utf-8")
    for a in agents:
        assert sum(1 for ln in journal.splitlines() if ln.startswith(f"- {a} ")) == 25
