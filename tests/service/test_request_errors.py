"""One mistake, one error, the same words on every shell.

Each row below makes one mistake through the real CLI entry point (both the quick
parser and the typer command for ``compose``), through the facade, and — where the
tool takes that option — through the real MCP client connected to the server. All
of them must give the same message (and, where the option's choices are the same,
the same hint), naming the phrase the row expects.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from codelibrarian.api import Librarian
from codelibrarian.errors import UsageError
from codelibrarian.mcp.server import build_server
from mcp import Client
from tests.helpers import make_repo, run_cli, run_typer
from tests.sources.repo_fixture import warm_tokenizers

FILES = {
    "shop/pricing.py": "def apply_discount(total, rate):\n    return total * (1 - rate)\n",
    "shop/cart.py": "from shop.pricing import apply_discount\n\n\nclass Cart:\n    pass\n",
}
TASK = "apply a discount"
DIFF = "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1 +1 @@\n-x\n+y\n"


@dataclass(frozen=True)
class Mistake:
    """One mistake as each shell spells it (``mcp`` None: the tool has no such option)."""

    name: str
    command: str  # compose or query
    text: str  # the task or intent
    cli: list[str]
    api: dict[str, Any]
    phrase: str
    mcp: dict[str, Any] | None = None
    #: the MCP tool offers other choices (its hint lists its own)
    mcp_hint_differs: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


MISTAKES = [
    Mistake(
        "budget below the smallest pack",
        "compose",
        TASK,
        ["--budget", "1"],
        {"budget": 1},
        "a budget of 1 token is too small for any pack",
    ),
    Mistake(
        "budget below the smallest xml pack of an unknown model",
        "compose",
        TASK,
        ["--budget", "32", "--format", "xml", "--model", "frobnicator-9"],
        {"budget": 32, "fmt": "xml", "model": "frobnicator-9"},
        "a budget of 32 tokens is too small for any pack",
        # the tool leaves 128 - 96 = 32 tokens of its smallest cap for the pack
        mcp={"max_tokens": 128, "format": "xml", "model": "frobnicator-9"},
    ),
    Mistake(
        "negative budget",
        "compose",
        TASK,
        ["--budget=-5"],
        {"budget": -5},
        "the budget must be between 1 and 10,000,000 tokens (got -5)",
    ),
    Mistake(
        "budget above any model",
        "compose",
        TASK,
        ["--budget", "10000001"],
        {"budget": 10_000_001},
        "the budget must be between 1 and 10,000,000 tokens",
    ),
    Mistake(
        "unknown format",
        "compose",
        TASK,
        ["--format", "yaml"],
        {"fmt": "yaml"},
        "unknown format 'yaml'",
        mcp={"format": "yaml"},
        mcp_hint_differs=True,
    ),
    Mistake("empty task", "compose", "   ", [], {}, "the task is empty", mcp={}),
    Mistake(
        "blank model",
        "compose",
        TASK,
        ["--model", " "],
        {"model": " "},
        "the model is empty",
        mcp={"model": " "},
    ),
    Mistake(
        "base and diff together",
        "compose",
        TASK,
        ["--base", "HEAD", "--diff", "DIFF_FILE"],
        {"base": "HEAD", "diff_text": DIFF},
        "a base revision and a diff exclude each other",
    ),
    Mistake(
        "as_of before 1970",
        "compose",
        TASK,
        ["--as-of=-5"],
        {"as_of": -5},
        "as_of must be between 0 and 253,402,300,799 (got -5)",
        mcp={"as_of": -5},
    ),
    Mistake(
        "unknown event",
        "compose",
        TASK,
        ["--event", "bogus"],
        {"event": "bogus"},
        "unknown trigger event 'bogus'",
    ),
    Mistake(
        "a file outside the repository",
        "compose",
        TASK,
        ["--files", "../elsewhere.py"],
        {"files": ["../elsewhere.py"]},
        "'../elsewhere.py' is outside the repository",
        mcp={"files": ["../elsewhere.py"]},
    ),
    Mistake(
        "unknown depth",
        "query",
        TASK,
        ["--depth", "L9"],
        {"depth": "L9"},
        "unknown depth 'L9'",
        mcp={"depth": "L9"},
    ),
    Mistake(
        "no files asked for",
        "query",
        TASK,
        ["--limit", "0"],
        {"limit": 0},
        "limit must be between 1 and 200 files (got 0)",
        mcp={"limit": 0},
    ),
    Mistake("empty intent", "query", "\t", [], {}, "the intent is empty", mcp={}),
    Mistake(
        "query budget of nothing",
        "query",
        TASK,
        ["--budget", "0"],
        {"budget": 0},
        "the budget must be between 1 and 10,000,000 tokens (got 0)",
    ),
]
TOOLS = {"compose": ("compose_context", "task"), "query": ("query_codebase", "intent")}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    warm_tokenizers()
    root = make_repo(tmp_path_factory.mktemp("errors") / "shop", FILES)
    (root.parent / "change.diff").write_text(DIFF, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def mcp_answers(repo: Path) -> dict[str, str]:
    """Every MCP-spelled mistake through one session of the real client."""
    out: dict[str, str] = {}

    async def main() -> None:
        with anyio.fail_after(300):
            async with Client(build_server(repo)) as client:
                for m in MISTAKES:
                    if m.mcp is None:
                        continue
                    tool, text_arg = TOOLS[m.command]
                    result = await client.call_tool(tool, {text_arg: m.text, **m.mcp})
                    assert result.is_error, (m.name, result.content)
                    text = "\n".join(str(getattr(c, "text", "")) for c in result.content)
                    out[m.name] = text.removeprefix(f"Error executing tool {tool}: ")

    anyio.run(main)
    return out


def _argv(m: Mistake, repo: Path) -> list[str]:
    cli = [str(repo.parent / "change.diff") if a == "DIFF_FILE" else a for a in m.cli]
    return [m.command, m.text, *cli, "-C", str(repo)]


def _from_stderr(code: int, err: str) -> tuple[str, str | None]:
    """The message and hint of a CLI error: ``error: MESSAGE`` then the hint, on stderr."""
    assert code == 2 and err.startswith("error: "), (code, err)
    message, _, hint = err.removeprefix("error: ").rstrip("\n").partition("\n")
    return message, hint or None


def _shells(m: Mistake, repo: Path, mcp_answers: dict[str, str]) -> Iterator[tuple[str, Any]]:
    argv = _argv(m, repo)
    done = run_cli(*argv)
    yield "cli", _from_stderr(done.returncode, done.stderr)
    if m.command == "compose":  # the typer command, besides the quick parser above
        code, _out, err = run_typer("compose_cmds", argv)
        yield "typer", _from_stderr(code, err)
    with Librarian(repo) as lib, pytest.raises(UsageError) as caught:
        getattr(lib, m.command)(m.text, **m.api)
    yield "api", (caught.value.message, caught.value.hint)
    if m.mcp is not None:
        message, _, hint = mcp_answers[m.name].partition("\n")
        yield "mcp", (message, hint or None)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_one_mistake_gives_one_message_on_every_shell(
    mistake: Mistake, repo: Path, mcp_answers: dict[str, str]
) -> None:
    got = dict(_shells(mistake, repo, mcp_answers))
    messages = {shell: message for shell, (message, _hint) in got.items()}
    assert mistake.phrase in messages["api"], messages
    assert len(set(messages.values())) == 1, messages
    hints = {
        shell: hint
        for shell, (_message, hint) in got.items()
        if not (shell == "mcp" and mistake.mcp_hint_differs)
    }
    assert len(set(hints.values())) == 1, hints


def test_with_json_the_error_is_the_one_document_on_stdout(repo: Path) -> None:
    done = run_cli("compose", TASK, "--budget", "1", "--json", "-C", str(repo))
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    assert doc["ok"] is False and doc["error"] == "usage_error" and doc["exit_code"] == 2
    with Librarian(repo) as lib, pytest.raises(UsageError) as caught:
        lib.compose(TASK, budget=1)
    assert (doc["message"], doc["hint"]) == (caught.value.message, caught.value.hint)


def test_the_smallest_budget_named_is_one_that_works(repo: Path) -> None:
    with Librarian(repo) as lib:
        with pytest.raises(UsageError) as caught:
            lib.compose(TASK, budget=1, record=False)
        hint = caught.value.hint or ""
        smallest = int(hint.split("at least ", 1)[1].split()[0])
        result = lib.compose(TASK, budget=smallest, record=False)
    assert result.tokens <= smallest


def test_an_unknown_model_is_the_same_warning_everywhere(repo: Path) -> None:
    model = "frobnicator-9"
    done = run_cli("compose", TASK, "--model", model, "--json", "-C", str(repo))
    assert done.returncode == 0, done.stderr
    cli = [w for w in json.loads(done.stdout)["warnings"] if "unknown model" in w]
    with Librarian(repo) as lib:
        api = [w for w in lib.compose(TASK, model=model).warnings if "unknown model" in w]
    texts: list[str] = []

    async def main() -> None:
        async with Client(build_server(repo)) as client:
            result = await client.call_tool("compose_context", {"task": TASK, "model": model})
            texts.append(str(getattr(result.content[0], "text", "")))

    anyio.run(main)
    mcp = [w for w in json.loads(texts[0])["warnings"] if "unknown model" in w]
    assert cli == api == mcp and len(cli) == 1
