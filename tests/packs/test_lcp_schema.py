"""The LCP and handoff schemas: the checked-in files match the models; bad files fail clearly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.api import Librarian
from codelibrarian.errors import PackValidationError
from codelibrarian.packs.handoff import HandoffPackage, parse_handoff
from codelibrarian.packs.lcp import LocalContextPack, parse_pack, schema_text
from codelibrarian.packs.runs import RunStore
from tests.packs.conftest import CRITERIA, TASK

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_checked_in_lcp_schema_is_current() -> None:
    on_disk = (SCHEMAS / "lcp.schema.json").read_text(encoding="utf-8")
    assert on_disk == schema_text(LocalContextPack), (
        "schemas/lcp.schema.json is stale: regenerate it with "
        "python -c 'from pathlib import Path; from codelibrarian.packs.lcp import "
        'write_schemas; write_schemas(Path("schemas"))\''
    )


def test_checked_in_handoff_schema_is_current() -> None:
    on_disk = (SCHEMAS / "handoff.schema.json").read_text(encoding="utf-8")
    assert on_disk == schema_text(HandoffPackage)


def test_schema_names_every_seed_field() -> None:
    schema = json.loads((SCHEMAS / "lcp.schema.json").read_text(encoding="utf-8"))
    seed_fields = {
        "agent",
        "task_id",
        "goal",
        "acceptance_criteria",
        "constraints",
        "scope_class",
        "model_capability",
        "anchors",
        "micro_summaries",
        "risk_notes",
        "open_questions",
        "next_actions",
        "token_estimate",
        "bloat_checks",
    }
    assert seed_fields <= set(schema["required"])
    assert schema["properties"]["anchors"]["maxItems"] == 24
    agents = schema["properties"]["agent"]["enum"]
    assert agents == [
        "Planner",
        "Thinker",
        "Implementer",
        "Verifier",
        "Reviewer",
        "Critical",
        "Supervisor",
    ]
    anchor = schema["$defs"]["Anchor"]
    assert anchor["properties"]["kind"]["enum"] == ["code", "test", "kb", "decision", "artifact"]


@pytest.fixture(scope="module")
def pack_text(shared_lib: Librarian) -> str:
    result = shared_lib.pack(
        "Implementer", TASK, acceptance=CRITERIA, run_id="schema", as_of=1_800_000_000
    )
    return result.path.read_text(encoding="utf-8")


def _edit(text: str, change: Any) -> str:
    data = json.loads(text)
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(agent="Boss"), "agent"),
        (lambda d: d.pop("goal"), "goal"),
        (lambda d: d.update(extra_field=1), "extra_field"),
        (lambda d: d["anchors"][0].update(lines="9-3"), "anchors.0"),
        (lambda d: d["anchors"][0].update(lines="ten"), "anchors.0.lines"),
        (lambda d: d["anchors"][0].update(rev="not-a-hash"), "anchors.0.rev"),
        (lambda d: d["anchors"][0].update(kind="blob"), "anchors.0.kind"),
        (lambda d: d["anchors"].insert(1, dict(d["anchors"][0])), "anchors.1"),
        (lambda d: d.update(token_estimate="12"), "token_estimate"),
        (lambda d: d.update(scope_class="Huge"), "scope_class"),
        (lambda d: d["bloat_checks"].pop("dedup_ok"), "bloat_checks.dedup_ok"),
        (
            lambda d: d["micro_summaries"][0].update(summary="a\nb\nc\nd"),
            "micro_summaries.0.summary",
        ),
        (lambda d: d["micro_summaries"][0].update(ref="nowhere#x"), "micro_summaries.0.ref"),
        (lambda d: d.update(anchors=[d["anchors"][0]] * 25), "anchors"),
    ],
)
def test_hand_edited_pack_names_the_field(pack_text: str, change: Any, field: str) -> None:
    edited = _edit(pack_text, change)
    with pytest.raises(PackValidationError) as info:
        parse_pack(edited, "/x/Implementer.lcp.json")
    message = str(info.value)
    assert "/x/Implementer.lcp.json" in message
    assert f"field {field}" in message


def test_not_json_names_the_file() -> None:
    with pytest.raises(PackValidationError, match=r"p\.json: not valid JSON"):
        parse_pack("{nope", "p.json")


def test_read_validates_the_file_on_disk(shared_lib: Librarian, pack_text: str) -> None:
    store = RunStore(shared_lib.state)
    path = store.pack_path("schema", "Implementer")
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(_edit(original, lambda d: d.update(scope_class="Huge")), encoding="utf-8")
        with pytest.raises(PackValidationError, match=r"Implementer\.lcp\.json: .*scope_class"):
            store.read_pack("schema", "Implementer")
        # the API refuses to reuse a hand-broken pack instead of serving it
        with pytest.raises(PackValidationError, match="scope_class"):
            shared_lib.pack("Implementer", TASK, acceptance=CRITERIA, run_id="schema")
    finally:
        path.write_text(original, encoding="utf-8")
    assert store.read_pack("schema", "Implementer").agent == "Implementer"


def test_handoff_validation_names_the_field() -> None:
    doc = {
        "schema": "codelibrarian.handoff/1",
        "run_id": "r",
        "from_agent": "Implementer",
        "to_agent": "Verifier",
        "task_id": None,
        "as_of": 1,
        "base_commit": None,
        "context_pack_uri": None,
        "diff_refs": [],
        "evidence": [],
        "risks": [],
        "notes": [],
        "open_questions": [],
    }
    assert parse_handoff(json.dumps(doc), "h.json").to_agent == "Verifier"
    doc["to_agent"] = "Nobody"
    with pytest.raises(
        PackValidationError, match=r"h\.json: invalid handoff package: field to_agent"
    ):
        parse_handoff(json.dumps(doc), "h.json")
