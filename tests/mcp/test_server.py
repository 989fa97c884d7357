"""``librarian serve`` end to end: a real subprocess driven by the mcp SDK's own client.

One scripted session per transport (stdio, streamable HTTP on a free loopback
port) runs against a real git repository (rules, a change in progress, secrets)
and records a transcript; the tests below check it. Starting a server costs a
few seconds, so each transport is started once per module.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from codelibrarian.tokens import get_tokenizer
from mcp import Client, StdioServerParameters, stdio_client
from tests.helpers import GIT_ENV, write_files
from tests.sources.repo_fixture import AS_OF, SECRETS, build_repo, warm_tokenizers

pytestmark = pytest.mark.slow

TOOLS = {
    "compose_context",
    "query_codebase",
    "build_context_pack",
    "explain_decision",
    "index_status",
    "run_start",
    "run_next",
    "run_submit",
    "run_status",
    "plan",
    "advise",
}
TEMPLATES = {
    "resources://runs/{id}/context/{agent}.lcp.json",
    "resources://runs/{id}/handoff/{name}.json",
    "resources://runs/{id}/ledger.jsonl",
    "resources://runs/{id}/steps/{dispatch}/context.md",
}
TASK = "add a post method with retry backoff to HttpClient"
#: a hand-written run artifact, so resources are tested whether or not packs exist yet
PLANNER_PACK = {"schema": "test", "goal": "plan the retry work", "anchors": []}
HANDOFF = {"from": "Planner", "to": "Implementer", "notes": "start with backoff()"}
BUDGETS = (128, 400, 1500)


def _server_env() -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "NO_COLOR": "1"}
    env.pop("LIBRARIAN_LLM_PROVIDER", None)
    return env


def _text(result: Any) -> str:
    assert len(result.content) == 1, "a tool answers with exactly one text block"
    return str(result.content[0].text)


async def _script(client: Client, record: dict[str, Any]) -> None:
    """The conversation every transport goes through; everything lands in ``record``."""
    tools = await client.list_tools()
    record["tools"] = {t.name: t for t in tools.tools}
    templates = await client.list_resource_templates()
    record["templates"] = {t.uri_template for t in templates.resource_templates}
    resources = await client.list_resources()
    record["resources"] = {str(r.uri) for r in resources.resources}

    composed = await client.call_tool("compose_context", {"task": TASK, "max_tokens": 3000})
    record["compose"] = composed
    decision_id = json.loads(_text(composed))["decision_id"] if not composed.is_error else "x"
    record["explain"] = await client.call_tool("explain_decision", {"decision_id": decision_id})
    record["query"] = await client.call_tool(
        "query_codebase", {"intent": "retry backoff for the http client", "semantic": False}
    )
    record["query_secret"] = await client.call_tool(
        "query_codebase", {"intent": "AWS region settings timeout", "semantic": False}
    )
    record["status"] = await client.call_tool("index_status", {"refresh": True})
    record["pack"] = await client.call_tool(
        "build_context_pack", {"goal": TASK, "agent": "Implementer"}
    )
    record["plan"] = await client.call_tool(
        "plan", {"intent": "why does the retry backoff never stop", "as_of": AS_OF}
    )
    record["advise"] = await client.call_tool("advise", {})
    if not record["pack"].is_error:
        uri = json.loads(_text(record["pack"]))["uri"]
        record["pack_resource"] = await client.read_resource(uri)

    # bad arguments, a failing library call, a missing resource: errors, and the server lives on
    record["bad_type"] = await client.call_tool("query_codebase", {"intent": 42})
    record["bad_budget"] = await client.call_tool(
        "compose_context", {"task": TASK, "max_tokens": 5}
    )
    record["unknown_decision"] = await client.call_tool(
        "explain_decision", {"decision_id": "0123456789abcdef"}
    )
    record["missing_required"] = await client.call_tool("compose_context", {})
    try:
        await client.read_resource("resources://runs/nope/context/Planner.lcp.json")
        record["missing_resource"] = None
    except Exception as exc:  # the SDK raises the protocol error
        record["missing_resource"] = exc
    try:
        await client.read_resource("resources://runs/r1/context/Broken.lcp.json")
        record["broken_resource"] = None
    except Exception as exc:
        record["broken_resource"] = exc
    record["after_errors"] = await client.call_tool("index_status", {})

    # run artifacts written by hand are served by the templates
    record["planner"] = await client.read_resource("resources://runs/r1/context/Planner.lcp.json")
    record["runs_index"] = await client.read_resource("resources://runs/index.json")
    index = json.loads(record["runs_index"].contents[0].text)
    (r1,) = (r for r in index["runs"] if r["id"] == "r1")
    record["handoff"] = await client.read_resource(r1["handoff"][0])  # percent-encoded arrow
    record["handoff_raw"] = await client.read_resource(
        "resources://runs/r1/handoff/Planner→Implementer.json"
    )

    # same arguments and as_of: the same answer
    repeat = {"task": TASK, "max_tokens": 1500, "as_of": AS_OF}
    record["compose_twice"] = [await client.call_tool("compose_context", repeat) for _ in "ab"]
    ask = {"intent": "HttpClient retry", "semantic": False, "as_of": AS_OF, "max_tokens": 700}
    record["query_twice"] = [await client.call_tool("query_codebase", ask) for _ in "ab"]

    # budgets: every tool at several caps
    budgeted: list[tuple[str, int, Any]] = []
    calls: dict[str, dict[str, Any]] = {
        "compose_context": {"task": TASK},
        "query_codebase": {"intent": "HttpClient retry backoff", "semantic": False},
        "explain_decision": {"decision_id": decision_id},
        "index_status": {},
        "plan": {"intent": "add a timeout option to HttpClient", "as_of": AS_OF},
        "advise": {},
    }
    for name, args in calls.items():
        for cap in BUDGETS:
            budgeted.append((name, cap, await client.call_tool(name, {**args, "max_tokens": cap})))
    record["budgeted"] = budgeted


def _prepare(root: Path) -> Path:
    build_repo(root)
    write_files(
        root,
        {
            ".librarian/runs/r1/context/Planner.lcp.json": json.dumps(PLANNER_PACK),
            ".librarian/runs/r1/handoff/Planner→Implementer.json": json.dumps(HANDOFF),
            ".librarian/runs/r1/context/Broken.lcp.json": b"\xff\xfe not utf-8",
        },
    )
    return root


def _run(script: Callable[[dict[str, Any]], Awaitable[None]]) -> dict[str, Any]:
    record: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(150):
            await script(record)

    anyio.run(main)
    return record


@pytest.fixture(scope="module")
def stdio_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    warm_tokenizers()
    return _prepare(tmp_path_factory.mktemp("stdio") / "repo")


@pytest.fixture(scope="module")
def stdio_run(stdio_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    errlog = tmp_path_factory.mktemp("stdio-log") / "stderr.txt"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codelibrarian", "serve", "--repo", str(stdio_repo)],
        env=_server_env(),
        cwd=str(stdio_repo),
    )

    async def script(record: dict[str, Any]) -> None:
        with open(errlog, "w", encoding="utf-8") as err:
            # the SDK's own stdio transport, with the server's stderr captured
            async with Client(stdio_client(params, errlog=err)) as client:
                await _script(client, record)

    record = _run(script)
    record["stderr"] = errlog.read_text(encoding="utf-8") if errlog.exists() else ""
    return record


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early with {proc.returncode}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("the HTTP server did not start listening")


@pytest.fixture(scope="module")
def http_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    warm_tokenizers()
    root = _prepare(tmp_path_factory.mktemp("http") / "repo")
    port = _free_port()
    logs = tmp_path_factory.mktemp("http-log")
    with open(logs / "out.txt", "wb") as out, open(logs / "err.txt", "wb") as err:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "codelibrarian", "serve", "--transport", "http"),
                *("--host", "127.0.0.1", "--port", str(port), "--repo", str(root)),
            ],
            stdout=out,
            stderr=err,
            env=_server_env(),
            cwd=root,
        )
        try:
            _wait_for_port(port, proc)

            async def script(record: dict[str, Any]) -> None:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    await _script(client, record)

            record = _run(script)
            record["alive_after_session"] = proc.poll() is None
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    record["stdout"] = (logs / "out.txt").read_text(encoding="utf-8", errors="replace")
    record["stderr"] = (logs / "err.txt").read_text(encoding="utf-8", errors="replace")
    record["root"] = str(root)
    yield record


@pytest.fixture(params=["stdio", "http"])
def run(request: pytest.FixtureRequest) -> dict[str, Any]:
    record: dict[str, Any] = request.getfixturevalue(f"{request.param}_run")
    return record


# ------------------------------------------------------------------ listing


def test_lists_every_tool_with_json_schemas(run: dict[str, Any]) -> None:
    tools = run["tools"]
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        schema = tool.input_schema
        assert schema["type"] == "object", name
        props = schema["properties"]
        assert "lib" not in props
        cap = props["max_tokens"]
        assert cap["type"] == "integer" and cap["minimum"] == 128 and cap["default"] > 0, name
        assert tool.description, name
    assert tools["compose_context"].input_schema["required"] == ["task"]
    assert tools["query_codebase"].input_schema["required"] == ["intent"]
    assert tools["explain_decision"].input_schema["required"] == ["decision_id"]
    assert tools["plan"].input_schema["required"] == ["intent"]
    assert "required" not in tools["advise"].input_schema
    depth = tools["query_codebase"].input_schema["properties"]["depth"]
    assert depth["enum"] == ["L0", "L1", "L2", "L3"]


def test_plan_and_advise_answer_through_the_client(run: dict[str, Any]) -> None:
    plan = run["plan"]
    assert not plan.is_error, _text(plan)
    doc = json.loads(_text(plan))
    assert doc["workflow"] and doc["steps"]
    assert all(0 < s["context_tokens"] <= s["budget_tokens"] for s in doc["steps"])
    advice = run["advise"]
    assert not advice.is_error, _text(advice)
    doc = json.loads(_text(advice))
    assert 3 <= len(doc["suggestions"]) <= 5


def test_lists_run_resources_and_templates(run: dict[str, Any]) -> None:
    assert run["templates"] == TEMPLATES
    assert "resources://runs/index.json" in run["resources"]


# ------------------------------------------------------------------- tools


def test_compose_context_returns_a_pack_with_a_decision(run: dict[str, Any]) -> None:
    result = run["compose"]
    assert not result.is_error, _text(result)
    doc = json.loads(_text(result))
    assert doc["decision_id"]
    assert doc["pack_tokens"] <= doc["pack_budget"]
    assert "src/app/http_client.py" in doc["text"]  # the change in progress is pinned
    assert any(a["lane"] == "local" for a in doc["artifacts"])


def test_explain_decision_explains_the_composed_pack(run: dict[str, Any]) -> None:
    compose = json.loads(_text(run["compose"]))
    result = run["explain"]
    assert not result.is_error, _text(result)
    doc = json.loads(_text(result))
    assert doc["decision_id"] == compose["decision_id"]
    assert len(doc["selected"]) == len(compose["artifacts"])
    assert [s["stage"] for s in doc["locate"]] == ["retrieval", "expansion", "scoring", "map"]
    text = _text(result)
    assert "src/app" not in text  # decision records carry ids, never paths


def test_query_codebase_ranks_files_with_code(run: dict[str, Any]) -> None:
    result = run["query"]
    assert not result.is_error, _text(result)
    doc = json.loads(_text(result))
    assert doc["status"] == "completed"
    paths = [r["path"] for r in doc["results"]]
    assert paths and any(p.startswith("src/app/") for p in paths[:3])
    assert any("code" in r for r in doc["results"])


def test_index_status_reports_counts(run: dict[str, Any]) -> None:
    result = run["status"]
    assert not result.is_error, _text(result)
    doc = json.loads(_text(result))
    assert doc["indexed"] is True and doc["files"] >= 5
    assert doc["languages"]["python"] >= 2
    assert doc["refreshed"]["parsed"] + doc["refreshed"]["unchanged"] >= 5
    assert doc["decisions"] >= 1


def test_no_secret_leaves_through_any_tool(run: dict[str, Any]) -> None:
    texts = [_text(run[k]) for k in ("compose", "explain", "query", "query_secret", "status")]
    texts += [_text(r) for _n, _c, r in run["budgeted"]]
    for secret in SECRETS:
        assert not any(secret in t for t in texts)
    # the settings file is found, its code shown, its secrets redacted span by span
    found = json.loads(_text(run["query_secret"]))["results"]
    settings = next(r for r in found if r["path"] == "config/settings.py")
    code = "".join(settings["code"])
    assert 'REGION = "eu-west-1"' in code and "[REDACTED:" in code


def test_build_context_pack_writes_an_lcp_resource(run: dict[str, Any]) -> None:
    result = run["pack"]
    assert not result.is_error, _text(result)
    doc = json.loads(_text(result))
    assert doc["uri"] == f"resources://runs/{doc['run_id']}/context/Implementer.lcp.json"
    assert doc["token_estimate"] <= doc["budget_tokens"]
    contents = run["pack_resource"].contents
    assert len(contents) == 1
    lcp = json.loads(contents[0].text)
    assert lcp["goal"] == TASK and lcp["agent"] == "Implementer"
    assert lcp == doc["pack"]  # the tool showed the very pack the resource serves


def test_hand_written_run_artifacts_are_served(run: dict[str, Any]) -> None:
    planner = run["planner"].contents[0]
    assert planner.mime_type == "application/json"
    assert json.loads(planner.text) == PLANNER_PACK
    assert json.loads(run["handoff"].contents[0].text) == HANDOFF
    assert json.loads(run["handoff_raw"].contents[0].text) == HANDOFF
    index = json.loads(run["runs_index"].contents[0].text)
    r1 = next(r for r in index["runs"] if r["id"] == "r1")
    assert "resources://runs/r1/context/Planner.lcp.json" in r1["context"]
    assert r1["handoff"] == ["resources://runs/r1/handoff/Planner%E2%86%92Implementer.json"]


# ------------------------------------------------------------------ errors


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(run: dict[str, Any]) -> None:
    assert run["bad_type"].is_error
    assert "intent" in _text(run["bad_type"])
    assert run["bad_budget"].is_error
    assert "max_tokens" in _text(run["bad_budget"])
    assert run["missing_required"].is_error
    assert "task" in _text(run["missing_required"])
    assert not run["after_errors"].is_error
    assert json.loads(_text(run["after_errors"]))["indexed"] is True


def test_library_errors_carry_the_library_message(run: dict[str, Any]) -> None:
    result = run["unknown_decision"]
    assert result.is_error
    assert "no decision '0123456789abcdef'" in _text(result)


def test_an_unreadable_resource_is_an_error_without_a_path(run: dict[str, Any]) -> None:
    exc = run["broken_resource"]
    assert exc is not None
    assert "cannot read the context artifact: UnicodeDecodeError" in str(exc)
    assert "resource=context crash=UnicodeDecodeError" in run["stderr"]
    assert ".librarian" not in run["stderr"]


def test_a_missing_resource_is_a_protocol_error(run: dict[str, Any]) -> None:
    exc = run["missing_resource"]
    assert exc is not None
    assert "no run resource resources://runs/nope/context/Planner.lcp.json" in str(exc)
    assert getattr(exc, "code", None) == -32602  # invalid params: the resource does not exist


def test_same_arguments_and_as_of_give_the_same_answer(run: dict[str, Any]) -> None:
    first, second = (json.loads(_text(r)) for r in run["compose_twice"])
    assert second["cache_hit"]  # the second identical call is served from the cache
    first.pop("cache_hit")
    second.pop("cache_hit")
    assert first == second
    q1, q2 = (_text(r) for r in run["query_twice"])
    assert q1 == q2


# ------------------------------------------------------------------ budgets


def test_no_tool_result_exceeds_its_token_budget(run: dict[str, Any]) -> None:
    tok = get_tokenizer("gpt-4o")
    sizes: dict[str, list[int]] = {}
    for name, cap, result in run["budgeted"]:
        text = _text(result)
        assert tok.count(text) <= cap, (name, cap, tok.count(text))
        if not result.is_error:
            json.loads(text)  # still a whole JSON document after shrinking
        sizes.setdefault(name, []).append(tok.count(text))
    # the cap bites: small caps cut (or, for compose, may be infeasible), large ones do not
    results = {(n, c): r for n, c, r in run["budgeted"]}
    tiny = results[("compose_context", 128)]
    assert not tiny.is_error or "budget" in _text(tiny).lower()
    for name in ("compose_context", "query_codebase", "explain_decision"):
        small = json.loads(_text(results[(name, 400)]))
        large = json.loads(_text(results[(name, 1500)]))
        assert "truncated" in small or name == "compose_context", name
        assert sizes[name][1] <= sizes[name][2], name
        assert large.get("decision_id", large.get("query_id"))
    assert "truncated" in json.loads(_text(results[("query_codebase", 128)]))
    small_pack = json.loads(_text(results[("compose_context", 400)]))
    assert small_pack["pack_tokens"] <= small_pack["pack_budget"] < 400


# --------------------------------------------------------------- discipline


def test_logs_carry_no_paths_or_content(run: dict[str, Any]) -> None:
    err = run["stderr"]
    assert "tool=compose_context ok" in err or "tool=compose_context" in err
    assert "src/app" not in err
    assert TASK not in err
    for secret in SECRETS:
        assert secret not in err


def test_http_server_writes_nothing_to_stdout_and_survives_the_session(
    http_run: dict[str, Any],
) -> None:
    assert http_run["stdout"] == ""
    assert http_run["alive_after_session"]
    assert http_run["root"] not in http_run["stderr"]
