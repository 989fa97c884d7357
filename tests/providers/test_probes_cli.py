"""The Claude and Codex probes against real executables the tests put on PATH."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from codelibrarian.providers.probes.claude import ClaudeProbe
from codelibrarian.providers.probes.codex import CodexProbe
from codelibrarian.providers.types import ProbeContext

from .conftest import CLAUDE_OK, CODEX_OK, Env, calls_of, make_exe


def ctx(env: Env, timeout: float = 5.0, **extra: str) -> ProbeContext:
    return ProbeContext(env=env.with_(**extra), timeout_s=timeout)


def test_claude_available_and_logged_in(env: Env) -> None:
    make_exe(env.bin, "claude", CLAUDE_OK)
    result = ClaudeProbe().probe(ctx(env))
    assert result.usable and result.status == "ok"
    assert result.version == "2.0.14 (Claude Code)"
    assert result.metadata == {"auth_evidence": "auth_status", "auth_method": "claude.ai"}
    # the account's e-mail and organisation never reach a result
    assert "dev@example.invalid" not in repr(result) and "org-secret" not in repr(result)
    assert calls_of(env.bin, "claude") == [["--version"], ["auth", "status"]]


def test_claude_logged_out_json_on_stdout_with_exit_1(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        """
if args == ["--version"]:
    print("2.0.14 (Claude Code)"); sys.exit(0)
print(json.dumps({"loggedIn": False}))
sys.exit(1)
""",
    )
    # a config dir exists, but the CLI's own answer wins
    (env.home / ".claude").mkdir()
    result = ClaudeProbe().probe(ctx(env))
    assert result.available and not result.authenticated
    assert result.status == "not_authenticated"
    assert result.remedy is not None and "claude auth login" in result.remedy


def test_claude_without_auth_status_falls_back_to_config_path(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        """
if args == ["--version"]:
    print("1.0.3 (Claude Code)"); sys.exit(0)
sys.stderr.write("error: unknown command 'auth'\\n"); sys.exit(1)
""",
    )
    config = env.home / "custom-claude"
    config.mkdir()
    secret = config / ".credentials.json"
    secret.write_text("{}")
    secret.chmod(0)  # unreadable: the probe must only check the path exists
    result = ClaudeProbe().probe(ctx(env, CLAUDE_CONFIG_DIR=str(config)))
    assert result.usable
    assert result.metadata == {"auth_evidence": "config_path"}
    no_config = ClaudeProbe().probe(ctx(env))
    assert no_config.status == "not_authenticated"


def test_claude_not_installed(env: Env) -> None:
    result = ClaudeProbe().probe(ctx(env))
    assert (result.available, result.status) == (False, "not_installed")
    assert result.remedy is not None and "npm install -g @anthropic-ai/claude-code" in result.remedy


def test_claude_version_timeout(env: Env) -> None:
    make_exe(env.bin, "claude", "time.sleep(5)\n")
    result = ClaudeProbe().probe(ctx(env, timeout=0.5))
    assert result.status == "timeout"
    assert "timed out after 0.5s" in (result.error or "")


def test_claude_version_failure(env: Env) -> None:
    make_exe(env.bin, "claude", "sys.stderr.write('boom\\n'); sys.exit(3)\n")
    result = ClaudeProbe().probe(ctx(env))
    assert result.status == "error" and "exited 3: boom" in (result.error or "")


def test_claude_malformed_auth_status_and_no_config(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        """
if args == ["--version"]:
    print("2.0.14"); sys.exit(0)
print("{not json"); sys.exit(0)
""",
    )
    result = ClaudeProbe().probe(ctx(env))
    assert result.status == "not_authenticated"


def test_codex_logged_in_reports_on_stderr(env: Env) -> None:
    make_exe(env.bin, "codex", CODEX_OK)
    result = CodexProbe().probe(ctx(env))
    assert result.usable and result.version == "codex-cli 0.46.0"
    assert result.metadata == {"login": "chatgpt"}
    assert calls_of(env.bin, "codex") == [["--version"], ["login", "status"]]


def test_codex_api_key_never_stored(env: Env) -> None:
    make_exe(
        env.bin,
        "codex",
        """
if args == ["--version"]:
    print("codex-cli 0.46.0"); sys.exit(0)
sys.stderr.write("Logged in using an API key - sk-proj-***ABCD\\n"); sys.exit(0)
""",
    )
    result = CodexProbe().probe(ctx(env))
    assert result.usable and result.metadata == {"login": "api_key"}
    assert "sk-proj" not in repr(result)


def test_codex_not_logged_in(env: Env) -> None:
    make_exe(
        env.bin,
        "codex",
        """
if args == ["--version"]:
    print("codex-cli 0.46.0"); sys.exit(0)
sys.stderr.write("Not logged in\\n"); sys.exit(1)
""",
    )
    result = CodexProbe().probe(ctx(env))
    assert result.available and result.status == "not_authenticated"
    assert result.error == "Codex CLI is not logged in"
    assert result.remedy == "log in with `codex login`"


def test_codex_login_status_timeout(env: Env) -> None:
    make_exe(
        env.bin,
        "codex",
        """
if args == ["--version"]:
    print("codex-cli 0.46.0"); sys.exit(0)
time.sleep(5)
""",
    )
    result = CodexProbe().probe(ctx(env, timeout=0.5))
    assert result.available and result.status == "timeout"


def test_real_executables_are_blocked_under_tests(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pretend the temp dir is elsewhere: the fake claude now looks like a real install.
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(sandbox))
    make_exe(env.bin, "claude", CLAUDE_OK)
    result = ClaudeProbe().probe(ctx(env))
    assert result.status == "blocked"
    assert calls_of(env.bin, "claude") == []  # never executed
    monkeypatch.setenv("LIBRARIAN_ALLOW_REAL_PROVIDERS", "1")
    assert ClaudeProbe().probe(ctx(env)).usable


def test_claude_plain_text_logged_out_beats_config_path(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        """
if args == ["--version"]:
    print("2.0.1"); sys.exit(0)
print("Not logged in. Run claude auth login."); sys.exit(1)
""",
    )
    (env.home / ".claude").mkdir()
    result = ClaudeProbe().probe(ctx(env))
    assert result.status == "not_authenticated"
    assert result.metadata == {"auth_evidence": "auth_status_text"}
