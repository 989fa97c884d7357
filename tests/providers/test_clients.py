"""Chat and embedding clients against loopback servers and fake CLIs on PATH."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from codelibrarian.errors import ProviderCallFailed
from codelibrarian.providers import (
    ChatMessage,
    ClaudeCliClient,
    ClientOptions,
    CodexCliClient,
    LlmClient,
    LmStudioClient,
    OllamaClient,
    RetryPolicy,
    client_for,
    default_registry,
)

from .conftest import Env, ModelServer, Route, calls_of, closed_port, fixed, make_exe

Serve = Callable[[dict[tuple[str, str], Route]], ModelServer]
SCHEMA = {
    "type": "object",
    "properties": {"status": {"type": "string"}},
    "required": ["status"],
}


def opts(env: Env, sleeps: list[float] | None = None, **kw: Any) -> ClientOptions:
    record = sleeps if sleeps is not None else []
    return ClientOptions(env=env.vars, sleep=record.append, **kw)


def ollama_chat(content: str, status: int = 200) -> Route:
    return fixed(
        {
            "model": "llama3.2",
            "message": {"role": "assistant", "content": content},
            "done": True,
            "prompt_eval_count": 26,
            "eval_count": 7,
        },
        status=status,
    )


def test_ollama_chat_with_schema(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): ollama_chat('{"status": "ok"}')})
    client = OllamaClient(model="llama3.2", options=opts(env, base_url=server.url))
    assert isinstance(client, LlmClient)
    answer = client.chat(
        [ChatMessage("system", "be terse"), ChatMessage("user", "hi")],
        schema=SCHEMA,
        temperature=0.0,
        max_tokens=50,
    )
    assert answer.data == {"status": "ok"} and answer.require_data() == {"status": "ok"}
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (26, 7)
    method, path, body = server.requests[0]
    assert (method, path) == ("POST", "/api/chat")
    assert body["stream"] is False and body["format"] == SCHEMA
    assert body["options"] == {"temperature": 0.0, "num_predict": 50}
    assert body["messages"][0] == {"role": "system", "content": "be terse"}


def test_ollama_base_url_from_env(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): ollama_chat("hello")})
    client = OllamaClient(
        model="llama3.2",
        options=ClientOptions(env={"OLLAMA_HOST": f"127.0.0.1:{server.port}"}),
    )
    assert client.chat([ChatMessage("user", "hi")]).text == "hello"


def test_invalid_json_is_reported_not_raised(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): ollama_chat("Sure! Here it is: ok")})
    client = OllamaClient(model="m", options=opts(env, base_url=server.url))
    answer = client.chat([ChatMessage("user", "json please")], schema=SCHEMA)
    assert answer.data is None and answer.json_error is not None
    with pytest.raises(ProviderCallFailed) as info:
        answer.require_data()
    assert info.value.kind == "schema"
    wrong = serve({("POST", "/api/chat"): ollama_chat('{"state": 1}')})
    client = OllamaClient(model="m", options=opts(env, base_url=wrong.url))
    answer = client.chat([ChatMessage("user", "json please")], schema=SCHEMA)
    assert answer.schema_errors == ("$: missing required 'status'",)


def test_ollama_embed(env: Env, serve: Serve) -> None:
    server = serve(
        {
            ("POST", "/api/embed"): fixed(
                {"model": "nomic", "embeddings": [[0.1, 0.2], [0.3, 0.4]], "prompt_eval_count": 4}
            )
        }
    )
    client = OllamaClient(model="nomic", options=opts(env, base_url=server.url))
    result = client.embed(["a", "b"])
    assert result.vectors == ((0.1, 0.2), (0.3, 0.4)) and result.usage.input_tokens == 4
    assert server.requests[0][2] == {"model": "nomic", "input": ["a", "b"]}


def test_ollama_embed_malformed(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/embed"): fixed({"embeddings": [[0.1]]})})  # one for two
    client = OllamaClient(model="nomic", options=opts(env, base_url=server.url))
    with pytest.raises(ProviderCallFailed) as info:
        client.embed(["a", "b"])
    assert info.value.kind == "malformed" and not info.value.retryable


def test_model_not_found_is_not_retried_and_says_how_to_fix(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): fixed({"error": "model not found"}, status=404)})
    sleeps: list[float] = []
    client = OllamaClient(model="llama9", options=opts(env, sleeps, base_url=server.url))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hi")])
    err = info.value
    assert (err.kind, err.status, err.retryable, err.attempts) == ("http_status", 404, False, 1)
    assert err.hint == "Pull the model first: ollama pull llama9"
    assert sleeps == [] and len(server.requests) == 1
    assert err.to_dict()["provider"] == "ollama"


def test_server_errors_are_retried_with_deterministic_jitter(env: Env, serve: Serve) -> None:
    answers = iter([(503, {"error": "busy"}), (500, {"error": "oops"}), (200, None)])

    def flaky(_m: str, _p: str, _b: Any) -> tuple[int, Any, float]:
        status, payload = next(answers)
        if status == 200:
            payload = {"message": {"role": "assistant", "content": "fine"}, "done": True}
        return status, payload, 0.0

    server = serve({("POST", "/api/chat"): flaky})
    sleeps: list[float] = []
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.5, seed="run-1")
    client = OllamaClient(model="m", options=opts(env, sleeps, base_url=server.url, retry=policy))
    answer = client.chat([ChatMessage("user", "hi")])
    assert answer.text == "fine" and answer.attempts == 3
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] < 0.75 and 0.5 <= sleeps[1] < 1.5
    # the same request under the same seed waits exactly the same
    answers = iter([(503, {}), (500, {}), (200, None)])
    again: list[float] = []
    client = OllamaClient(model="m", options=opts(env, again, base_url=server.url, retry=policy))
    client.chat([ChatMessage("user", "hi")])
    assert again == sleeps


def test_retry_policy_is_seeded_and_bounded() -> None:
    a, b = RetryPolicy(seed="x"), RetryPolicy(seed="y")
    assert [a.delay(n, "k") for n in (1, 2, 3)] == [a.delay(n, "k") for n in (1, 2, 3)]
    assert a.delay(1, "k") != b.delay(1, "k")
    capped = RetryPolicy(base_delay_s=1, max_delay_s=2)
    assert all(1.0 <= capped.delay(n, "k") < 3.0 for n in range(2, 10))


def test_connection_refused_exhausts_bounded_retries(env: Env) -> None:
    sleeps: list[float] = []
    client = OllamaClient(
        model="m",
        options=opts(env, sleeps, base_url=f"http://127.0.0.1:{closed_port()}",
                     retry=RetryPolicy(max_attempts=2)),
    )  # fmt: skip
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hi")])
    assert (info.value.kind, info.value.retryable, info.value.attempts) == ("connection", True, 2)
    assert len(sleeps) == 1


def test_timeout(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): fixed({}, delay=2.0)})
    client = OllamaClient(
        model="m",
        options=opts(env, base_url=server.url, timeout_s=0.3, retry=RetryPolicy(max_attempts=1)),
    )
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hi")])
    assert info.value.kind == "timeout" and "0.3s" in info.value.message


def test_malformed_chat_answer(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): fixed(b"<html>")})
    client = OllamaClient(model="m", options=opts(env, base_url=server.url))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hi")])
    assert info.value.kind == "malformed"


def test_non_loopback_blocked_under_tests(env: Env) -> None:
    client = OllamaClient(model="m", options=opts(env, base_url="http://203.0.113.9:11434"))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hi")])
    assert info.value.kind == "blocked"


def test_lmstudio_chat_and_embeddings(env: Env, serve: Serve) -> None:
    server = serve(
        {
            ("POST", "/v1/chat/completions"): fixed(
                {
                    "choices": [{"message": {"role": "assistant", "content": '{"status":"ok"}'}}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
                }
            ),
            ("POST", "/v1/embeddings"): fixed(
                {"data": [{"embedding": [1, 0]}], "usage": {"prompt_tokens": 2}}
            ),
        }
    )
    client = LmStudioClient(model="qwen", options=opts(env, base_url=server.url))
    answer = client.chat([ChatMessage("user", "hi")], schema=SCHEMA, max_tokens=9)
    assert answer.data == {"status": "ok"} and answer.usage.total_tokens == 16
    body = server.requests[0][2]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert body["max_tokens"] == 9
    emb = client.embed(["x"])
    assert emb.vectors == ((1.0, 0.0),) and emb.usage.input_tokens == 2


def test_lmstudio_malformed_choices(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/v1/chat/completions"): fixed({"choices": []})})
    client = LmStudioClient(model="qwen", options=opts(env, base_url=server.url))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hi")])
    assert info.value.kind == "malformed"


CLAUDE_CHAT = """
if args[:1] == ["-p"]:
    prompt = sys.stdin.read()
    answer = '{"status": "ok"}' if "JSON Schema" in prompt else "plain answer"
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "result": answer, "session_id": "s",
                      "usage": {"input_tokens": 12, "output_tokens": 4,
                                "cache_read_input_tokens": 100}}))
    sys.exit(0)
