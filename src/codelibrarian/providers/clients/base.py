"""The client protocol every provider speaks, its values, and the retry loop."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from ...errors import ProviderCallFailed
from ..schema import schema_problems

__all__ = [
    "ChatMessage",
    "ChatResponse",
    "ClientBase",
    "ClientOptions",
    "EmbeddingResponse",
    "LlmClient",
    "RetryPolicy",
    "TokenUsage",
    "call_with_retry",
    "interpret_output",
]

Role = Literal["system", "user", "assistant"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens the provider reports (0 when it reports nothing)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
        }


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """One chat answer. With a schema, ``data`` holds the parsed JSON (or None),
    ``json_error`` why it did not parse and ``schema_errors`` how it broke the schema."""

    text: str
    provider: str
    model: str
    usage: TokenUsage
    latency_ms: int
    attempts: int = 1
    data: object = None
    json_error: str | None = None
    schema_errors: tuple[str, ...] = ()

    def require_data(self) -> object:
        """The parsed, schema-valid JSON, or ``ProviderCallFailed(kind="schema")``."""
        if self.json_error is not None or self.schema_errors:
            detail = self.json_error or "; ".join(self.schema_errors[:3])
            raise ProviderCallFailed(
                f"{self.provider}/{self.model} did not return valid JSON: {detail}",
                provider=self.provider,
                kind="schema",
                hint="Try a stronger model, or run `librarian providers qualify` on this one.",
            )
        return self.data


@dataclass(frozen=True, slots=True)
class EmbeddingResponse:
    vectors: tuple[tuple[float, ...], ...]
    provider: str
    model: str
    usage: TokenUsage
    latency_ms: int
    attempts: int = 1


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and *deterministic* jitter.

    The seed draws jitter from an unseeded RNG, which makes replays differ; here
    the jitter is a hash of ``seed``, the request key and the attempt number.
    """

    max_attempts: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    seed: str = "codelibrarian"

    def delay(self, attempt: int, key: str = "") -> float:
        """Seconds to wait after failed ``attempt`` (1-based): backoff × [0.5, 1.5)."""
        backoff = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        digest = hashlib.blake2b(f"{self.seed}|{key}|{attempt}".encode(), digest_size=8)
        fraction = int.from_bytes(digest.digest(), "big") / 2**64
        return float(backoff * (0.5 + fraction))


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """How a client runs: environment, time limits, retries, injected sleep/timer."""

    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] = time.sleep
    timer: Callable[[], float] = time.perf_counter
    #: HTTP providers: override the URL the environment gives
    base_url: str | None = None
    #: CLI providers: working directory of the subprocess
    cwd: str | None = None
    #: HTTP providers: extra request headers (the execution engine sends an
    #: ``Idempotency-Key`` per workflow step, so a server that honours it never
    #: works a step twice when a crashed run is resumed)
    headers: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class LlmClient(Protocol):
    """Chat (optionally constrained by a JSON schema) and, where offered, embeddings."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def supports_embeddings(self) -> bool: ...

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ChatResponse: ...

    def embed(self, texts: Sequence[str]) -> EmbeddingResponse: ...


def call_with_retry(
    fn: Callable[[], T], *, options: ClientOptions, provider: str, key: str
) -> tuple[T, int]:
    """Run ``fn`` until it succeeds or a non-retryable error / the attempt limit.

    Returns ``(value, attempts)``; the last error carries ``attempts``.
    """
    attempts = max(1, options.retry.max_attempts)
    for attempt in range(1, attempts + 1):
        try:
            return fn(), attempt
        except ProviderCallFailed as exc:
            exc.attempts = attempt
            if not exc.retryable or attempt == attempts:
                raise
            options.sleep(options.retry.delay(attempt, key))
    raise AssertionError("unreachable")  # pragma: no cover


def interpret_output(
    text: str, schema: Mapping[str, Any] | None
) -> tuple[object, str | None, tuple[str, ...]]:
    """``(data, json_error, schema_errors)`` for a raw answer (fences tolerated)."""
    if schema is None:
        return None, None, ()
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0].strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at char {exc.pos})", ()
    return data, None, tuple(schema_problems(data, schema))


def request_key(provider: str, model: str, messages: Sequence[ChatMessage]) -> str:
    """A stable key for a request (feeds the retry jitter)."""
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{provider}|{model}".encode())
    for m in messages:
        h.update(f"|{m.role}:{m.content}".encode())
    return h.hexdigest()


def elapsed_ms(options: ClientOptions, start: float) -> int:
    return max(0, round((options.timer() - start) * 1000))


def int_field(data: object, key: str) -> int:
    """``data[key]`` when ``data`` is a mapping and the value a true int, else 0."""
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class ClientBase:
    """What the built-in clients share: who they are, their options, how they fail,
    retry and turn an answer's text into a :class:`ChatResponse`."""

    #: the provider id reported in responses and errors
    provider_id: str = ""

    def __init__(self, *, model: str, options: ClientOptions | None = None) -> None:
        self._model = model
        self.options = options or ClientOptions()

    @property
    def provider(self) -> str:
        return self.provider_id

    @property
    def model(self) -> str:
        return self._model

    def _fail(
        self,
        message: str,
        kind: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        hint: str | None = None,
    ) -> ProviderCallFailed:
        return ProviderCallFailed(
            message,
            provider=self.provider_id,
            kind=kind,
            retryable=retryable,
            status=status,
            hint=hint,
        )

    def _retry(self, key: str, fn: Callable[[], T]) -> tuple[T, int]:
        return call_with_retry(fn, options=self.options, provider=self.provider_id, key=key)

    def _answer(
        self,
        text: str,
        schema: Mapping[str, Any] | None,
        usage: TokenUsage,
        latency_ms: int,
        attempts: int,
    ) -> ChatResponse:
        data, json_error, problems = interpret_output(text, schema)
        return ChatResponse(
            text,
            self.provider_id,
            self.model,
            usage,
            latency_ms,
            attempts,
            data,
            json_error,
            problems,
        )
