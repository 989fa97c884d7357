"""Which provider and model to use (seed P0 §F, ``resolveLibrarianModelConfigWithDiscovery``).

Order:

1. ``LIBRARIAN_LLM_PROVIDER`` and ``LIBRARIAN_LLM_MODEL`` both set: use them as given
   (the provider must be registered; it is not probed — an explicit choice is
   trusted, and a broken one fails loudly at the first call).
2. Only ``LIBRARIAN_LLM_PROVIDER``: that provider with its model variable
   (e.g. ``OLLAMA_MODEL``) or its default model.
3. Otherwise discovery: the usable provider with the best priority. A lone
   ``LIBRARIAN_LLM_MODEL`` then overrides the discovered model.

When discovery finds nothing, :class:`~codelibrarian.errors.ProviderUnavailable`
carries ``unverified_by_trace(provider_unavailable)`` and a report of every
provider checked, its status and how to fix it. There is no API-key fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import ProviderUnavailable, UnverifiedByTrace
from .registry import ProviderRegistry
from .types import ProviderDescriptor, ProviderStatus

__all__ = ["ENV_MODEL", "ENV_PROVIDER", "ResolvedModel", "format_unavailable", "resolve_model"]

ENV_PROVIDER = "LIBRARIAN_LLM_PROVIDER"
ENV_MODEL = "LIBRARIAN_LLM_MODEL"


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    provider: str
    model: str
    descriptor: ProviderDescriptor
    source: Literal["env", "env_provider_default", "env_provider_model_var", "discovery"]

    def to_dict(self) -> dict[str, object]:
        return {"provider": self.provider, "model": self.model, "source": self.source}


def _model_var(descriptor: ProviderDescriptor) -> str | None:
    name = f"{descriptor.id.upper()}_MODEL"
    return name if name in descriptor.env_vars else None


def resolve_model(
    registry: ProviderRegistry,
    *,
    require_embeddings: bool = False,
    force_refresh: bool = False,
) -> ResolvedModel:
    """Pick a provider and model from the registry's environment, then discovery."""
    env = registry.env
    provider = env.get(ENV_PROVIDER, "").strip()
    model = env.get(ENV_MODEL, "").strip()
    if provider:
        descriptor = registry.require(provider).descriptor
        if model:
            return ResolvedModel(provider, model, descriptor, "env")
        var = _model_var(descriptor)
        if var and env.get(var, "").strip():
            return ResolvedModel(provider, env[var].strip(), descriptor, "env_provider_model_var")
        return ResolvedModel(provider, descriptor.default_model, descriptor, "env_provider_default")
    found = registry.find_best(force_refresh=force_refresh, require_embeddings=require_embeddings)
    if found is None:
        statuses = registry.statuses()
        raise ProviderUnavailable(
            "No LLM provider is available.",
            trace=UnverifiedByTrace("provider_unavailable", _summary(statuses)),
            hint=format_unavailable(statuses, require_embeddings=require_embeddings),
        )
    var = _model_var(found.descriptor)
    if model:
        chosen = model
    elif var and env.get(var, "").strip():
        chosen = env[var].strip()
    else:
        chosen = found.model
    return ResolvedModel(found.provider, chosen, found.descriptor, "discovery")


def _summary(statuses: Sequence[ProviderStatus]) -> str:
    parts = [f"{s.descriptor.id}={s.result.status}" for s in statuses]
    return "checked " + (", ".join(parts) if parts else "no providers (none registered)")


def format_unavailable(
    statuses: Sequence[ProviderStatus], *, require_embeddings: bool = False
) -> str:
    """The helpful part of the error: what was checked, what each said, how to fix it."""
    lines = ["Checked providers (best priority first):"]
    if not statuses:
        lines.append("  (none registered; is codelibrarian installed with its entry points?)")
    for s in statuses:
        d, r = s.descriptor, s.result
        if r.usable and require_embeddings and not d.supports_embeddings:
            what = "available, but offers no embeddings"
        elif r.usable:
            what = "available"
        else:
            what = f"{r.status}: {r.error or 'unavailable'}"
        lines.append(f"  - {d.name} [{d.id}, priority {d.priority}]: {what}")
        fix = r.remedy or d.remedy
        if fix and not r.usable:
            lines.append(f"      fix: {fix}")
    lines += [
        "To fix, do one of:",
        f"  - set {ENV_PROVIDER} (and optionally {ENV_MODEL}) to a provider you have;",
        "  - log in to a CLI: `claude auth login` or `codex login`;",
        '  - start a local model server: "ollama serve" or LM Studio\'s server;',
        "  - install a plugin that registers a provider in the "
        "`codelibrarian.providers` entry-point group.",
        "Then run `librarian providers check --refresh`.",
    ]
    return "\n".join(lines)