sys.exit(2)
"""


def test_claude_cli_client(env: Env) -> None:
    make_exe(env.bin, "claude", CLAUDE_CHAT)
    client = ClaudeCliClient(model="claude-sonnet-4-5", options=opts(env))
    plain = client.chat([ChatMessage("user", "hello")])
    assert plain.text == "plain answer" and plain.usage.cached_input_tokens == 100
    structured = client.chat([ChatMessage("user", "status?")], schema=SCHEMA)
    assert structured.data == {"status": "ok"} and structured.usage.input_tokens == 12
    assert calls_of(env.bin, "claude")[0] == [
        "-p", "--output-format", "json", "--model", "claude-sonnet-4-5",
    ]  # fmt: skip
    assert not client.supports_embeddings
    with pytest.raises(ProviderCallFailed) as info:
        client.embed(["x"])
    assert info.value.kind == "unsupported"


def test_claude_cli_reports_errors(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        'print(json.dumps({"type": "result", "is_error": True, "result": "Invalid API key'
        ' · Please run /login"})); sys.exit(1)\n',
    )
    client = ClaudeCliClient(model="m", options=opts(env))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hello")])
    assert info.value.kind == "auth" and "Please run /login" in info.value.message


def test_claude_cli_crash_and_garbage(env: Env) -> None:
    make_exe(env.bin, "claude", "sys.stderr.write('segfault-ish'); sys.exit(139)\n")
    client = ClaudeCliClient(model="m", options=opts(env))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hello")])
    assert info.value.kind == "process_failed" and "exited 139" in info.value.message
    make_exe(env.bin, "claude", "print('Hello, not JSON'); sys.exit(0)\n")
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hello")])
    assert info.value.kind == "malformed"


def test_claude_cli_timeout_is_retried(env: Env) -> None:
    make_exe(env.bin, "claude", "time.sleep(5)\n")
    sleeps: list[float] = []
    client = ClaudeCliClient(
        model="m", options=opts(env, sleeps, timeout_s=0.3, retry=RetryPolicy(max_attempts=2))
    )
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hello")])
    assert info.value.kind == "timeout" and info.value.attempts == 2 and len(sleeps) == 1


CODEX_CHAT = """
if args[:1] == ["exec"]:
    prompt = sys.stdin.read()
    schema = None
    if "--output-schema" in args:
        schema = json.load(open(args[args.index("--output-schema") + 1]))
    text = json.dumps({"status": "ok"}) if schema else "codex says hi"
    for event in (
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "hmm"}},
        {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": text}},
        {"type": "turn.completed",
         "usage": {"input_tokens": 30, "cached_input_tokens": 10, "output_tokens": 6}},
    ):
        print(json.dumps(event))
    sys.exit(0)
