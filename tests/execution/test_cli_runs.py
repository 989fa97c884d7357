"""``librarian runs ...`` through the real entry point: an agent works a run from a shell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import make_repo, run_cli, write_files

from .agent_answers import BUG_TASK, BUGGY_OPS, answer
from .conftest import BUGGY_FILES
from .test_end_to_end import FILES

pytestmark = pytest.mark.slow


def test_an_agent_works_a_run_from_the_shell(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    write_files(repo, {"calc/ops.py": BUGGY_OPS})  # the change in progress has the bug
    assert BUGGY_FILES["calc/ops.py"] == BUGGY_OPS

    program = tmp_path / "diagnose.toml"
    program.write_text(
        'name = "diagnose"\nbase = "primitives"\n'
        'primitive_ids = ["tp_change_impact", "tp_hypothesis", "tp_root_cause"]\n'
    )
    started = run_cli("runs", "start", str(program), BUG_TASK, "--json", cwd=repo)
    assert started.returncode == 0, started.stderr
    run_id = json.loads(started.stdout)["run_id"]
    worked: list[str] = []
    for _ in range(10):
        nxt = run_cli("runs", "next", run_id, "--json", cwd=repo)
        assert nxt.returncode == 0, nxt.stderr
        doc = json.loads(nxt.stdout)
        if not doc["steps"]:
            break
        for step in doc["steps"]:
            assert step["context"]["tokens"] <= step["context"]["budget"]
            out = json.dumps(answer(step["step"], step["output_schema"]))
            sub = run_cli("runs", "submit", run_id, step["step"], "-o", "-", "--json",
                          cwd=repo, input=out)  # fmt: skip
            assert sub.returncode == 0, sub.stderr
            worked.append(step["step"])
    assert worked == ["tp_hypothesis", "tp_root_cause"]

    status = json.loads(run_cli("runs", "status", run_id, "--json", cwd=repo).stdout)
    assert status["status"] == "succeeded" and status["dispatched"] == 1 + len(worked)
    listed = json.loads(run_cli("runs", "list", "--json", cwd=repo).stdout)
    assert run_id in json.dumps(listed)
    shown = run_cli("runs", "show", run_id, cwd=repo)
    assert shown.returncode == 0 and "tp_change_impact" in shown.stdout, shown.stderr
    verified = run_cli("runs", "verify", run_id, "--json", cwd=repo)
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True

    # a finished run: submitting again is refused, resuming changes nothing
    again = run_cli("runs", "submit", run_id, "tp_hypothesis", "-o", "-", cwd=repo, input="{}")
    assert again.returncode == 2 and "not waiting" in again.stderr
    ledger = repo / ".librarian" / "runs" / run_id / "ledger.jsonl"
    before = ledger.read_bytes()
    assert run_cli("runs", "resume", run_id, "--json", cwd=repo).returncode == 0
    assert ledger.read_bytes() == before

    # an unknown run is exit 10; a tampered ledger fails verify (1) and resume (12)
    assert run_cli("runs", "status", "20260101-000000-abcdef", cwd=repo).returncode == 10
    lines = ledger.read_text().splitlines()
    lines[2] = lines[2].replace('"seq":', '"seq_":', 1)
    ledger.write_text("\n".join(lines) + "\n")
    assert run_cli("runs", "verify", run_id, cwd=repo).returncode == 1
    assert run_cli("runs", "resume", run_id, cwd=repo).returncode == 12
