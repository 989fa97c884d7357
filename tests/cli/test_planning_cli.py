"""``librarian plan | advise | evolve`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codelibrarian.planning.history import trace_to_dict
from codelibrarian.techniques.registry import default_library
from tests.helpers import run_cli
from tests.planning.repo_fixture import AS_OF, build_repo
from tests.planning.simulate import FAILING, PLANTED_SEQUENCE, simulate_runs

#: no provider is reachable: PATH without CLIs, local servers on a closed port
NO_PROVIDERS = {
    "PATH": "/usr/bin:/bin",
    "OLLAMA_HOST": "http://127.0.0.1:9",
    "LMSTUDIO_HOST": "http://127.0.0.1:9",
    "LIBRARIAN_LLM_PROVIDER": "",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_repo(tmp_path_factory.mktemp("cli") / "service")


def test_plan_json_markdown_and_keywords(repo: Path, tmp_path: Path) -> None:
    intent = "The CSV export crashes when a report has no rows"
    res = run_cli("plan", intent, "-C", str(repo), "--json", "--as-of", str(AS_OF),
                  env=NO_PROVIDERS)  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "codelibrarian.plan/1"
    assert doc["selection"]["pattern"] == "pattern_bug_investigation"
    assert doc["estimates"]["total_tokens"] > 0
    out = tmp_path / "plan.md"
    md = run_cli("plan", intent, "-C", str(repo), "--markdown", "-o", str(out), "--keywords",
                 "--as-of", str(AS_OF), env=NO_PROVIDERS)  # fmt: skip
    assert md.returncode == 0, md.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Plan: ") and "## Alternatives" in text
    assert "unverified_by_trace(embeddings_unavailable)" in text
    plain = run_cli("plan", intent, "-C", str(repo), "--as-of", str(AS_OF), env=NO_PROVIDERS)
    assert plain.stdout.startswith("plan: Root cause recovery")


def test_plan_run_starts_the_chosen_workflow_for_the_agent(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "service")  # its own: the run it starts is run history
    intent = "The CSV export crashes when a report has no rows"
    res = run_cli("plan", intent, "-C", str(repo), "--run", "--json", "--keywords",
                  env=NO_PROVIDERS)  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    run = doc["run"]
    assert run["composition"] == doc["plan"]["selection"]["composition"]
    assert run["status"] in {"waiting_for_agent", "running", "succeeded"}, run
    status = run_cli("runs", "status", run["run_id"], "-C", str(repo), "--json", env=NO_PROVIDERS)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["run_id"] == run["run_id"]
    verify = run_cli("runs", "verify", run["run_id"], "-C", str(repo), env=NO_PROVIDERS)
    assert verify.returncode == 0, verify.stderr
    both = run_cli("plan", intent, "-C", str(repo), "--run", "--markdown", env=NO_PROVIDERS)
    assert both.returncode == 2 and "--run" in both.stderr


def test_bad_input_is_a_usage_error(repo: Path) -> None:
    empty = run_cli("plan", "  ", "-C", str(repo), "--json", env=NO_PROVIDERS)
    assert empty.returncode == 2
    assert json.loads(empty.stdout)["error"] == "usage_error"


def test_plan_output_passes_the_secret_scanner(repo: Path) -> None:
    key = "AKIA" + "Z4QK7HN3WXJ2LP5T"
    res = run_cli("plan", f"why does login fail with key {key}", "-C", str(repo), "--json",
                  "--keywords", env=NO_PROVIDERS)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert key not in res.stdout and "REDACTED" in res.stdout


def test_advise(repo: Path) -> None:
    res = run_cli("advise", "-C", str(repo), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    present = {f["feature"] for f in doc["features"] if f["present"]}
    assert {"auth", "api", "database", "testing"} <= present
    assert "ui" not in present
    assert 3 <= len(doc["suggestions"]) <= 5
    assert (
        "app/auth/login.py" in doc["suggestions"][0]["evidence"] + doc["suggestions"][1]["evidence"]
    )
    text = run_cli("advise", "-C", str(repo)).stdout
    assert "suggested workflows:" in text and "absent" in text


def test_evolve_approve_reject(repo: Path, tmp_path: Path) -> None:
    comps = {c: x.primitives for c, x in default_library().compositions.items()}
    runs = simulate_runs(500, comps, as_of=AS_OF, seed=3)
    traces = tmp_path / "runs.jsonl"
    traces.write_text("".join(json.dumps(trace_to_dict(r)) + "\n" for r in runs))
    presets = repo / ".librarian" / "presets"
    bare = run_cli("evolve", "-C", str(repo), "--json", "--as-of", str(AS_OF))
    assert bare.returncode == 0, bare.stderr
    assert json.loads(bare.stdout)["degradations"][0]["reason"] == "no_run_history"
    res = run_cli("evolve", "-C", str(repo), "--json", "--as-of", str(AS_OF),
                  "--traces", str(traces))  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    top = doc["proposals"][0]
    assert top["primitives"] == list(PLANTED_SEQUENCE) and top["status"] == "pending"
    dep = next(d for d in doc["deprecations"] if d["composition"] == FAILING)
    assert not presets.exists() or not list(presets.iterdir())  # nothing applied yet
    ok = run_cli("evolve", "approve", top["id"], "-C", str(repo), "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["preset"] == top["id"]
    assert (presets / f"{top['id']}.toml").is_file()
    listed = run_cli("presets", "list", "-C", str(repo), "--json")
    assert top["id"] in listed.stdout
    mut = doc["mutations"][0]["id"]
    no = run_cli("evolve", "reject", mut, "-C", str(repo))
    assert no.returncode == 0 and "rejected" in no.stdout
    dep_ok = run_cli("evolve", "approve", dep["id"], "-C", str(repo), "--json")
    assert json.loads(dep_ok.stdout)["preset"] is None
    again = json.loads(run_cli("evolve", "-C", str(repo), "--json", "--as-of", str(AS_OF),
                               "--traces", str(traces)).stdout)  # fmt: skip
    status = {x["id"]: x["status"] for g in ("proposals", "mutations", "deprecations")
              for x in again[g]}  # fmt: skip
    assert (status[top["id"]], status[mut], status[dep["id"]]) == ("approved", "rejected",
                                                                   "approved")  # fmt: skip
    plan = json.loads(run_cli("plan", "profile the slow hotspots of the importer", "-C", str(repo),
                              "--json", "--keywords", env=NO_PROVIDERS).stdout)  # fmt: skip
    ids = [plan["plan"]["id"], *(a["id"] for a in plan["alternatives"])]
    assert FAILING not in ids  # an approved deprecation is no longer planned
    missing = run_cli("evolve", "approve", "tc_evolved_0000000000", "-C", str(repo))
    assert missing.returncode != 0 and "no item" in missing.stderr
