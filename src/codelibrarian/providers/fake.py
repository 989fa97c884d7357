"""A provider that needs nothing: for tests, offline demos and examples.

``FakeProvider`` is a probe whose answer you choose; its client, ``FakeClient``,
answers from a ``responder`` you pass (by default: a deterministic instance of
the requested schema, or an echo). Nothing touches the network, the clock or
randomness, so results are byte-identical across runs. Scripted failures test
the retry path; ``calls`` records what was asked.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProviderCallFailed
from .clients.base import (
    ChatMessage,
    ChatResponse,
    ClientBase,
    ClientOptions,
    EmbeddingResponse,
    LlmClient,
    TokenUsage,
    request_key,
)
from .types import ProbeContext, ProbeResult, ProbeStatus, ProviderDescriptor

__all__ = ["FakeClient", "FakeProvider", "Responder", "example_for_schema"]

#: ``responder(messages, schema) -> text``
Responder = Callable[[Sequence[ChatMessage], Mapping[str, Any] | None], str]


def example_for_schema(schema: Mapping[str, Any]) -> object:
    """A small deterministic value that conforms to ``schema`` (the supported subset)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return next(iter(schema["enum"]))
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props: Mapping[str, Any] = schema.get("properties", {})
        return {k: example_for_schema(props[k]) for k in sorted(props)}
    if kind == "array":
        items = schema.get("items", {"type": "string"})
        return [example_for_schema(items) for _ in range(int(schema.get("minItems", 1)))]
    return {"string": "example", "integer": 0, "number": 0, "boolean": False, "null": None}.get(
        str(kind), "example"
    )


def _default_responder(messages: Sequence[ChatMessage], schema: Mapping[str, Any] | None) -> str:
    import json

    if schema is not None:
        return json.dumps(example_for_schema(schema), sort_keys=True)
    last = next((m.content for m in reversed(messages) if m.role == "user"), "")
    return f"fake answer to: {last[:60]}"


class FakeClient(ClientBase):
    """An :class:`LlmClient` answering from a function, with fixed reported latency."""

    def __init__(
        self,
        *,
        model: str = "fake-model",
        provider: str = "fake",
        responder: Responder | None = None,
        latency_ms: int = 1,
        embedding_dim: int = 8,
        failures: Sequence[ProviderCallFailed] = (),
        options: ClientOptions | None = None,
    ) -> None:
        super().__init__(model=model, options=options or ClientOptions(sleep=lambda _s: None))
        self.provider_id = provider
        self._responder = responder or _default_responder
        self.latency_ms = latency_ms
        self.embedding_dim = embedding_dim
        self._failures = list(failures)
        self.calls: list[tuple[tuple[ChatMessage, ...], Mapping[str, Any] | None]] = []

    @property
    def supports_embeddings(self) -> bool:
        return self.embedding_dim > 0

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse:
        def once() -> str:
            self.calls.append((tuple(messages), schema))
            if self._failures:
                raise self._failures.pop(0)
            return self._responder(messages, schema)

        text, attempts = self._retry(request_key(self.provider_id, self.model, messages), once)
        usage = TokenUsage(
            input_tokens=sum(len(m.content.split()) for m in messages),
            output_tokens=len(text.split()),
        )
        return self._answer(text, schema, usage, self.latency_ms, attempts)

    def embed(self, texts: Sequence[str]) -> EmbeddingResponse:
        if self.embedding_dim <= 0:
            raise self._fail("this fake has no embeddings", "unsupported")
        vectors = tuple(self._vector(t) for t in texts)
        usage = TokenUsage(input_tokens=sum(len(t.split()) for t in texts))
        return EmbeddingResponse(vectors, self.provider_id, self.model, usage, self.latency_ms)

    def _vector(self, text: str) -> tuple[float, ...]:
        digest = hashlib.blake2b(text.encode(), digest_size=self.embedding_dim * 2).digest()
        raw = [int.from_bytes(digest[i : i + 2], "big") - 32768 for i in range(0, len(digest), 2)]
        norm = math.sqrt(sum(x * x for x in raw)) or 1.0
        return tuple(x / norm for x in raw)


@dataclass
class FakeProvider:
    """A probe + client factory with a scripted answer (register it in a registry)."""

    id: str = "fake"
    name: str = "Fake provider (offline)"
    priority: int = 1000
    default_model: str = "fake-model"
    available: bool = True
    authenticated: bool = True
    status: ProbeStatus = "ok"
    models: tuple[str, ...] = ("fake-model",)
    supports_embeddings: bool = True
    responder: Responder | None = None
    error: str | None = None
    remedy: str = "nothing to fix: this provider is a test double"
    probes_run: list[ProbeContext] = field(default_factory=list)

    @property
    def descriptor(self) -> ProviderDescriptor:
        return ProviderDescriptor(
            id=self.id,
            name=self.name,
            auth_method="none",
            default_model=self.default_model,
            priority=self.priority,
            supports_embeddings=self.supports_embeddings,
            supports_chat=True,
            env_vars=(),
            remedy=self.remedy,
        )

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        self.probes_run.append(ctx)
        usable = self.available and self.authenticated
        status: ProbeStatus = self.status if not usable or self.status != "ok" else "ok"
        if not usable and status == "ok":
            status = "not_authenticated" if self.available else "unreachable"
        return ProbeResult(
            available=self.available,
            authenticated=self.authenticated,
            status=status,
            error=self.error if status != "ok" else None,
            remedy=self.remedy if status != "ok" else None,
            models=tuple(sorted(self.models)),
        )

    def create_client(self, model: str, options: ClientOptions) -> LlmClient:
        return FakeClient(
            model=model,
            provider=self.id,
            responder=self.responder,
            embedding_dim=8 if self.supports_embeddings else 0,
            options=options,
        )
