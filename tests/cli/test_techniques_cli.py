"""``librarian techniques | patterns | lcl | presets`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import make_repo, run_cli

BAD = """\
base = "pattern"
base_id = "pattern_bug_investigation"

[overrides]
core_primitives = ["tp_hypothesis", "tp_bisekt"]

[[conditionals]]
when = "codebase.has_test == false"
then = "add"
primitive_id = "tp_review_tests"
"""


def test_techniques_list_and_show() -> None:
    res = run_cli("techniques", "list", "--json")
    assert res.returncode == 0, res.stderr
    items = json.loads(res.stdout)["items"]
    assert {"tp_bisect", "tp_change_impact"} <= {i["id"] for i in items}
    ops = json.loads(run_cli("techniques", "list", "--kind", "operators", "--json").stdout)
    assert len(ops["items"]) == 12
    comps = json.loads(run_cli("techniques", "list", "-k", "compositions", "--json").stdout)
    assert all(i["stratum"] == "finite" for i in comps["items"])
    shown = json.loads(run_cli("techniques", "show", "tp_change_impact", "--json").stdout)
    assert shown["kind"] == "primitive"
    assert "via" in shown["item"]["output_schema"]["properties"]["affected"]["items"]["properties"]
    text = run_cli("techniques", "show", "tc_root_cause_recovery").stdout
    assert "loop#1" in text and "fallback#1" in text
    missing = run_cli("techniques", "show", "tp_bisekt")
    assert missing.returncode == 10 and "tp_bisect" in missing.stderr
    bad_kind = run_cli("techniques", "list", "--kind", "widgets")
    assert bad_kind.returncode == 2


def test_patterns_list_and_show() -> None:
    doc = json.loads(run_cli("patterns", "list", "--json").stdout)
    assert len(doc["items"]) == 16
    shown = json.loads(run_cli("patterns", "show", "pattern_bug_investigation", "--json").stdout)
    assert len(shown["item"]["situations"][0]["examples"]) >= 5
    assert "include_when" in shown["item"]["optional_primitives"][0]
    assert (
        "tc_root_cause_recovery" in run_cli("patterns", "show", "pattern_bug_investigation").stdout
    )


def test_lcl_check_lists_every_error_with_positions(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(BAD, encoding="utf-8")
    res = run_cli("lcl", "check", str(f), "--json")
    assert res.returncode == 2
    doc = json.loads(res.stdout)
    assert doc["ok"] is False
    errs = {(d["code"], d["line"], d["column"]) for d in doc["diagnostics"]}
    assert ("lcl_predicate_type", 8, 9) in errs
    assert any(code == "lcl_primitive_not_found" and line == 5 for code, line, _ in errs)
    bisect = next(d for d in doc["diagnostics"] if d["code"] == "lcl_primitive_not_found")
    assert bisect["suggestions"][0] == "tp_bisect"
    plain = run_cli("lcl", "check", str(f))
    assert plain.returncode == 2
    assert "bad.toml:8:9" in plain.stderr and "did you mean `tp_bisect`" in plain.stderr
    good = tmp_path / "good.toml"
    good.write_text(
        BAD.replace("bisekt", "bisect").replace("has_test ", "has_tests "), encoding="utf-8"
    )
    ok = run_cli("lcl", "check", str(good), "--json")
    assert ok.returncode == 0, ok.stdout
    assert json.loads(ok.stdout)["programs"] == [{"name": "good", "ok": True}]


@pytest.mark.slow
def test_lcl_compile_presets_files_and_facts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"app/login.py": "import jwt\n\ndef login():\n    return 1\n"})
    res = run_cli("lcl", "compile", "preset_security_review", "--json", "-C", str(repo))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["stratum"] == "finite" and doc["policy"]["human_approval_required"] is False
    assert any(d["value"] is None for d in doc["decisions"]) is False  # no facts: nothing decided
    (repo / "app/login.py").write_text(
        "import jwt\n\ndef login(password):\n    return 2\n", encoding="utf-8"
    )
    decided = json.loads(
        run_cli(
            "lcl", "compile", "preset_security_review", "--facts", "--json", "-C", str(repo)
        ).stdout
    )
    steps = [s["primitive"] for s in decided["steps"]]
    assert "tp_threat_model" in steps
    assert any(
        d["when"] == "change.touches_auth" and d["value"] is True for d in decided["decisions"]
    )
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"change": {"touches_auth": False}}), encoding="utf-8")
    other = json.loads(
        run_cli(
            "lcl",
            "compile",
            "preset_security_review",
            "--facts-file",
            str(facts),
            "--json",
            "-C",
            str(repo),
        ).stdout
    )
    assert "tp_threat_model" not in [s["primitive"] for s in other["steps"]]
    text = run_cli("lcl", "compile", "tc_incident_response", "-C", str(repo)).stdout
    assert "timebox#1" in text and "policy:" in text
    unknown = run_cli("lcl", "compile", "preset_quik_debug", "-C", str(repo))
    assert unknown.returncode == 10 and "preset_quick_debug" in unknown.stderr


def test_lcl_facts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"tests/test_a.py": "def test_a():\n    pass\n"})
    doc = json.loads(
        run_cli("lcl", "facts", "--task", "flaky test", "--json", "-C", str(repo)).stdout
    )
    assert doc["facts"]["codebase"]["has_tests"] is True
    assert doc["facts"]["intent"]["keywords"] == ["flaky", "test"]
    assert doc["evidence"]["codebase.has_tests"] == ["tests/test_a.py"]
    text = run_cli("lcl", "facts", "-C", str(repo)).stdout
    assert "codebase.has_tests = true" in text


def test_presets_list_show_save(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "# r\n"})
    listed = json.loads(run_cli("presets", "list", "--json", "-C", str(repo)).stdout)["presets"]
    assert [p["name"] for p in listed] == [
        "preset_quick_debug", "preset_security_review", "preset_zero_knowledge_bootstrap"
    ]  # fmt: skip
    shown = json.loads(
        run_cli("presets", "show", "preset_quick_debug", "--json", "-C", str(repo)).stdout
    )
    assert shown["preset"]["kind"] == "builtin" and shown["compiled"]["stratum"] == "finite"
    src = tmp_path / "mine.toml"
    src.write_text(
        'base = "composition"\nbase_id = "tc_test_backfill"\ndescription = "tests"\n',
        encoding="utf-8",
    )
    saved = json.loads(
        run_cli("presets", "save", "mine", str(src), "--json", "-C", str(repo)).stdout
    )
    assert saved["path"] == ".librarian/presets/mine.toml"
    again = run_cli("presets", "save", "mine", str(src), "-C", str(repo))
    assert again.returncode == 2 and "--force" in again.stderr
    names = [
        p["name"]
        for p in json.loads(run_cli("presets", "list", "--json", "-C", str(repo)).stdout)["presets"]
    ]
    assert "mine" in names
    compiled = json.loads(run_cli("lcl", "compile", "mine", "--json", "-C", str(repo)).stdout)
    assert compiled["steps"][0]["primitive"] == "tp_test_gap_analysis"
