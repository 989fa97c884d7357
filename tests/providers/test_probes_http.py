"""The Ollama and LM Studio probes against real HTTP servers on loopback."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from codelibrarian.providers.probes.lmstudio import LmStudioProbe, lmstudio_base_url
from codelibrarian.providers.probes.ollama import OllamaProbe, ollama_base_url
from codelibrarian.providers.types import ProbeContext

from .conftest import Env, ModelServer, Route, fixed, lmstudio_routes, ollama_routes

Serve = Callable[[dict[tuple[str, str], Route]], ModelServer]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", "http://127.0.0.1:11434"),
        ("example.com", "http://example.com:11434"),
        ("example.com:5678", "http://example.com:5678"),
        ("http://example.com", "http://example.com:80"),
        ("https://example.com", "https://example.com:443"),
        ("http://example.com:8080", "http://example.com:8080"),
        ("0.0.0.0", "http://0.0.0.0:11434"),
        (":5678", "http://:5678"),
        ("  '127.0.0.1:9'  ", "http://127.0.0.1:9"),
        ("[::1]:5678", "http://[::1]:5678"),
        ("::1", "http://[::1]:11434"),
        ("example.com:99999", "http://example.com:11434"),
        ("https://example.com/ollama", "https://example.com:443/ollama"),
    ],
)
def test_ollama_host_parsed_like_ollama(raw: str, expected: str) -> None:
    assert ollama_base_url({"OLLAMA_HOST": raw}) == expected


def test_lmstudio_host_default_and_bare() -> None:
    assert lmstudio_base_url({}) == "http://localhost:1234"
    assert lmstudio_base_url({"LMSTUDIO_HOST": "127.0.0.1:9999/"}) == "http://127.0.0.1:9999"


def _ctx(env: Env, timeout: float = 5.0, **extra: str) -> ProbeContext:
    return ProbeContext(env=env.with_(**extra), timeout_s=timeout)


def test_ollama_available_lists_models(env: Env, serve: Serve) -> None:
    server = serve(ollama_routes())
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST=server.url))
    assert result.usable and result.version == "0.12.3"
    assert result.models == ("llama3.2:latest", "qwen2.5-coder:7b")
    assert [r[:2] for r in server.requests] == [("GET", "/api/version"), ("GET", "/api/tags")]


def test_ollama_bare_host_port_form(env: Env, serve: Serve) -> None:
    server = serve(ollama_routes())
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST=f"127.0.0.1:{server.port}"))
    assert result.usable


def test_ollama_refused_suggests_ollama_serve(env: Env) -> None:
    result = OllamaProbe().probe(_ctx(env))
    assert (result.available, result.status) == (False, "unreachable")
    assert result.remedy is not None and 'run "ollama serve"' in result.remedy


def test_ollama_timeout(env: Env, serve: Serve) -> None:
    server = serve({("GET", "/api/version"): fixed({"version": "1"}, delay=2.0)})
    result = OllamaProbe().probe(_ctx(env, timeout=0.3, OLLAMA_HOST=server.url))
    assert result.status == "timeout"


@pytest.mark.parametrize("payload", [b"<html>not json</html>", {"no_version": True}, [1, 2, 3]])
def test_ollama_malformed_version(env: Env, serve: Serve, payload: object) -> None:
    server = serve({("GET", "/api/version"): fixed(payload)})
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST=server.url))
    assert result.status == "error" and not result.available


def test_ollama_http_error_status(env: Env, serve: Serve) -> None:
    server = serve({("GET", "/api/version"): fixed({"error": "x"}, status=500)})
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST=server.url))
    assert result.status == "error" and "HTTP 500" in (result.error or "")


def test_ollama_malformed_tags_is_usable_with_unknown_models(env: Env, serve: Serve) -> None:
    routes = ollama_routes()
    routes[("GET", "/api/tags")] = fixed({"models": [{"size": 3}]})
    server = serve(routes)
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST=server.url))
    assert result.usable and result.models == () and result.models_source == "none"
    assert "models_error" in result.metadata


def test_ollama_without_models(env: Env, serve: Serve) -> None:
    server = serve(ollama_routes(models=[]))
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST=server.url))
    assert result.status == "no_models" and not result.usable
    assert result.remedy == "ollama pull llama3.2"


def test_non_loopback_host_blocked_under_tests(env: Env) -> None:
    result = OllamaProbe().probe(_ctx(env, OLLAMA_HOST="203.0.113.7"))
    assert result.status == "blocked"
    result = LmStudioProbe().probe(_ctx(env, LMSTUDIO_HOST="http://203.0.113.7:1234"))
    assert result.status == "blocked"


def test_lmstudio_available(env: Env, serve: Serve) -> None:
    server = serve(lmstudio_routes(["b-model", "a-model"]))
    result = LmStudioProbe().probe(_ctx(env, LMSTUDIO_HOST=server.url))
    assert result.usable and result.models == ("a-model", "b-model")


def test_lmstudio_refused(env: Env) -> None:
    result = LmStudioProbe().probe(_ctx(env))
    assert result.status == "unreachable"
    assert result.remedy is not None and "lms server start" in result.remedy


def test_lmstudio_timeout(env: Env, serve: Serve) -> None:
    server = serve({("GET", "/v1/models"): fixed({"data": []}, delay=2.0)})
    result = LmStudioProbe().probe(_ctx(env, timeout=0.3, LMSTUDIO_HOST=server.url))
    assert result.status == "timeout"


@pytest.mark.parametrize("payload", [b"nope", {"data": "x"}, {"data": [{"name": 1}]}])
def test_lmstudio_malformed(env: Env, serve: Serve, payload: object) -> None:
    server = serve({("GET", "/v1/models"): fixed(payload)})
    result = LmStudioProbe().probe(_ctx(env, LMSTUDIO_HOST=server.url))
    assert result.status == "error"


def test_lmstudio_no_model_loaded(env: Env, serve: Serve) -> None:
    server = serve(lmstudio_routes([]))
    result = LmStudioProbe().probe(_ctx(env, LMSTUDIO_HOST=server.url))
    assert result.status == "no_models" and "lms load" in (result.remedy or "")
