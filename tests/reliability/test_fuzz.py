"""A few hundred fuzzed config files, CLI argument lists and MCP calls: no traceback,
no budget overrun (``benchmarks/fuzz_surfaces.py`` runs ten thousand)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import anyio
import pytest

from codelibrarian.mcp.server import build_server
from mcp import Client
from tests.reliability.fuzz import (
    AS_OF,
    Outcome,
    cli_cases,
    config_cases,
    make_workspace,
    mcp_cases,
    run_cli_case,
    run_config_case,
    run_mcp_case,
)
from tests.sources.repo_fixture import warm_tokenizers

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

SEED = 1717


def _bad(outcomes: list[tuple[object, Outcome]]) -> list[str]:
    return [
        f"{case!r}: {o.kind}: {o.detail}"
        for case, o in outcomes
        if o.kind in ("traceback", "overrun")
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    warm_tokenizers()
    return make_workspace(tmp_path / "shop")


def test_fuzzed_configs(workspace: Path) -> None:
    rng = random.Random(SEED)
    outcomes = [
        ((name, text), run_config_case(workspace, name, text, compose=i % 15 == 0))
        for i, (name, text) in enumerate(config_cases(rng, 300))
    ]
    assert _bad(outcomes) == []
    kinds = Counter(o.kind for _, o in outcomes)
    assert kinds["ok"] > 20 and kinds["error"] > 100  # both sides were exercised


def test_fuzzed_cli_arguments(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    first = run_cli_case(
        ["compose", "apply discount", "--json", "--as-of", str(AS_OF), "-C", str(workspace)]
    )
    assert first.kind == "ok"
    rng = random.Random(SEED)
    decision = ""
    db = workspace / ".librarian" / "decisions"
    for log in db.glob("*.jsonl"):
        decision = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])["id"]
    outcomes = [(args, run_cli_case(args)) for args in cli_cases(rng, 150, workspace, decision)]
    assert _bad(outcomes) == []
    kinds = Counter(o.kind for _, o in outcomes)
    assert kinds["ok"] > 20 and kinds["error"] > 20


def test_fuzzed_mcp_calls(workspace: Path) -> None:
    rng = random.Random(SEED)
    outcomes: list[tuple[object, Outcome]] = []

    async def main() -> None:
        with anyio.fail_after(400):
            async with Client(build_server(workspace)) as client:
                for tool, args in mcp_cases(rng, 120):
                    outcomes.append(
                        ((tool, args), await run_mcp_case(client, workspace, tool, args))
                    )

    anyio.run(main)
    assert _bad(outcomes) == []
    kinds = Counter(o.kind for _, o in outcomes)
    assert kinds["ok"] > 20 and kinds["error"] > 20
