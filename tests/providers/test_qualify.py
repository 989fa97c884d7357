"""The qualification gate against fake local model servers (real HTTP on loopback)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.providers import (
    PASS_CRITERIA,
    QUALIFICATION_TESTS,
    ChatMessage,
    ClientOptions,
    FakeClient,
    OllamaClient,
    QualificationStore,
    qualify_model,
)
from codelibrarian.providers.schema import schema_problems
from tests.helpers import run_cli

from .conftest import Env, ModelServer, Route, fixed, ollama_routes
from .model_server import chat_route, good_answer

Serve = Callable[[dict[tuple[str, str], Route]], ModelServer]


def _client(env: Env, server: ModelServer, model: str = "good-model") -> OllamaClient:
    return OllamaClient(model=model, options=ClientOptions(env=env.vars, base_url=server.url))


def test_battery_has_ten_tests_in_the_seed_categories() -> None:
    assert len(QUALIFICATION_TESTS) == 10
    assert len({t.id for t in QUALIFICATION_TESTS}) == 10
    assert sum(t.expects_json for t in QUALIFICATION_TESTS) == 7
    assert PASS_CRITERIA == {
        "json_validity_pct": 90,
        "schema_compliance_pct": 80,
        "instruction_following_pct": 80,
        "latency_p50_ms_below": 5000,
    }
    # each test's good answer passes its own check and schema (the battery is sane)
    for test in QUALIFICATION_TESTS:
        answer = good_answer("\n".join(m.content for m in test.messages()))
        data = json.loads(answer) if test.schema else None
        if test.schema:
            assert schema_problems(data, test.schema) == [], test.id
        assert test.check(answer, data) is None, test.id


def test_a_good_local_model_qualifies(env: Env, serve: Serve, tmp_path: Path) -> None:
    server = serve({("POST", "/api/chat"): chat_route("good")})
    result = qualify_model(_client(env, server), clock=lambda: 1_800_000_000)
    s = result.scores
    assert result.qualified, result.failures
    assert (s.json_ok, s.json_total, s.schema_ok, s.instruction_ok) == (7, 7, 7, 10)
    assert s.json_validity_permille == 1000 and s.latency_p50_ms < 5000
    assert result.failures == ()
    assert len(server.requests) == 10
    # schema-bearing tests send the schema as Ollama's `format`
    formats = [r[2].get("format") for r in server.requests]
    assert sum(f is not None for f in formats) == 7
    store = QualificationStore(tmp_path)
    store.save(result)
    saved = store.get("ollama", "good-model")
    assert saved is not None and saved["qualified"] is True
    assert saved["scores"]["counts"]["instruction"] == [10, 10]
    assert store.qualified() == {("ollama", "good-model"): True}


def test_a_chatty_local_model_fails_with_scores(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): chat_route("bad")})
    result = qualify_model(_client(env, server, "bad-model"))
    s = result.scores
    assert not result.qualified
    assert (s.json_ok, s.schema_ok, s.instruction_ok) == (0, 0, 0)
    criteria = [c for c, _ in result.failures if not c.startswith("test:")]
    assert criteria == ["json_validity", "schema_compliance", "instruction_following"]
    assert ("json_validity", "0/7 passed; 90% required") in result.failures
    per_test = dict(result.failures)
    assert "not JSON" in per_test["test:json_status"]


def test_one_prose_answer_misses_the_json_bar_only(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): chat_route("almost")})
    result = qualify_model(_client(env, server, "almost-model"))
    s = result.scores
    assert (s.json_ok, s.schema_ok, s.instruction_ok) == (6, 6, 9)
    assert s.json_validity_permille == 857  # 85.7 % < 90 %
    assert not result.qualified
    assert [c for c, _ in result.failures if not c.startswith("test:")] == ["json_validity"]


def test_latency_criterion_uses_the_lower_median() -> None:
    def right(messages: Sequence[ChatMessage], _schema: Any) -> str:
        return good_answer("\n".join(m.content for m in messages))

    slow = FakeClient(responder=right, latency_ms=5000)
    result = qualify_model(slow)
    assert result.scores.latency_p50_ms == 5000
    assert [c for c, _ in result.failures] == ["latency"]
    fast = qualify_model(FakeClient(responder=right, latency_ms=4999))
    assert fast.qualified


def test_provider_errors_count_as_failures(env: Env, serve: Serve) -> None:
    server = serve({("POST", "/api/chat"): fixed({"error": "no such model"}, status=404)})
    ticks = iter(float(i) for i in range(100))
    result = qualify_model(_client(env, server, "missing"), timer=lambda: next(ticks))
    assert not result.qualified
    assert all(not o.instruction_ok for o in result.outcomes)
    assert result.outcomes[0].reasons[0].startswith("http_status:")
    assert result.scores.latency_p50_ms == 1000  # one injected tick per call


def _cli_env(env: Env, server: ModelServer, model: str) -> dict[str, str]:
    return {
        **env.vars,
        "OLLAMA_HOST": server.url,
        "LIBRARIAN_LLM_PROVIDER": "ollama",
        "LIBRARIAN_LLM_MODEL": model,
    }


@pytest.mark.slow
def test_cli_qualify_json_passing_and_failing(env: Env, serve: Serve, tmp_path: Path) -> None:
    routes = {**ollama_routes(), ("POST", "/api/chat"): chat_route("good")}
    good = serve(routes)
    bad = serve({**ollama_routes(), ("POST", "/api/chat"): chat_route("bad")})
    repo = tmp_path / "repo"
    repo.mkdir()
    ok = run_cli("providers", "qualify", "--json", "-C", str(repo),
                 env=_cli_env(env, good, "good-model"))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["qualified"] is True and doc["model"] == "good-model"
    assert doc["scores"]["json_validity_permille"] == 1000
    assert len(doc["tests"]) == 10

    no = run_cli("providers", "qualify", "--json", "-C", str(repo),
                 env=_cli_env(env, bad, "bad-model"))  # fmt: skip
    assert no.returncode == 1
    doc = json.loads(no.stdout)
    assert doc["qualified"] is False
    assert doc["scores"]["schema_compliance_permille"] == 0
    assert {"criterion": "json_validity", "reason": "0/7 passed; 90% required"} in doc["failures"]

    stored = json.loads((repo / ".librarian" / "qualifications.json").read_text())
    assert sorted(stored) == ["ollama/bad-model", "ollama/good-model"]
    listed = run_cli("providers", "list", "--json", "-C", str(repo), env=env.vars)
    ollama = next(p for p in json.loads(listed.stdout)["providers"] if p["id"] == "ollama")
    assert ollama["qualified_models"] == {"bad-model": False, "good-model": True}

    human = run_cli("providers", "qualify", "-C", str(repo),
                    env=_cli_env(env, bad, "bad-model"))  # fmt: skip
    assert human.returncode == 1
    assert "ollama / bad-model: NOT QUALIFIED" in human.stdout
    assert "JSON validity             0.0%  (0/7, need 90%)" in human.stdout
    assert "FAIL json_status" in human.stdout


@pytest.mark.slow
def test_cli_qualify_named_provider_picks_a_listed_model(
    env: Env, serve: Serve, tmp_path: Path
) -> None:
    server = serve(
        {**ollama_routes(models=["only-model:3b"]), ("POST", "/api/chat"): chat_route("good")}
    )
    vars_ = {**env.vars, "OLLAMA_HOST": server.url}
    out = run_cli("providers", "qualify", "--provider", "ollama", "--json", "-C", str(tmp_path),
                  env=vars_)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["model"] == "only-model:3b"
    assert {r[2]["model"] for r in server.requests if r[0] == "POST"} == {"only-model:3b"}
