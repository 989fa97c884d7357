"""LLM provider discovery, clients, qualification and capability matching.

Seed 004, parts P0 (provider discovery) and P21 (capability requirements). See
``docs/providers.md``. Typical use::

    registry = default_registry(state_dir=State(root).dir)
    chosen = resolve_model(registry)            # env first, then discovery
    client = client_for(registry.require(chosen.provider), chosen.model, ClientOptions())
    answer = client.chat([ChatMessage("user", "hi")])
"""

from __future__ import annotations

from .capabilities import (
    BUILTIN_PROFILES,
    CAPABILITIES,
    LEVELS,
    Capability,
    CapabilityRequirements,
    Level,
    MatchResult,
    ModelCapabilityRegistry,
    ModelMatch,
    ModelProfile,
    Rejection,
    match_models,
)
from .clients import (
    ChatMessage,
    ChatResponse,
    ClaudeCliClient,
    ClientOptions,
    CodexCliClient,
    EmbeddingResponse,
    LlmClient,
    LmStudioClient,
    OllamaClient,
    RetryPolicy,
    TokenUsage,
    client_for,
)
from .fake import FakeClient, FakeProvider
from .qualify import (
    PASS_CRITERIA,
    QUALIFICATION_TESTS,
    QualificationResult,
    QualificationScores,
    QualificationStore,
    qualify_model,
)
from .registry import (
    CACHE_TTL_S,
    ENTRY_POINT_GROUP,
    PROBE_TIMEOUT_S,
    Discovery,
    PluginLoadError,
    ProviderRegistry,
    default_registry,
)
from .resolve import ENV_MODEL, ENV_PROVIDER, ResolvedModel, format_unavailable, resolve_model
from .types import (
    AuthMethod,
    DiscoveredProvider,
    ProbeContext,
    ProbeResult,
    ProbeStatus,
    ProviderDescriptor,
    ProviderProbe,
    ProviderStatus,
)

__all__ = [
    "BUILTIN_PROFILES",
    "CACHE_TTL_S",
    "CAPABILITIES",
    "ENTRY_POINT_GROUP",
    "ENV_MODEL",
    "ENV_PROVIDER",
    "LEVELS",
    "PASS_CRITERIA",
    "PROBE_TIMEOUT_S",
    "QUALIFICATION_TESTS",
    "AuthMethod",
    "Capability",
    "CapabilityRequirements",
    "ChatMessage",
    "ChatResponse",
    "ClaudeCliClient",
    "ClientOptions",
    "CodexCliClient",
    "DiscoveredProvider",
    "Discovery",
    "EmbeddingResponse",
    "FakeClient",
    "FakeProvider",
    "Level",
    "LlmClient",
    "LmStudioClient",
    "MatchResult",
    "ModelCapabilityRegistry",
    "ModelMatch",
    "ModelProfile",
    "OllamaClient",
    "PluginLoadError",
    "ProbeContext",
    "ProbeResult",
    "ProbeStatus",
    "ProviderDescriptor",
    "ProviderProbe",
    "ProviderRegistry",
    "ProviderStatus",
    "QualificationResult",
    "QualificationScores",
    "QualificationStore",
    "Rejection",
    "ResolvedModel",
    "RetryPolicy",
    "TokenUsage",
    "client_for",
    "default_registry",
    "format_unavailable",
    "match_models",
    "qualify_model",
    "resolve_model",
]
