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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from ...errors import ProviderCallFailed
from .. import guard
from ..probes._common import ssl_context
from ..probes.lmstudio import lmstudio_base_url
from ..probes.ollama import ollama_base_url
from .base import (
    ChatMessage,
    ChatResponse,
    ClientOptions,
    EmbeddingResponse,
    TokenUsage,
    call_with_retry,
    elapsed_ms,
    interpret_output,
    request_key,
)

__all__ = ["LmStudioClient", "OllamaClient"]


class _HttpClient:
    provider_id = ""
    not_found_hint = ""

    def __init__(self, *, model: str, options: ClientOptions | None = None) -> None:
        self._model = model
        self.options = options or ClientOptions()
        self.base_url = (self.options.base_url or self._default_base()).rstrip("/")

    def _default_base(self) -> str:
        raise NotImplementedError

    @property
    def provider(self) -> str:
        return self.provider_id

    @property
    def model(self) -> str:
        return self._model

    @property
    def supports_embeddings(self) -> bool:
        return True

    def _fail(self, message: str, kind: str, **kw: Any) -> ProviderCallFailed:
        return ProviderCallFailed(message, provider=self.provider_id, kind=kind, **kw)

    def _post(self, path: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        url = self.base_url + path
        if not guard.url_allowed(url, self.options.env):
            raise self._fail(f"{url} is not loopback; blocked under tests", "blocked")
        try:
            with httpx.Client(
                timeout=self.options.timeout_s, trust_env=False, verify=ssl_context()
            ) as client:
                response = client.post(url, json=body)
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

    def _call(self, key: str, fn: Callable[[], Any]) -> tuple[Any, int]:
        return call_with_retry(fn, options=self.options, provider=self.provider_id, key=key)


class OllamaClient(_HttpClient):
    provider_id = "ollama"
    not_found_hint = "Pull the model first: ollama pull {model}"

    def _default_base(self) -> str:
        return ollama_base_url(self.options.env)

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
        }
        if schema is not None:
            body["format"] = dict(schema)
        opts: dict[str, Any] = {}
        if temperature is not None:
            opts["temperature"] = temperature
        if max_tokens is not None:
            opts["num_predict"] = max_tokens
        if opts:
            body["options"] = opts
        start = self.options.timer()

        def once() -> tuple[str, TokenUsage]:
            data = self._post("/api/chat", body)
            message = data.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("content"), str):
                raise self._fail("/api/chat answer has no message.content", "malformed")
            return message["content"], TokenUsage(
                _int(data, "prompt_eval_count"), _int(data, "eval_count")
            )

        (text, usage), attempts = self._call(request_key("ollama", self.model, messages), once)
        data, json_error, problems = interpret_output(text, schema)
        return ChatResponse(
            text,
            self.provider_id,
            self.model,
            usage,
            elapsed_ms(self.options, start),
            attempts,
            data,
            json_error,
            problems,
        )

    def embed(self, texts: Sequence[str]) -> EmbeddingResponse:
        body = {"model": self.model, "input": list(texts)}
        start = self.options.timer()

        def once() -> tuple[tuple[tuple[float, ...], ...], TokenUsage]:
            data = self._post("/api/embed", body)
            vectors = _vectors(data.get("embeddings"), len(texts))
            if vectors is None:
                raise self._fail("/api/embed answer has no usable `embeddings`", "malformed")
            return vectors, TokenUsage(_int(data, "prompt_eval_count"), 0)

        key = request_key("ollama-embed", self.model, [ChatMessage("user", t) for t in texts])
        (vectors, usage), attempts = self._call(key, once)
        return EmbeddingResponse(
            vectors, self.provider_id, self.model, usage, elapsed_ms(self.options, start), attempts
        )


class LmStudioClient(_HttpClient):
    provider_id = "lmstudio"
    not_found_hint = "Load the model in LM Studio first: lms load {model}"

    def _default_base(self) -> str:
        return lmstudio_base_url(self.options.env)

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
        }
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "strict": True, "schema": dict(schema)},
            }
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        start = self.options.timer()

        def once() -> tuple[str, TokenUsage]:
            data = self._post("/v1/chat/completions", body)
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
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            return message["content"], TokenUsage(
                _int(usage, "prompt_tokens"), _int(usage, "completion_tokens")
            )

        (text, usage), attempts = self._call(request_key("lmstudio", self.model, messages), once)
        data, json_error, problems = interpret_output(text, schema)
        return ChatResponse(
            text,
            self.provider_id,
            self.model,
            usage,
            elapsed_ms(self.options, start),
            attempts,
            data,
            json_error,
            problems,
        )

    def embed(self, texts: Sequence[str]) -> EmbeddingResponse:
        body = {"model": self.model, "input": list(texts)}
        start = self.options.timer()

        def once() -> tuple[tuple[tuple[float, ...], ...], TokenUsage]:
            data = self._post("/v1/embeddings", body)
            items = data.get("data")
            raw = (
                [i.get("embedding") if isinstance(i, dict) else None for i in items]
                if isinstance(items, list)
                else None
            )
            vectors = _vectors(raw, len(texts))
            if vectors is None:
                raise self._fail(
                    "/v1/embeddings answer has no usable data[].embedding", "malformed"
                )
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            return vectors, TokenUsage(_int(usage, "prompt_tokens"), 0)

        key = request_key("lmstudio-embed", self.model, [ChatMessage("user", t) for t in texts])
        (vectors, usage), attempts = self._call(key, once)
        return EmbeddingResponse(
            vectors, self.provider_id, self.model, usage, elapsed_ms(self.options, start), attempts
        )


def _vectors(raw: object, expected: int) -> tuple[tuple[float, ...], ...] | None:
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


def _int(data: object, key: str) -> int:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
