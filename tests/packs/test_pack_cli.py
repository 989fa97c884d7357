"""``librarian pack | handoff | runs`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.packs.conftest import TASK, fresh_repo

AS_OF = "1800000000"


@pytest.fixture(scope="module")
def cli_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_repo(tmp_path_factory.mktemp("cli") / "repo")


pytestmark = pytest.mark.slow  # every call is a fresh process that loads the index


def test_pack_handoff_runs_flow(cli_repo: Path) -> None:
    repo = str(cli_repo)
    res = run_cli(
        "pack", "--agent", "Implementer", "--task", TASK, "--acceptance", "post sends the body",
        "--acceptance", "retries use backoff", "--scope", "Small", "--capability", "fast_code",
        "--run", "cli", "--as-of", AS_OF, "--json", "-C", repo,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["uri"] == "resources://runs/cli/context/Implementer.lcp.json"
    assert doc["reused"] is False
    pack = doc["pack"]
    assert pack["scope_class"] == "Small" and pack["budget_tokens"] == 2250
    assert pack["acceptance_criteria"] == ["post sends the body", "retries use backoff"]
    assert pack["token_estimate"] <= 2250
    on_disk = cli_repo / ".librarian/runs/cli/context/Implementer.lcp.json"
    assert json.loads(on_disk.read_text("utf-8")) == pack

    again = run_cli(
        "pack", "--agent", "Implementer", "--task", TASK, "--acceptance", "post sends the body",
        "--acceptance", "retries use backoff", "--run", "cli", "-C", repo,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("resources://runs/cli/context/Implementer.lcp.json\nreused:")

    hand = run_cli(
        "handoff", "--run", "cli", "--from", "Implementer", "--to", "Verifier",
        "--note", "post added", "--risk", "double POST", "--evidence", "pytest: 1 passed",
        "--as-of", AS_OF, "--json", "-C", repo,
    )  # fmt: skip
    assert hand.returncode == 0, hand.stderr
    handoff = json.loads(hand.stdout)["handoff"]
    assert handoff["notes"] == ["post added"] and handoff["evidence"] == ["pytest: 1 passed"]
    assert handoff["context_pack_uri"] == doc["uri"]
    assert (cli_repo / ".librarian/runs/cli/handoff/Implementer→Verifier.json").is_file()

    listed = run_cli("runs", "list", "--json", "-C", repo)
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)["runs"]
    assert run["run_id"] == "cli" and run["agents"] == ["Implementer"]
    assert run["handoffs"] == ["Implementer→Verifier"]

    shown = run_cli("runs", "show", "cli", "-C", repo)
    assert shown.returncode == 0, shown.stderr
    assert "### Team Panel" in shown.stdout
    assert "Implementer → Verifier" in shown.stdout
    shown_json = json.loads(run_cli("runs", "show", "cli", "--json", "-C", repo).stdout)
    assert shown_json["packs"][0]["token_estimate"] == pack["token_estimate"]


def test_refresh_through_the_cli(tmp_path: Path) -> None:
    root = fresh_repo(tmp_path / "repo")
    repo = str(root)
    first = run_cli("pack", "-a", "Planner", "-t", TASK, "--run", "r", "--json", "-C", repo)
    assert first.returncode == 0, first.stderr
    anchors = json.loads(first.stdout)["pack"]["anchors"]
    assert any(a["ref"] == "src/app/retry.py#backoff" for a in anchors)
    retry = root / "src/app/retry.py"
    retry.write_text(retry.read_text("utf-8") + "\n\nMAX_ATTEMPTS = 5\n", encoding="utf-8")
    res = run_cli("pack", "-a", "Planner", "-t", TASK, "--run", "r", "--refresh", "-C", repo)
    assert res.returncode == 0, res.stderr
    assert "refreshed: src/app/retry.py#backoff\n" in res.stdout


def test_errors_have_exit_codes_and_name_the_field(tmp_path: Path) -> None:
    root = fresh_repo(tmp_path / "repo")
    repo = str(root)
    bad = run_cli("pack", "--agent", "Boss", "--task", TASK, "-C", repo)
    assert bad.returncode == 2 and "unknown agent 'Boss'" in bad.stderr
    scope = run_cli("pack", "--agent", "Planner", "--task", TASK, "--scope", "Huge", "-C", repo)
    assert scope.returncode == 2 and "Tiny, Small, Medium, Large" in scope.stderr
    missing = run_cli("runs", "show", "nope", "--json", "-C", repo)
    assert missing.returncode == 10
    assert json.loads(missing.stdout)["error"] == "not_found"
    ok = run_cli("pack", "--agent", "Planner", "--task", TASK, "--run", "x", "-C", repo)
    assert ok.returncode == 0, ok.stderr
    path = root / ".librarian/runs/x/context/Planner.lcp.json"
    data = json.loads(path.read_text("utf-8"))
    data["anchors"][0]["lines"] = "lots"
    path.write_text(json.dumps(data), encoding="utf-8")
    broken = run_cli("runs", "show", "x", "-C", repo)
    assert broken.returncode == 9
    assert "Planner.lcp.json" in broken.stderr and "field anchors.0.lines" in broken.stderr
    no_handoff_run = run_cli(
        "handoff", "--run", "zzz", "--from", "Planner", "--to", "Thinker", "-C", repo
    )
    assert no_handoff_run.returncode == 10