sys.exit(2)
"""


def test_codex_cli_client(env: Env) -> None:
    make_exe(env.bin, "codex", CODEX_CHAT)
    client = CodexCliClient(model="gpt-5-codex", options=opts(env))
    plain = client.chat([ChatMessage("user", "hello")])
    assert plain.text == "codex says hi"
    assert (plain.usage.input_tokens, plain.usage.output_tokens) == (30, 6)
    structured = client.chat([ChatMessage("user", "status?")], schema=SCHEMA)
    assert structured.data == {"status": "ok"}
    first, second = calls_of(env.bin, "codex")
    assert first == [
        "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only",
        "-m", "gpt-5-codex", "-",
    ]  # fmt: skip
    assert "--output-schema" in second


def test_codex_cli_error_event(env: Env) -> None:
    make_exe(
        env.bin,
        "codex",
        'print(json.dumps({"type": "turn.failed", "error": {"message": "stream error: 401'
        ' Unauthorized"}})); sys.exit(1)\n',
    )
    client = CodexCliClient(model="m", options=opts(env))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hello")])
    assert info.value.kind == "auth"


def test_codex_without_agent_message_is_malformed(env: Env) -> None:
    make_exe(env.bin, "codex", 'print(json.dumps({"type": "turn.completed"}))\n')
    client = CodexCliClient(model="m", options=opts(env))
    with pytest.raises(ProviderCallFailed) as info:
        client.chat([ChatMessage("user", "hello")])
    assert info.value.kind == "malformed"


def test_client_for_uses_the_plugin_factory(env: Env) -> None:
    reg = default_registry(env=env.vars)
    client = client_for(reg.require("ollama"), "llama3.2", opts(env))
    assert isinstance(client, OllamaClient) and client.model == "llama3.2"
    client = client_for(reg.require("claude"), "claude-opus-4-5", opts(env))
    assert isinstance(client, ClaudeCliClient)


def test_prompt_reaches_the_cli_on_stdin(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        """
prompt = sys.stdin.read()
print(json.dumps({"type": "result", "is_error": False, "result": prompt, "usage": {}}))
""",
    )
    client = ClaudeCliClient(model="m", options=opts(env))
    answer = client.chat([ChatMessage("system", "rules"), ChatMessage("user", "question")])
    assert "## Instructions\nrules" in answer.text and "## User\nquestion" in answer.text
    assert json.dumps(answer.usage.to_dict())  # zeros when the CLI reports nothing
