"""Claude Code CLI probe (seed P0 §E.1, priority 10).

1. ``claude --version``: is the CLI installed?
2. ``claude auth status``: prints a JSON object with a boolean ``loggedIn`` on
   stdout, and exits 1 when logged out, so stdout is parsed before the exit code
   is looked at. Only ``loggedIn`` and ``authMethod`` are kept: account e-mail
   and organisation never reach a result.
3. Older CLIs without ``auth status``: fall back to whether the config path
   (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``) exists. Credential files are never
   opened.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..types import ProbeContext, ProbeResult, ProviderDescriptor
from . import _common

if TYPE_CHECKING:
    from ..clients.base import ClientOptions, LlmClient

__all__ = ["DESCRIPTOR", "ClaudeProbe", "probe"]

INSTALL = "install Claude Code (npm install -g @anthropic-ai/claude-code)"
LOGIN = "log in with `claude auth login` (or run `claude` once, or `claude setup-token`)"

DESCRIPTOR = ProviderDescriptor(
    id="claude",
    name="Claude CLI",
    auth_method="cli_login",
    # The seed's "claude-sonnet-4-5-20241022" is not a real model id; the CLI accepts
    # this alias and resolves it to the current Sonnet 4.5 snapshot.
    default_model="claude-sonnet-4-5",
    priority=10,
    supports_embeddings=False,
    supports_chat=True,
    env_vars=("CLAUDE_MODEL", "CLAUDE_CONFIG_DIR"),
    remedy=f"{INSTALL}, then {LOGIN}",
)


def _config_path(ctx: ProbeContext) -> Path | None:
    configured = ctx.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured)
    home = ctx.get("HOME")
    return Path(home) / ".claude" if home else None


def _parse_auth_status(stdout: str) -> tuple[bool, str | None] | None:
    """``(logged_in, auth_method)`` from ``claude auth status`` stdout, or None."""
    text = stdout.strip()
    start = text.find("{")
    if start < 0:
        return None
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("loggedIn"), bool):
        return None
    method = data.get("authMethod")
    return data["loggedIn"], method if isinstance(method, str) else None


class ClaudeProbe:
    """Probe and client factory for the ``claude`` executable."""

    executable = "claude"

    @property
    def descriptor(self) -> ProviderDescriptor:
        return DESCRIPTOR

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        found = _common.locate_cli(self.executable, ctx, INSTALL)
        if isinstance(found, ProbeResult):
            return found
        exe, version = found
        if version.returncode != 0:
            detail = (version.stderr or version.stdout).strip().splitlines()[:1]
            return ProbeResult(
                False,
                False,
                "error",
                f"`claude --version` exited {version.returncode}: {' '.join(detail)}".strip(),
                f"reinstall: {INSTALL}",
            )
        version_text = _common.first_line(version.stdout)
        status = _common.run_cli(exe, ["auth", "status"], ctx)
        if status.returncode is None:
            return _common.timed_out(
                "claude auth status", ctx, LOGIN, available=True, version=version_text
            )
        parsed = _parse_auth_status(status.stdout)
        if parsed is not None:
            logged_in, method = parsed
            metadata = {"auth_evidence": "auth_status"}
            if method:
                metadata["auth_method"] = method
            if logged_in:
                return ProbeResult(True, True, version=version_text, metadata=metadata)
            return ProbeResult(
                True,
                False,
                "not_authenticated",
                "Claude CLI is not logged in",
                LOGIN,
                version=version_text,
                metadata=metadata,
            )
        said = f"{status.stdout}\n{status.stderr}".lower()
        if "not logged in" in said or "logged out" in said:
            return ProbeResult(
                True, False, "not_authenticated", "Claude CLI is not logged in", LOGIN,
                version=version_text, metadata={"auth_evidence": "auth_status_text"},
            )  # fmt: skip
        # No parseable answer (an older CLI): a config path is the weaker evidence.
        config = _config_path(ctx)
        if config is not None and config.exists():
            return ProbeResult(
                True,
                True,
                version=version_text,
                metadata={"auth_evidence": "config_path"},
            )
        return ProbeResult(
            True,
            False,
            "not_authenticated",
            "`claude auth status` gave no answer and no Claude config directory exists",
            LOGIN,
            version=version_text,
        )

    def create_client(self, model: str, options: ClientOptions) -> LlmClient:
        from ..clients.cli import ClaudeCliClient

        return ClaudeCliClient(model=model, options=options)


probe = ClaudeProbe()
