"""Codex CLI probe (seed P0 §E.2, priority 20).

``codex --version`` then ``codex login status``, which reports on **stderr**
("Logged in using ChatGPT", "Not logged in") and exits non-zero when logged out.
Only the kind of login is kept; an API key the CLI echoes is never stored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..types import ProbeContext, ProbeResult, ProviderDescriptor
from . import _common

if TYPE_CHECKING:
    from ..clients.base import ClientOptions, LlmClient

__all__ = ["DESCRIPTOR", "CodexProbe", "probe"]

INSTALL = "install the Codex CLI (npm install -g @openai/codex)"
LOGIN = "log in with `codex login`"

DESCRIPTOR = ProviderDescriptor(
    id="codex",
    name="Codex CLI",
    auth_method="cli_login",
    default_model="gpt-5-codex",
    priority=20,
    supports_embeddings=False,
    supports_chat=True,
    env_vars=("CODEX_MODEL", "CODEX_HOME", "CODEX_PROFILE"),
    remedy=f"{INSTALL}, then {LOGIN}",
)


def _login_mode(text: str) -> str:
    lowered = text.lower()
    if "chatgpt" in lowered:
        return "chatgpt"
    if "api key" in lowered:
        return "api_key"
    if "access token" in lowered:
        return "access_token"
    return "unknown"


class CodexProbe:
    """Probe and client factory for the ``codex`` executable."""

    executable = "codex"

    @property
    def descriptor(self) -> ProviderDescriptor:
        return DESCRIPTOR

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        found = _common.locate_cli(self.executable, ctx, INSTALL)
        if isinstance(found, ProbeResult):
            return found
        exe, version = found
        if version.returncode != 0:
            return ProbeResult(
                False,
                False,
                "error",
                f"`codex --version` exited {version.returncode}",
                f"reinstall: {INSTALL}",
            )
        version_text = _common.first_line(version.stdout)
        status = _common.run_cli(exe, ["login", "status"], ctx)
        if status.returncode is None:
            return _common.timed_out(
                "codex login status", ctx, LOGIN, available=True, version=version_text
            )
        # The report is on stderr; older builds printed it on stdout.
        report = (status.stderr.strip() or status.stdout.strip()).splitlines()
        first = report[0] if report else ""
        lowered = first.lower()
        if status.returncode == 0 and "logged in" in lowered and "not logged in" not in lowered:
            return ProbeResult(
                True, True, version=version_text, metadata={"login": _login_mode(first)}
            )
        return ProbeResult(
            True,
            False,
            "not_authenticated",
            "Codex CLI is not logged in"
            if "not logged in" in lowered or not first
            else f"`codex login status` exited {status.returncode}",
            LOGIN,
            version=version_text,
        )

    def create_client(self, model: str, options: ClientOptions) -> LlmClient:
        from ..clients.cli import CodexCliClient

        return CodexCliClient(model=model, options=options)


probe = CodexProbe()
