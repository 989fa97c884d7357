"""Fixtures for provider tests: an isolated environment, real fake executables on
PATH, and real HTTP servers on loopback.

Nothing here can reach a developer's real ``claude``/``codex`` or a remote
server: PATH holds only a temp dir, HOME is a temp dir, OLLAMA_HOST and
LMSTUDIO_HOST point at closed loopback ports unless a test starts a server, and
``LIBRARIAN_ALLOW_REAL_PROVIDERS`` stays unset so the package's guard is active.
"""

from __future__ import annotations

import json
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

#: handler(method, path, body) -> (status, payload, delay_s); payload: bytes or JSON-able
Route = Callable[[str, str, Any], tuple[int, Any, float]]


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# autouse: every provider test runs with PATH, HOME and the server variables
# isolated, even one that forgets to ask for this fixture.


@dataclass
class Env:
    """The environment handed to registries and clients (never os.environ)."""

    bin: Path
    home: Path
    vars: dict[str, str] = field(default_factory=dict)

    def with_(self, **extra: str) -> dict[str, str]:
        return {**self.vars, **extra}


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    bin_dir = tmp_path / "bin"
    home = tmp_path / "home"
    bin_dir.mkdir()
    home.mkdir()
    for name in (
        "LIBRARIAN_ALLOW_REAL_PROVIDERS",
        "LIBRARIAN_LLM_PROVIDER",
        "LIBRARIAN_LLM_MODEL",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "OLLAMA_MODEL",
        "CLAUDE_MODEL",
        "CODEX_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("LMSTUDIO_HOST", f"http://127.0.0.1:{closed_port()}")
    return Env(
        bin=bin_dir,
        home=home,
        vars={
            "PATH": str(bin_dir),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "OLLAMA_HOST": f"127.0.0.1:{closed_port()}",
            "LMSTUDIO_HOST": f"http://127.0.0.1:{closed_port()}",
        },
    )


def make_exe(bin_dir: Path, name: str, body: str) -> Path:
    """A real executable ``name``: a Python script (shebang = this interpreter).

    ``body`` sees ``args`` (argv[1:]) and ``log(...)``, which appends the call to
    ``<bin>/<name>.calls.jsonl``.
    """
    path = bin_dir / name
    calls = bin_dir / f"{name}.calls.jsonl"
    head = (
        f"#!{sys.executable}\n"
        "import json, os, sys, time\n"
        "args = sys.argv[1:]\n"
        f"with open({str(calls)!r}, 'a') as _f:\n"
        "    _f.write(json.dumps(args) + '\\n')\n"
    )
    path.write_text(head + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def calls_of(bin_dir: Path, name: str) -> list[list[str]]:
    path = bin_dir / f"{name}.calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


CLAUDE_OK = """
if args == ["--version"]:
    print("2.0.14 (Claude Code)")
    sys.exit(0)
if args[:2] == ["auth", "status"]:
    print(json.dumps({"loggedIn": True, "authMethod": "claude.ai",
                      "email": "dev@example.invalid", "orgId": "org-secret"}))
    sys.exit(0)
sys.exit(2)
"""

CODEX_OK = """
if args == ["--version"]:
    print("codex-cli 0.46.0")
    sys.exit(0)
if args == ["login", "status"]:
    sys.stderr.write("Logged in using ChatGPT\\n")
    sys.exit(0)
sys.exit(2)
"""


class ModelServer:
    """A real HTTP server on 127.0.0.1 (port 0) answering from ``routes``."""

    def __init__(self, routes: dict[tuple[str, str], Route]) -> None:
        self.routes = routes
        self.requests: list[tuple[str, str, Any]] = []
        self._local = threading.local()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                server.requests.append((method, self.path, body))
                server._local.headers = self.headers
                route = server.routes.get((method, self.path))
                if route is None:
                    status, payload, delay = 404, {"error": "not found"}, 0.0
                else:
                    status, payload, delay = route(method, self.path, body)
                if delay:
                    time.sleep(delay)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout tests)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def log_message(self, format: str, *args: Any) -> None:
                return None

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return None

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def header(self, name: str) -> str:
        """A header of the request this thread is answering (for a route to read)."""
        return str(self._local.headers.get(name) or "")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[dict[tuple[str, str], Route]], ModelServer]]:
    servers: list[ModelServer] = []

    def start(routes: dict[tuple[str, str], Route]) -> ModelServer:
        server = ModelServer(routes)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def fixed(payload: Any, status: int = 200, delay: float = 0.0) -> Route:
    return lambda _m, _p, _b: (status, payload, delay)


def ollama_routes(
    models: list[str] | None = None, version: str = "0.12.3"
) -> dict[tuple[str, str], Route]:
    listed = ["llama3.2:latest", "qwen2.5-coder:7b"] if models is None else models
    return {
        ("GET", "/api/version"): fixed({"version": version}),
        ("GET", "/api/tags"): fixed(
            {"models": [{"name": m, "model": m, "size": 1} for m in listed]}
        ),
    }


def lmstudio_routes(models: list[str] | None = None) -> dict[tuple[str, str], Route]:
    listed = ["qwen2.5-7b-instruct"] if models is None else models
    return {
        ("GET", "/v1/models"): fixed(
            {"object": "list", "data": [{"id": m, "object": "model"} for m in listed]}
        ),
    }
