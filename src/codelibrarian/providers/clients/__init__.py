"""Provider clients behind one protocol (:class:`LlmClient`).

Build one with :func:`client_for` (which asks the provider's plugin for it), or
directly (``OllamaClient(model=..., options=ClientOptions(...))``).
"""

from __future__ import annotations

from ...errors import ProviderCallFailed
from ..types import ProviderProbe
from .base import (
    ChatMessage,
    ChatResponse,
    ClientOptions,
    EmbeddingResponse,
    LlmClient,
    RetryPolicy,
    TokenUsage,
    call_with_retry,
    interpret_output,
)
from .cli import ClaudeCliClient, CodexCliClient
from .http import LmStudioClient, OllamaClient

__all__ = [
    "ChatMessage",
    "ChatResponse",
    "ClaudeCliClient",
    "ClientOptions",
    "CodexCliClient",
    "EmbeddingResponse",
    "LlmClient",
    "LmStudioClient",
    "OllamaClient",
    "RetryPolicy",
    "TokenUsage",
    "call_with_retry",
    "client_for",
    "interpret_output",
]


def client_for(probe: ProviderProbe, model: str, options: ClientOptions) -> LlmClient:
    """The client a provider plugin makes for ``model`` (``create_client`` hook)."""
    factory = getattr(probe, "create_client", None)
    provider = probe.descriptor.id
    if factory is None:
        raise ProviderCallFailed(
            f"provider {provider!r} has a probe but no client",
            provider=provider,
            kind="unsupported",
            hint="Its plugin must define create_client(model, options).",
        )
    client = factory(model, options)
    if not isinstance(client, LlmClient):
        raise ProviderCallFailed(
            f"provider {provider!r} returned {type(client).__name__}, not an LlmClient",
            provider=provider,
            kind="unsupported",
        )
    return client
