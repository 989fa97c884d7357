"""Clients for the local HTTP providers (through httpx, never via env proxies).

* Ollama: ``POST /api/chat`` (``stream: false``; a schema goes in ``format``)
  and ``POST /api/embed``.
* LM Studio: ``POST /v1/chat/completions`` (a schema goes in
  ``response_format: {type: json_schema}``) and ``POST /v1/embeddings``.

Connection failures, timeouts, HTTP 429 and 5xx are retryable; other statuses
and malformed bodies are not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from .. import guard
from ..probes._common import ssl_context
from ..probes.lmstudio import lmstudio_base_url
from ..probes.ollama import ollama_base_url
from .base import (
    ChatMessage,
    ChatResponse,
    ClientBase,
    ClientOptions,
    EmbeddingResponse,
    TokenUsage,
    elapsed_ms,
    int_field,
    request_key,
)

__all__ = ["LmStudioClient", "OllamaClient"]


Vectors = tuple[tuple[float, ...], ...]


class _HttpClient(ClientBase):
    """One request per call, retried; subclasses supply the dialect (paths, body, reply)."""

    not_found_hint = ""
    chat_path = ""
    embed_path = ""

    def __init__(self, *, model: str, options: ClientOptions | None = None) -> None:
        super().__init__(model=model, options=options)
        self.base_url = (self.options.base_url or self._default_base()).rstrip("/")

    def _default_base(self) -> str:
        raise NotImplementedError

    def _chat_fields(
        self, schema: Mapping[str, Any] | None, max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        """The body fields after model, messages and stream."""
        raise NotImplementedError

    def _read_chat(self, data: Mapping[str, Any]) -> tuple[str, TokenUsage]:
        raise NotImplementedError

    def _read_embeddings(self, data: Mapping[str, Any], count: int) -> tuple[Vectors, TokenUsage]:
        raise NotImplementedError

    @property
    def supports_embeddings(self) -> bool:
        return True

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": False,
            **self._chat_fields(schema, max_tokens, temperature),
        }
        start = self.options.timer()

        def once() -> tuple[str, TokenUsage]:
            return self._read_chat(self._post(self.chat_path, body))

        key = request_key(self.provider_id, self.model, messages)
        (text, usage), attempts = self._retry(key, once)
        return self._answer(text, schema, usage, elapsed_ms(self.options, start), attempts)

    def embed(self, texts: Sequence[str]) -> EmbeddingResponse:
        body = {"model": self.model, "input": list(texts)}
        start = self.options.timer()

        def once() -> tuple[Vectors, TokenUsage]:
            return self._read_embeddings(self._post(self.embed_path, body), len(texts))

        key = request_key(
            f"{self.provider_id}-embed", self.model, [ChatMessage("user", t) for t in texts]
        )
        (vectors, usage), attempts = self._retry(key, once)
        return EmbeddingResponse(
            vectors, self.provider_id, self.model, usage, elapsed_ms(self.options, start), attempts
        )

    def _post(self, path: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        url = self.base_url + path
        if not guard.url_allowed(url, self.options.env):
            raise self._fail(f"{url} is not loopback; blocked under tests", "blocked")
        try:
            with httpx.Client(
                timeout=self.options.timeout_s, trust_env=False, verify=ssl_context()
            ) as client:
                response = client.post(url, json=body, headers=dict(self.options.headers))
        except httpx.ConnectError as exc:
            raise self._fail(
                f"cannot connect to {url}: {exc}", "connection", retryable=True
            ) from None
        except httpx.TimeoutException:
            raise self._fail(
                f"{url} gave no answer within {self.options.timeout_s:g}s",
                "timeout",
                retryable=True,
            ) from None
        except httpx.HTTPError as exc:
            raise self._fail(f"{url}: {exc}", "connection", retryable=True) from None
        if response.status_code != 200:
            status = response.status_code
            retryable = status == 429 or status >= 500
            hint = self.not_found_hint.format(model=self.model) if status == 404 else None
            raise self._fail(
                f"{url} answered HTTP {status}: {response.text[:200]}",
                "http_status",
                retryable=retryable,
                status=status,
                hint=hint,
            )
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self._fail(f"{url} did not return JSON", "malformed") from None
        if not isinstance(data, dict):
            raise self._fail(f"{url} returned {type(data).__name__}, not an object", "malformed")
        return data


class OllamaClient(_HttpClient):
    provider_id = "ollama"
    not_found_hint = "Pull the model first: ollama pull {model}"
    chat_path = "/api/chat"
    embed_path = "/api/embed"

    def _default_base(self) -> str:
        return ollama_base_url(self.options.env)

    def _chat_fields(
        self, schema: Mapping[str, Any] | None, max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if schema is not None:
            fields["format"] = dict(schema)
        opts: dict[str, Any] = {}
        if temperature is not None:
            opts["temperature"] = temperature
        if max_tokens is not None:
            opts["num_predict"] = max_tokens
        if opts:
            fields["options"] = opts
        return fields

    def _read_chat(self, data: Mapping[str, Any]) -> tuple[str, TokenUsage]:
        message = data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise self._fail("/api/chat answer has no message.content", "malformed")
        return message["content"], TokenUsage(
            int_field(data, "prompt_eval_count"), int_field(data, "eval_count")
        )

    def _read_embeddings(self, data: Mapping[str, Any], count: int) -> tuple[Vectors, TokenUsage]:
        vectors = _vectors(data.get("embeddings"), count)
        if vectors is None:
            raise self._fail("/api/embed answer has no usable `embeddings`", "malformed")
        return vectors, TokenUsage(int_field(data, "prompt_eval_count"), 0)


class LmStudioClient(_HttpClient):
    provider_id = "lmstudio"
    not_found_hint = "Load the model in LM Studio first: lms load {model}"
    chat_path = "/v1/chat/completions"
    embed_path = "/v1/embeddings"

    def _default_base(self) -> str:
        return lmstudio_base_url(self.options.env)

    def _chat_fields(
        self, schema: Mapping[str, Any] | None, max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if schema is not None:
            fields["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "strict": True, "schema": dict(schema)},
            }
        if temperature is not None:
            fields["temperature"] = temperature
        if max_tokens is not None:
            fields["max_tokens"] = max_tokens
        return fields

    def _read_chat(self, data: Mapping[str, Any]) -> tuple[str, TokenUsage]:
        choices = data.get("choices")
        message = (
            choices[0].get("message")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict)
            else None
        )
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise self._fail(
                "/v1/chat/completions answer has no choices[0].message.content", "malformed"
            )
        usage = data.get("usage")
        return message["content"], TokenUsage(
            int_field(usage, "prompt_tokens"), int_field(usage, "completion_tokens")
        )

    def _read_embeddings(self, data: Mapping[str, Any], count: int) -> tuple[Vectors, TokenUsage]:
        items = data.get("data")
        raw = (
            [i.get("embedding") if isinstance(i, dict) else None for i in items]
            if isinstance(items, list)
            else None
        )
        vectors = _vectors(raw, count)
        if vectors is None:
            raise self._fail("/v1/embeddings answer has no usable data[].embedding", "malformed")
        return vectors, TokenUsage(int_field(data.get("usage"), "prompt_tokens"), 0)


def _vectors(raw: object, expected: int) -> Vectors | None:
    if not isinstance(raw, list) or len(raw) != expected:
        return None
    out: list[tuple[float, ...]] = []
    for vec in raw:
        if not isinstance(vec, list) or not vec:
            return None
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vec):
            return None
        out.append(tuple(float(x) for x in vec))
    return tuple(out)
