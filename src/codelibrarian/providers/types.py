"""Values and protocols of provider discovery (seed 004, P0 §C).

A *probe* answers "is this provider installed and logged in, and which models
does it offer?" without side effects; a *client* talks to a provider once one is
chosen. Both are plain objects behind small protocols so third parties can add
providers through the ``codelibrarian.providers`` entry-point group.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args, runtime_checkable

__all__ = [
    "AuthMethod",
    "DiscoveredProvider",
    "ModelsSource",
    "ProbeContext",
    "ProbeResult",
    "ProbeStatus",
    "ProviderDescriptor",
    "ProviderProbe",
    "ProviderStatus",
]

#: how a provider authenticates. The default policy (seed P0 §E) is CLI login or a
#: local server; ``api_key`` exists so third-party probes can declare themselves.
AuthMethod = Literal["cli_login", "local", "api_key", "none"]

#: one word summarising a probe result, for tables and JSON
ProbeStatus = Literal[
    "ok",
    "not_installed",
    "not_authenticated",
    "no_models",
    "unreachable",
    "timeout",
    "error",
    "blocked",
]
_STATUSES = frozenset(get_args(ProbeStatus))

#: where a result's ``models`` came from
ModelsSource = Literal["probe", "last_known_good", "none"]
_MODELS_SOURCES = frozenset(get_args(ModelsSource))


@dataclass(frozen=True, slots=True)
class ProviderDescriptor:
    """What a provider is and what it can do (seed ``LlmProviderDescriptor``)."""

    id: str
    name: str
    auth_method: AuthMethod
    default_model: str
    #: lower is preferred when several providers are available
    priority: int
    supports_embeddings: bool
    supports_chat: bool
    #: environment variables that configure the provider (shown by ``providers list``)
    env_vars: tuple[str, ...] = ()
    #: one line telling a user how to make the provider available
    remedy: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "auth_method": self.auth_method,
            "default_model": self.default_model,
            "priority": self.priority,
            "supports_embeddings": self.supports_embeddings,
            "supports_chat": self.supports_chat,
            "env_vars": list(self.env_vars),
            "remedy": self.remedy,
        }


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one probe found (seed ``LlmProviderProbeResult``).

    ``available`` means the binary or endpoint exists; ``authenticated`` that it
    can be used now. ``error`` says what is wrong and ``remedy`` how to fix it.
    ``models`` is sorted; ``metadata`` holds short strings only (never secrets).
    """

    available: bool
    authenticated: bool
    status: ProbeStatus = "ok"
    error: str | None = None
    remedy: str | None = None
    models: tuple[str, ...] = ()
    version: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    #: wall-clock seconds since the epoch when the probe ran (set by the registry)
    checked_at: int = 0
    #: where ``models`` came from: this probe, or the persisted last-known-good
    models_source: ModelsSource = "probe"

    @property
    def usable(self) -> bool:
        """Available, authenticated and nothing else wrong: discovery may pick it."""
        return self.available and self.authenticated and self.status == "ok"

    def to_dict(self) -> dict[str, object]:
        return {
            "available": self.available,
            "authenticated": self.authenticated,
            "status": self.status,
            "error": self.error,
            "remedy": self.remedy,
            "models": list(self.models),
            "models_source": self.models_source,
            "version": self.version,
            "metadata": dict(sorted(self.metadata.items())),
            "checked_at": self.checked_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> ProbeResult:
        """Rebuild a result from :meth:`to_dict` output; raises ``ValueError`` if malformed."""
        status = str(data.get("status", "error"))
        if status not in _STATUSES:
            raise ValueError(f"unknown probe status {status!r}")
        models = data.get("models", [])
        metadata = data.get("metadata", {})
        checked_at = data.get("checked_at", 0)
        source = str(data.get("models_source", "probe"))
        if (
            not isinstance(models, list)
            or not isinstance(metadata, dict)
            or not isinstance(checked_at, int)
            or source not in _MODELS_SOURCES
        ):
            raise ValueError("malformed probe result")
        error = data.get("error")
        remedy = data.get("remedy")
        version = data.get("version")
        return cls(
            available=bool(data.get("available")),
            authenticated=bool(data.get("authenticated")),
            status=status,  # type: ignore[arg-type]
            error=None if error is None else str(error),
            remedy=None if remedy is None else str(remedy),
            models=tuple(sorted(str(m) for m in models)),
            version=None if version is None else str(version),
            metadata={str(k): str(v) for k, v in metadata.items()},
            checked_at=checked_at,
            models_source=source,  # type: ignore[arg-type]
        )


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """Everything a probe may consult: the environment and its time limit.

    Probes read variables from ``env`` (never ``os.environ`` directly) so tests
    and embedding applications decide what a probe sees.
    """

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    timeout_s: float = 5.0
    #: ``time.monotonic()`` value by which the whole probe must finish (set by the
    #: registry); a probe making several calls gives each only what is left
    deadline: float | None = None

    def get(self, name: str, default: str = "") -> str:
        return self.env.get(name, default)

    def time_left(self) -> float:
        """Seconds the next call may take: the timeout, capped by the deadline."""
        if self.deadline is None:
            return self.timeout_s
        return max(0.0, min(self.timeout_s, self.deadline - time.monotonic()))


@runtime_checkable
class ProviderProbe(Protocol):
    """A provider plugin: a descriptor, a probe, and a client factory."""

    @property
    def descriptor(self) -> ProviderDescriptor: ...

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        """Check availability and authentication; fast, side-effect free."""
        ...


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    """A descriptor with the latest probe result, for listings and errors."""

    descriptor: ProviderDescriptor
    result: ProbeResult

    def to_dict(self) -> dict[str, object]:
        return {**self.descriptor.to_dict(), "result": self.result.to_dict()}


@dataclass(frozen=True, slots=True)
class DiscoveredProvider:
    """The provider and model discovery chose, and why."""

    provider: str
    model: str
    descriptor: ProviderDescriptor
    result: ProbeResult
    #: ``default`` (descriptor default is offered or the list is unknown) or ``first_listed``
    model_choice: Literal["default", "first_listed"] = "default"
