"""Change logs: their entries repeat a task's words, the code to change is elsewhere."""

from __future__ import annotations

from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.sources.retrieved import is_history
from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo

AS_OF = 1_800_000_000


def _changelog() -> str:
    entries = "".join(
        f"## 1.{i}.0\n\n"
        f"- The retry schedule now caps retry delays for slow servers ({i}).\n"
        f"- Fixed the retry schedule backoff base when retries are capped ({i}).\n\n"
        for i in range(60, 0, -1)
    )
    return "# Changelog\n\n" + entries


def _code() -> str:
    return (
        "def retry_schedule(attempts, base):\n"
        "    delays = [base * 2 ** n for n in range(attempts)]\n"
        "    capped_delays = [min(d, 30.0) for d in delays]\n"
        "    return capped_delays\n\n\n"
        + "".join(
            f"def helper_{j}(value):\n    return value * {j} + 1  # arithmetic helper\n\n\n"
            for j in range(30)
        )
    )


def _block_tokens(text: str, path: str) -> int:
    """Tokens of the pack's block for ``path`` (0 when the pack has none)."""
    for block in text.split("\n### "):
        if block.removeprefix("### ").startswith(path + ":"):
            return get_tokenizer("gpt-4o").count(block)
    return 0


def test_a_change_log_gives_way_to_code_for_a_code_task(tmp_path: Path) -> None:
    """A change log whose entries repeat the task's words ranks high, but its entries
    record past changes: for a code task its excerpts count a fraction of their
    relevance, so the function the task names is shown whole and the log takes
    little of a small pack; for a task about a release, the log keeps its place."""
    files = {
        "CHANGELOG.md": _changelog(),
        "pkg/retry.py": _code(),
        **{f"pkg/mod{i}.py": f"def unrelated_{i}(x):\n    return x + {i}\n" for i in range(6)},
    }
    repo = make_repo(tmp_path / "r", files)
    with Librarian(repo) as lib:
        lib.index()
        code = lib.compose(
            "cap the retry schedule delays for slow servers", budget=900, as_of=AS_OF, record=False
        )
        release = lib.compose(
            "write the release notes for the retry schedule caps",
            budget=900,
            as_of=AS_OF,
            record=False,
        )
    tok = get_tokenizer("gpt-4o")
    assert tok.count(code.text) <= 900 and tok.count(release.text) <= 900
    assert "    capped_delays = [min(d, 30.0) for d in delays]" in code.text
    assert "    delays = [base * 2 ** n for n in range(attempts)]" in code.text
    assert _block_tokens(code.text, "CHANGELOG.md") < _block_tokens(release.text, "CHANGELOG.md")
    assert _block_tokens(code.text, "CHANGELOG.md") <= 900 // 4


def test_change_logs_are_known_by_name_in_any_folder() -> None:
    for path in ("CHANGELOG.md", "History.md", "docs/HISTORY.rst", "NEWS", "CHANGES.txt"):
        assert is_history(path), path
    for path in ("src/history.py", "changes.go", "docs/guide.md", "news/feed.js"):
        assert not is_history(path), path
