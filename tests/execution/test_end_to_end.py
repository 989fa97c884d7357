"""tc_root_cause_recovery end to end on a repository with a planted bug.

Agent-driven: ``librarian serve`` in a subprocess, driven by the mcp SDK's own
client, works every step it is handed (``run_start`` → ``run_submit`` …), reading
each step's context pack through its resource. Unattended: ``librarian runs start
… --provider ollama`` through the CLI, a loopback Ollama-compatible server working
the same steps. Both runs must complete and verify; every step's context pack stays
within its budget, and the steps that reason about the code see the buggy function.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from codelibrarian.execution.ledger import read_entries
from mcp import Client, StdioServerParameters, stdio_client
from tests.helpers import GIT_ENV, commit_all, make_repo, run_cli, write_files

from .agent_answers import BUG_TASK, BUGGY_OPS, GOOD_OPS, answer
from .conftest import BUGGY_FILES
from .ollama_server import MODEL_CONFIG, OllamaServer

pytestmark = pytest.mark.slow

#: the repository of the shell tests, with ``add`` right at first (the bug comes later)
FILES = {**BUGGY_FILES, "calc/ops.py": GOOD_OPS}
#: the steps that reason about the code: their context must hold the buggy function
NEEDS_THE_BUG = {"tp_hypothesis", "tp_root_cause", "tp_implement"}
BUGGY_LINE = "return a - b"


def _bug_repo(root: Path, *extra: tuple[str, str]) -> Path:
    make_repo(root, {**FILES, **dict(extra)}, message="calc: add and mul")
    write_files(root, {"calc/ops.py": BUGGY_OPS})
    commit_all(root, "calc: simplify add")
    return root


def _env() -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "NO_COLOR": "1"}
    env.pop("LIBRARIAN_LLM_PROVIDER", None)
    return env


def _text(result: Any) -> str:
    assert not result.is_error, result.content
    return str(result.content[0].text)


def _check_run(repo: Path, run_id: str) -> list[dict[str, Any]]:
    verified = run_cli("runs", "verify", run_id, "--json", cwd=repo)
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["ok"] is True
    entries, _ = read_entries(repo / ".librarian" / "runs" / run_id / "ledger.jsonl")
    assert entries[-1]["kind"] == "run_finished" and entries[-1]["status"] == "succeeded"
    return entries


def test_an_agent_works_root_cause_recovery_over_mcp(tmp_path: Path) -> None:
    repo = _bug_repo(tmp_path / "repo")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codelibrarian", "serve", "--repo", str(repo)],
        env=_env(),
        cwd=str(repo),
    )
    handed: list[dict[str, Any]] = []
    final: dict[str, Any] = {}

    async def agent() -> None:
        async with Client(stdio_client(params)) as client:
            doc = json.loads(
                _text(
                    await client.call_tool(
                        "run_start", {"composition": "tc_root_cause_recovery", "task": BUG_TASK}
                    )
                )
            )
            for _ in range(30):
                if not doc["steps"]:
                    break
                for step in doc["steps"]:
                    pack = await client.read_resource(step["context_uri"])
                    handed.append({**step, "pack": pack.contents[0].text})
                    out = answer(step["step"], step["output_schema"])
                    doc = json.loads(
                        _text(
                            await client.call_tool(
                                "run_submit",
                                {"run_id": doc["run_id"], "step": step["step"], "output": out},
                            )
                        )
                    )
            status = await client.call_tool("run_status", {"run_id": doc["run_id"]})
            final.update(json.loads(_text(status)))

    async def main() -> None:
        with anyio.fail_after(240):
            await agent()

    anyio.run(main)
    assert final["status"] == "succeeded", final
    steps = [h["step"] for h in handed]
    assert steps == [
        "tp_min_repro", "tp_hypothesis", "tp_bisect", "tp_root_cause", "tp_implement",
        "tp_verify_plan",
    ]  # fmt: skip
    for h in handed:
        assert 0 < h["context_tokens"] <= h["context_budget"], h["step"]
        if h["step"] in NEEDS_THE_BUG:
            assert BUGGY_LINE in h["pack"] and "def add" in h["pack"], h["step"]
    assert final["outputs"]["tp_root_cause"]["cause"] == "calc.ops.add returns a - b"
    entries = _check_run(repo, final["run_id"])
    kinds = [e["kind"] for e in entries]
    assert kinds.count("step_handed_out") == len(handed)
    # the builtin history search was never needed: the bisect step succeeded
    assert not any(e.get("primitive") == "tp_search_history" for e in entries)


def test_the_same_run_unattended_through_an_ollama_compatible_server(tmp_path: Path) -> None:
    server = OllamaServer(lambda primitive, _prompt, schema: answer(primitive, schema))
    try:
        repo = _bug_repo(tmp_path / "repo", ("librarian.toml", MODEL_CONFIG))
        started = run_cli(
            "runs", "start", "tc_root_cause_recovery", BUG_TASK, "--provider", "ollama", "--json",
            cwd=repo, env={"OLLAMA_HOST": server.url},
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        view = json.loads(started.stdout)
    finally:
        server.close()
    assert view["status"] == "succeeded", view
    assert server.primitives == [
        "tp_min_repro", "tp_hypothesis", "tp_bisect", "tp_root_cause", "tp_implement",
        "tp_verify_plan",
    ]  # fmt: skip
    assert set(server.executed.values()) == {1} and not server.repeats
    entries = _check_run(repo, view["run_id"])
    composed = [e for e in entries if e["kind"] == "context_composed"]
    assert len(composed) == 6
    for e in composed:
        assert 0 < e["tokens"] <= e["budget"], e
    folder = repo / ".librarian" / "runs" / view["run_id"] / "steps"
    for dispatch in ("tp_hypothesis.1", "tp_root_cause.1", "tp_implement.1"):
        assert BUGGY_LINE in (folder / dispatch / "context.md").read_text(), dispatch
