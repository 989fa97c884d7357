"""MCP tool errors are short, path-free and name what to do; degenerate results say so.

Driven through the SDK's client connected in-process to the real server (the same
handlers a stdio or HTTP client reaches).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from codelibrarian.mcp.server import build_server
from mcp import Client
from tests.helpers import make_repo
from tests.sources.repo_fixture import warm_tokenizers

pytestmark = pytest.mark.reliability

FILES = {
    "shop/pricing.py": "def apply_discount(total, rate):\n    return total * (1 - rate)\n",
    "shop/cart.py": "from shop.pricing import apply_discount\n\n\nclass Cart:\n    pass\n",
}
#: (tool, arguments) that must fail, and a phrase the message must hold
BAD_CALLS: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("compose_context", {"task": "discount", "budget": 500}, "unknown argument 'budget'"),
    ("compose_context", {"task": "discount", "max_token": 500}, "did you mean 'max_tokens'"),
    ("compose_context", {}, "missing required argument 'task'"),
    ("compose_context", {"task": "discount", "max_tokens": 5}, "'max_tokens'"),
    ("compose_context", {"task": "   "}, "task is empty"),
    ("compose_context", {"task": "x", "files": ["../../etc/passwd"]}, "outside the repository"),
    ("query_codebase", {"intent": 42}, "'intent'"),
    ("query_codebase", {"intent": "x", "depth": "L9"}, "unknown depth 'L9'"),
    ("build_context_pack", {"goal": "x", "run_id": "../../etc"}, "'run_id'"),
    ("explain_decision", {"decision_id": "0123456789abcdef"}, "no decision"),
    ("index_status", {"refresh": True, "verbose": True}, "Valid arguments: refresh, max_tokens"),
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    warm_tokenizers()
    return make_repo(tmp_path_factory.mktemp("mcp") / "shop", FILES)


def _session(repo: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []

    async def main() -> None:
        with anyio.fail_after(180):
            async with Client(build_server(repo)) as client:
                for tool, args in calls:
                    result = await client.call_tool(tool, args)
                    text = "\n".join(str(getattr(c, "text", "")) for c in result.content)
                    out.append((bool(result.is_error), text))

    anyio.run(main)
    return out


def test_bad_calls_get_short_path_free_errors(repo: Path) -> None:
    results = _session(repo, [(tool, args) for tool, args, _ in BAD_CALLS])
    for (tool, args, phrase), (is_error, text) in zip(BAD_CALLS, results, strict=True):
        assert is_error, (tool, args, text)
        assert phrase in text, (tool, args, text)
        assert str(repo) not in text and "/tmp/" not in text, text
        assert "validation error" not in text and "pydantic" not in text, text
        assert "input_value" not in text and "Traceback" not in text, text
        assert len(text) <= 700, text


def test_unknown_arguments_name_the_valid_ones(repo: Path) -> None:
    ((is_error, text),) = _session(repo, [("compose_context", {"task": "x", "budget": 500})])
    assert is_error
    for name in ("task", "max_tokens", "model", "base", "files", "format", "as_of"):
        assert name in text


def test_smallest_budget_is_kept_and_still_shows_the_task_line(repo: Path) -> None:
    # the smallest budget the tool accepts leaves 32 tokens for the pack: a merged
    # excerpt of the line that names the task fits; an empty pack's warning is
    # checked through the CLI at a budget of 1 (test_bad_input.py)
    ((is_error, text),) = _session(
        repo, [("compose_context", {"task": "apply discount", "max_tokens": 128})]
    )
    assert not is_error, text
    doc = json.loads(text)
    assert 0 < doc["pack_tokens"] <= doc["pack_budget"] < 128
    assert "apply_discount" in doc["text"]


def test_unknown_model_is_a_warning_in_the_result(repo: Path) -> None:
    ((is_error, text),) = _session(
        repo, [("compose_context", {"task": "apply discount", "model": "frobnicator-9"})]
    )
    assert not is_error, text
    assert any("unknown model" in w for w in json.loads(text)["warnings"])
