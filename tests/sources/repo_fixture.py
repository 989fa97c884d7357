"""A small real git repository with rules, tests, a config file holding an AWS key
and a private key file, for the compose tests. Secrets are assembled at run time so
no secret-shaped literal sits in this repository."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import commit_all, make_repo, write_files

AS_OF = 1_800_000_000

AWS_KEY_ID = "AKIA" + "Z4QK7HN3WXJ2LP5T"
AWS_SECRET = "q8Vt3kPz9LmN2xRb7W" + "cYd4HjGf6SaE1uTo0iKlQm"
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n"
    f"{KEY_BODY}\n"
    "NhAAAAAwEAAQAAAYEAx3vQ9hL2pZk8mW1tR5yN0cJ7uF4dS6aB3eG9iK2lM5nO8pQ1rS4\n"
    "-----END OPENSSH " + "PRIVATE KEY-----\n"
)
#: strings that must never appear in any pack
SECRETS = (AWS_KEY_ID, AWS_SECRET, KEY_BODY)

HTTP_CLIENT = '''import time

from .retry import backoff


class HttpClient:
    """A tiny HTTP client with retries."""

    def __init__(self, base_url: str, retries: int = 3) -> None:
        self.base_url = base_url
        self.retries = retries

    def get(self, path: str) -> str:
        for attempt in range(self.retries):
            try:
                return self._send("GET", path)
            except ConnectionError:
                time.sleep(backoff(attempt))
        raise ConnectionError(path)

    def _send(self, method: str, path: str) -> str:
        return f"{method} {self.base_url}{path}"
'''

FILES: dict[str, str] = {
    "src/app/__init__.py": "",
    "src/app/http_client.py": HTTP_CLIENT,
    "src/app/retry.py": (
        "def backoff(attempt: int, base: float = 0.5) -> float:\n"
        '    """Exponential backoff delay for an attempt number."""\n'
        "    return base * (2 ** attempt)\n"
    ),
    "src/app/cache.py": (
        "class LruCache:\n"
        "    def __init__(self, size: int) -> None:\n"
        "        self.size = size\n"
        "        self.items: dict[str, str] = {}\n"
    ),
    "tests/test_http_client.py": (
        "from app.http_client import HttpClient\n\n\n"
        "def test_get_builds_the_url():\n"
        '    assert HttpClient("http://x").get("/a") == "GET http://x/a"\n'
    ),
    "AGENTS.md": "# Agent instructions\n\nRun `pytest -q` before committing.\n",
    "CONTRIBUTING.md": (
        "# Contributing\n\nThanks!\n\n## HTTP client\n\nEvery retry must use backoff.\n\n"
        "## Releases\n\nTag with vX.Y.Z.\n"
    ),
    ".cursor/rules/http.mdc": "---\nglobs: src/app/*.py\n---\nPrefer small functions.\n",
    "config/settings.py": (
        'REGION = "eu-west-1"\n'
        f'AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"\n'
        f'AWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"\n'
        "TIMEOUT_SECONDS = 30\n"
    ),
    "deploy/id_ed25519": PRIVATE_KEY,
}


def build_repo(root: Path) -> Path:
    """Commit the files, then leave a change in progress in the HTTP client."""
    make_repo(root, FILES)
    write_files(
        root,
        {
            "src/app/http_client.py": HTTP_CLIENT
            + "\n    def post(self, path: str, body: str) -> str:\n"
            + '        return self._send("POST", path)\n'
        },
    )
    return root


def commit(root: Path) -> None:
    commit_all(root, "more")


def warm_tokenizers() -> None:
    """Load bpe-openai once with its DeprecationWarning silenced (filterwarnings=error).

    bpe-openai 0.1.4 calls the deprecated ``importlib.resources.open_binary`` on
    first use; the library itself is fine.
    """
    import warnings

    from codelibrarian.tokens import get_tokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        get_tokenizer("gpt-4o").count("warm up")
        get_tokenizer("gpt-4").count("warm up")
