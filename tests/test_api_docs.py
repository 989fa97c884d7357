"""The examples in docs/api.md run, in order and in one namespace, in a real git repo.

The repository below is the one docs/api.md describes; change both together.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_repo, write_files
from tests.sources.repo_fixture import warm_tokenizers

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"

HTTP_CLIENT = '''"""A tiny HTTP client."""

import time

from .retry import backoff


class HttpClient:
    """Sends requests, retrying failures with backoff."""

    def __init__(self, base_url: str, retries: int = 3) -> None:
        self.base_url = base_url
        self.retries = retries

    def get(self, path: str) -> str:
        for attempt in range(self.retries):
            try:
                return self._send("GET", path)
            except OSError:
                time.sleep(backoff(attempt))
        raise OSError("gave up")

    def _send(self, method: str, path: str) -> str:
        return f"{method} {self.base_url}{path}"
'''

FILES = {
    "src/app/__init__.py": "",
    "src/app/http_client.py": HTTP_CLIENT,
    "src/app/retry.py": (
        "def backoff(attempt: int) -> float:\n"
        '    """Seconds to wait before retry number ``attempt`` (exponential backoff)."""\n'
        "    return 0.1 * 2**attempt\n"
    ),
    "tests/test_http.py": (
        "from app.http_client import HttpClient\n\n\n"
        "def test_get() -> None:\n"
        '    assert HttpClient("http://x").get("/a") == "GET http://x/a"\n'
    ),
    "AGENTS.md": "# Rules\n\nUse backoff() from src/app/retry.py for every retry.\n",
}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)


def test_the_doc_has_examples_for_every_public_method() -> None:
    code = "\n".join(python_blocks(DOC.read_text(encoding="utf-8")))
    for method in ("index", "index_status", "compose", "explain", "replay", "query", "window"):
        assert f"lib.{method}(" in code, method
    for method in ("pack", "handoff", "runs", "resource", "facts", "presets"):
        assert f"lib.{method}(" in code, method


@pytest.mark.slow
def test_api_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warm_tokenizers()
    root = make_repo(tmp_path / "repo", FILES)
    # the change in progress: a post() method, not yet committed
    write_files(
        root,
        {
            "src/app/http_client.py": HTTP_CLIENT
            + "\n    def post(self, path: str) -> str:\n"
            + '        return self._send("POST", path)\n'
        },
    )
    monkeypatch.chdir(root)
    monkeypatch.delenv("LIBRARIAN_LLM_PROVIDER", raising=False)
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    namespace: dict[str, Any] = {"__name__": "docs_api"}
    try:
        for i, block in enumerate(blocks, start=1):
            exec(compile(block, f"docs/api.md (python block {i})", "exec"), namespace)
    finally:
        lib = namespace.get("lib")
        if lib is not None:
            lib.close()


def test_index_status_tracks_the_workspace_and_query_checks_arguments(tmp_path: Path) -> None:
    from codelibrarian.api import Librarian
    from codelibrarian.errors import UsageError

    warm_tokenizers()
    root = make_repo(tmp_path / "repo", FILES)
    with Librarian(root) as lib:
        before = lib.index_status()
        assert not before.indexed and before.stale and before.files == 0
        assert not (root / ".librarian" / "index.db").exists()  # status never builds it
        lib.index()
        fresh = lib.index_status()
        assert fresh.indexed and not fresh.stale and fresh.files == len(FILES)
        write_files(root, {"src/app/retry.py": "def backoff(attempt):\n    return 1.0\n"})
        write_files(root, {"src/app/extra.py": "X = 1\n"})
        (root / "AGENTS.md").unlink()
        moved = lib.index_status()
        assert (moved.modified_files, moved.new_files, moved.deleted_files) == (1, 1, 1)
        assert moved.stale and "src/" not in str(moved.to_dict())
        for bad in ({"depth": "L9"}, {"limit": 0}, {"budget": 0}):
            try:
                lib.query("backoff", **bad)  # type: ignore[arg-type]
            except UsageError:
                continue
            raise AssertionError(f"{bad} was accepted")
        window = lib.window("goal text", map_text="a map", total=50)
        assert [s.kind for s in window.slots] == ["goal", "map"]
