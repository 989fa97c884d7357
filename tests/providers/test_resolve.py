"""Resolution order and the helpful error when nothing is available."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from codelibrarian.errors import ProviderUnavailable, UsageError, exit_code_for
from codelibrarian.providers import FakeProvider, ProviderRegistry, default_registry, resolve_model

from .conftest import CLAUDE_OK, Env, ModelServer, Route, make_exe, ollama_routes

Serve = Callable[[dict[tuple[str, str], Route]], ModelServer]


def test_env_provider_and_model_win_without_probing(env: Env) -> None:
    fake = FakeProvider(id="claude", priority=10, available=False)
    reg = ProviderRegistry(
        env=env.with_(LIBRARIAN_LLM_PROVIDER="claude", LIBRARIAN_LLM_MODEL="claude-opus-4-5")
    )
    reg.register(fake)
    chosen = resolve_model(reg)
    assert (chosen.provider, chosen.model, chosen.source) == ("claude", "claude-opus-4-5", "env")
    assert fake.probes_run == []


def test_env_provider_only_uses_default_model(env: Env) -> None:
    reg = default_registry(env=env.with_(LIBRARIAN_LLM_PROVIDER="ollama"))
    chosen = resolve_model(reg)
    assert (chosen.model, chosen.source) == ("llama3.2", "env_provider_default")
    reg = default_registry(env=env.with_(LIBRARIAN_LLM_PROVIDER="ollama", OLLAMA_MODEL="qwen3"))
    chosen = resolve_model(reg)
    assert (chosen.model, chosen.source) == ("qwen3", "env_provider_model_var")


def test_unknown_env_provider_lists_known_ones(env: Env) -> None:
    reg = default_registry(env=env.with_(LIBRARIAN_LLM_PROVIDER="gemini"))
    with pytest.raises(UsageError) as info:
        resolve_model(reg)
    assert "Known providers: claude, codex, ollama, lmstudio" in str(info.value)


def test_env_override_beats_a_better_discovered_provider(env: Env, serve: Serve) -> None:
    make_exe(env.bin, "claude", CLAUDE_OK)
    server = serve(ollama_routes())
    vars_ = env.with_(OLLAMA_HOST=server.url)
    assert resolve_model(default_registry(env=vars_)).provider == "claude"
    chosen = resolve_model(default_registry(env={**vars_, "LIBRARIAN_LLM_PROVIDER": "ollama"}))
    assert chosen.provider == "ollama"


def test_discovery_then_model_override(env: Env, serve: Serve) -> None:
    server = serve(ollama_routes())
    reg = default_registry(env=env.with_(OLLAMA_HOST=server.url))
    chosen = resolve_model(reg)
    assert (chosen.provider, chosen.model, chosen.source) == ("ollama", "llama3.2", "discovery")
    reg = default_registry(
        env=env.with_(OLLAMA_HOST=server.url, LIBRARIAN_LLM_MODEL="qwen2.5-coder:7b")
    )
    assert resolve_model(reg).model == "qwen2.5-coder:7b"


def test_custom_provider_registered_by_a_plugin_is_discovered(env: Env) -> None:
    from .plugin_sample import probe

    reg = default_registry(env=env.vars)
    reg.register(probe)
    chosen = resolve_model(reg)
    assert (chosen.provider, chosen.model) == ("acme", "acme-1")  # its only listed model


def test_nothing_available_explains_every_provider(env: Env) -> None:
    reg = default_registry(env=env.vars)
    with pytest.raises(ProviderUnavailable) as info:
        resolve_model(reg)
    err = info.value
    assert err.trace.code == "unverified_by_trace(provider_unavailable)"
    assert "claude=not_installed" in err.trace.detail
    assert exit_code_for(err) == 7
    text = str(err)
    for expected in (
        "Claude CLI [claude, priority 10]: not_installed",
        "fix: install Claude Code",
        "Codex CLI [codex, priority 20]: not_installed",
        "Ollama (local) [ollama, priority 30]: unreachable: nothing listens at http://127.0.0.1:",
        'fix: run "ollama serve"',
        "LM Studio (local) [lmstudio, priority 35]: unreachable",
        "set LIBRARIAN_LLM_PROVIDER",
        "`codex login`",
        "codelibrarian.providers",
    ):
        assert expected in text, expected
    # the order of the report is the priority order
    assert text.index("Claude CLI") < text.index("Codex CLI") < text.index("Ollama")


def test_require_embeddings_skips_chat_only_providers(env: Env) -> None:
    make_exe(env.bin, "claude", CLAUDE_OK)
    reg = default_registry(env=env.vars)
    with pytest.raises(ProviderUnavailable) as info:
        resolve_model(reg, require_embeddings=True)
    assert "Claude CLI [claude, priority 10]: available, but offers no embeddings" in str(
        info.value
    )
