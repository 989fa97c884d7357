"""docs/mcp.md lists every tool and argument; stdio stdout carries JSON-RPC only."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from codelibrarian.mcp import build_server
from tests.helpers import GIT_ENV, make_repo

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def test_docs_list_every_tool_argument_and_resource(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n"})
    server = build_server(root)
    doc = DOC.read_text(encoding="utf-8")

    async def listing() -> tuple[list[tuple[str, list[str]]], list[str]]:
        tools = [(t.name, sorted(t.input_schema["properties"])) for t in await server.list_tools()]
        templates = [t.uri_template for t in await server.list_resource_templates()]
        return tools, templates

    tools, templates = anyio.run(listing)
    assert len(tools) == 11
    for name, args in tools:
        assert f"### `{name}`" in doc, name
        section = doc.split(f"### `{name}`", 1)[1].split("\n### ", 1)[0]
        for arg in args:
            assert f"| `{arg}` |" in section, (name, arg)
    for template in templates:
        assert f"`{template}`" in doc


@pytest.mark.slow
def test_stdio_stdout_is_protocol_only(tmp_path: Path) -> None:
    """Raw JSON-RPC over the pipes: every stdout line parses as a JSON-RPC message."""
    root = make_repo(tmp_path / "repo", {"src/a.py": "def answer():\n    return 42\n"})
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "compose_context",
                "arguments": {"task": "what does the answer function in src/a.py return"},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "query_codebase", "arguments": {"intent": "", "limit": 0}},
        },
    ]
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    errlog = tmp_path / "stderr.txt"
    with open(errlog, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "codelibrarian", "serve", "--repo", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout or ()])
        reader.start()
        replies: dict[int, dict[str, object]] = {}
        stdout: list[str] = []
        try:
            assert proc.stdin is not None
            for message in messages:  # keep stdin open until every reply is in
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
            while set(replies) != {1, 2, 3, 4}:
                line = lines.get(timeout=90)
                stdout.append(line)
                msg = json.loads(line)  # anything but JSON-RPC on stdout fails here
                assert msg["jsonrpc"] == "2.0"
                if "id" in msg:
                    replies[msg["id"]] = msg
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=10)
            if proc.stdout is not None:
                proc.stdout.close()
    while not lines.empty():  # whatever came after the last reply must be JSON-RPC too
        assert json.loads(lines.get())["jsonrpc"] == "2.0"
    stderr = errlog.read_text(encoding="utf-8")
    assert replies[1]["result"]["serverInfo"]["name"] == "codelibrarian"
    assert len(replies[2]["result"]["tools"]) == 11
    composed = replies[3]["result"]
    assert composed.get("isError") is not True
    assert "src/a.py" in json.loads(composed["content"][0]["text"])["text"]
    assert replies[4]["result"]["isError"] is True
    assert str(root) not in stderr and "answer function" not in stderr
