"""Clients for the CLI-authenticated providers, run as subprocesses.

* Claude Code: ``claude -p --output-format json --model M`` with the prompt on
  stdin; stdout is one JSON object (``result``, ``is_error``, ``usage``).
* Codex: ``codex exec --json --skip-git-repo-check --sandbox read-only -m M -``
  with the prompt on stdin; stdout is JSON Lines (``item.completed`` carries the
  agent message, ``turn.completed`` the usage, ``error``/``turn.failed`` errors).
  A schema goes to ``--output-schema FILE``.

Neither CLI takes a JSON schema for Claude in every version, so for Claude the
schema is stated in the prompt and the answer is checked here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from .. import guard
from .base import (
    ChatMessage,
    ChatResponse,
    ClientBase,
    EmbeddingResponse,
    TokenUsage,
    elapsed_ms,
    int_field,
    request_key,
)

__all__ = ["ClaudeCliClient", "CodexCliClient", "render_prompt"]


def render_prompt(messages: Sequence[ChatMessage], schema: Mapping[str, Any] | None) -> str:
    """Flatten a conversation into one prompt for a one-shot CLI call."""
    parts: list[str] = []
    for m in messages:
        label = {"system": "Instructions", "user": "User", "assistant": "Assistant"}[m.role]
        parts.append(f"## {label}\n{m.content.strip()}")
    if schema is not None:
        parts.append(
            "## Output format\nReply with a single JSON value and nothing else (no prose, "
            "no code fences). It must conform to this JSON Schema:\n"
            + json.dumps(schema, sort_keys=True)
        )
    return "\n\n".join(parts) + "\n"


class _CliClient(ClientBase):
    """One subprocess per attempt; subclasses supply the command line and read its output."""

    executable = ""

    @property
    def supports_embeddings(self) -> bool:
        return False

    def embed(self, texts: Sequence[str]) -> EmbeddingResponse:
        raise self._fail(
            f"{self.provider_id} offers no embeddings",
            "unsupported",
            hint=(
                "Use a provider with embeddings (ollama, lmstudio) or the local embedding"
                " model (installed on Linux x86-64)."
            ),
        )

    def _arguments(self, schema: Mapping[str, Any] | None) -> AbstractContextManager[list[str]]:
        """The arguments after the executable, valid while the context is open."""
        raise NotImplementedError

    def _parse(self, proc: subprocess.CompletedProcess[str]) -> tuple[str, TokenUsage]:
        raise NotImplementedError

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        prompt = render_prompt(messages, schema)
        start = self.options.timer()
        with self._arguments(schema) as args:

            def once() -> tuple[str, TokenUsage]:
                return self._parse(self._run(args, prompt))

            key = request_key(self.provider_id, self.model, messages)
            (text, usage), attempts = self._retry(key, once)
        return self._answer(text, schema, usage, elapsed_ms(self.options, start), attempts)

    def _exe(self) -> str:
        exe = shutil.which(self.executable, path=self.options.env.get("PATH", ""))
        if exe is None:
            raise self._fail(f"`{self.executable}` is not on PATH", "process_failed")
        if not guard.executable_allowed(exe, self.options.env):
            raise self._fail(
                f"{exe} is a real provider; blocked under tests (set {guard.ALLOW_ENV}=1 to allow)",
                "blocked",
            )
        return exe

    def _run(self, args: list[str], prompt: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [self._exe(), *args],
                input=prompt,
                capture_output=True,
                text=True,
                timeout=self.options.timeout_s,
                env=dict(self.options.env),
                cwd=self.options.cwd,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise self._fail(
                f"`{self.executable}` gave no answer within {self.options.timeout_s:g}s",
                "timeout",
                retryable=True,
            ) from None
        except OSError as exc:
            raise self._fail(f"cannot run `{self.executable}`: {exc}", "process_failed") from None


class ClaudeCliClient(_CliClient):
    provider_id = "claude"
    executable = "claude"

    @contextmanager
    def _arguments(self, schema: Mapping[str, Any] | None) -> Iterator[list[str]]:
        yield ["-p", "--output-format", "json", "--model", self.model]

    def _parse(self, proc: subprocess.CompletedProcess[str]) -> tuple[str, TokenUsage]:
        try:
            payload = json.loads(proc.stdout)
        except json.JSONDecodeError:
            tail = (proc.stderr or proc.stdout).strip()[-300:]
            if proc.returncode != 0:
                raise self._fail(
                    f"`claude -p` exited {proc.returncode}: {tail}", "process_failed"
                ) from None
            raise self._fail(f"`claude -p` printed no JSON: {tail!r}", "malformed") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("result"), str):
            raise self._fail("`claude -p` JSON has no string `result`", "malformed")
        if payload.get("is_error") is True or proc.returncode != 0:
            message = payload["result"][:300]
            auth = "login" in message.lower() or "auth" in message.lower()
            raise self._fail(
                f"Claude reported an error: {message}", "auth" if auth else "process_failed"
            )
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return payload["result"], TokenUsage(
            input_tokens=int_field(usage, "input_tokens"),
            output_tokens=int_field(usage, "output_tokens"),
            cached_input_tokens=int_field(usage, "cache_read_input_tokens"),
        )


class CodexCliClient(_CliClient):
    provider_id = "codex"
    executable = "codex"

    @contextmanager
    def _arguments(self, schema: Mapping[str, Any] | None) -> Iterator[list[str]]:
        with tempfile.TemporaryDirectory(prefix="librarian-codex-") as tmp:
            args = ["exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only"]
            args += ["-m", self.model]
            if schema is not None:
                schema_file = Path(tmp) / "schema.json"
                schema_file.write_text(json.dumps(schema), encoding="utf-8")
                args += ["--output-schema", str(schema_file)]
            args.append("-")
            yield args

    def _parse(self, proc: subprocess.CompletedProcess[str]) -> tuple[str, TokenUsage]:
        text: str | None = None
        usage = TokenUsage()
        errors: list[str] = []
        for line in proc.stdout.splitlines():
            if not line.strip().startswith("{"):
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "item.completed":
                item = event.get("item")
                if (
                    isinstance(item, dict)
                    and item.get("type") == "agent_message"
                    and isinstance(item.get("text"), str)
                ):
                    text = item["text"]
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                u = event["usage"]
                usage = TokenUsage(
                    int_field(u, "input_tokens"),
                    int_field(u, "output_tokens"),
                    int_field(u, "cached_input_tokens"),
                )
            elif kind == "error" and isinstance(event.get("message"), str):
                errors.append(event["message"])
            elif kind == "turn.failed":
                err = event.get("error")
                if isinstance(err, dict) and isinstance(err.get("message"), str):
                    errors.append(err["message"])
        if errors:
            message = errors[-1][:300]
            auth = "login" in message.lower() or "401" in message
            raise self._fail(
                f"Codex reported an error: {message}", "auth" if auth else "process_failed"
            )
        if text is None:
            tail = (proc.stderr or proc.stdout).strip()[-300:]
            if proc.returncode != 0:
                raise self._fail(f"`codex exec` exited {proc.returncode}: {tail}", "process_failed")
            raise self._fail("`codex exec --json` produced no agent message", "malformed")
        return text, usage
