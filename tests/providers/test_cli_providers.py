"""``librarian providers list | check`` through the real entry point."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import run_cli

from .conftest import CLAUDE_OK, Env, ModelServer, Route, calls_of, make_exe, ollama_routes

Serve = Callable[[dict[tuple[str, str], Route]], ModelServer]

pytestmark = pytest.mark.slow  # each case starts the CLI in a subprocess


def test_list_shows_builtins_without_probing(env: Env, tmp_path: Path) -> None:
    make_exe(env.bin, "claude", CLAUDE_OK)
    out = run_cli("providers", "list", "--json", "-C", str(tmp_path), env=env.vars)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [p["id"] for p in doc["providers"]] == ["claude", "codex", "ollama", "lmstudio"]
    assert all(p["result"] is None for p in doc["providers"])
    assert calls_of(env.bin, "claude") == []  # list never runs a probe


def test_check_picks_claude_then_list_shows_cached_status(
    env: Env, serve: Serve, tmp_path: Path
) -> None:
    make_exe(env.bin, "claude", CLAUDE_OK)
    server = serve(ollama_routes())
    vars_ = {**env.vars, "OLLAMA_HOST": server.url}
    out = run_cli("providers", "check", "--json", "-C", str(tmp_path), env=vars_)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["chosen"] == {
        "provider": "claude",
        "model": "claude-sonnet-4-5",
        "source": "discovery",
    }
    status = {p["id"]: p["result"]["status"] for p in doc["providers"]}
    assert status == {"claude": "ok", "codex": "not_installed", "ollama": "ok",
                      "lmstudio": "unreachable"}  # fmt: skip
    listed = json.loads(
        run_cli("providers", "list", "--json", "-C", str(tmp_path), env=vars_).stdout
    )
    assert listed["providers"][0]["result"]["status"] == "ok"
    assert len(calls_of(env.bin, "claude")) == 2  # one probe: --version, auth status
    # the cached answer is reused by a second `check`; --refresh probes again
    run_cli("providers", "check", "--json", "-C", str(tmp_path), env=vars_)
    assert len(calls_of(env.bin, "claude")) == 2
    run_cli("providers", "check", "--refresh", "-C", str(tmp_path), env=vars_)
    assert len(calls_of(env.bin, "claude")) == 4


def test_check_with_nothing_available_exits_7_with_remedies(env: Env, tmp_path: Path) -> None:
    out = run_cli("providers", "check", "-C", str(tmp_path), env=env.vars)
    assert out.returncode == 7
    assert "unverified_by_trace(provider_unavailable)" in out.stderr
    assert 'fix: run "ollama serve"' in out.stdout
    assert "Checked providers (best priority first):" in out.stderr
    as_json = run_cli("providers", "check", "--json", "-C", str(tmp_path), env=env.vars)
    assert as_json.returncode == 7
    doc = json.loads(as_json.stdout)
    assert doc["ok"] is False and doc["chosen"] is None
    assert doc["error"]["trace"]["code"] == "unverified_by_trace(provider_unavailable)"


def test_env_override_in_the_cli(env: Env, tmp_path: Path) -> None:
    vars_ = {**env.vars, "LIBRARIAN_LLM_PROVIDER": "codex", "LIBRARIAN_LLM_MODEL": "gpt-5"}
    out = run_cli("providers", "check", "--json", "-C", str(tmp_path), env=vars_)
    doc = json.loads(out.stdout)
    assert doc["chosen"] == {"provider": "codex", "model": "gpt-5", "source": "env"}
