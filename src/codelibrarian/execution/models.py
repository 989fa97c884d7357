"""Which model works a step: the provider registry and P21's capability matcher.

:class:`ModelAccess` is built lazily the first time a run needs a model (discovery
probes installed CLIs and local servers). For each step it matches the
primitive's :class:`~codelibrarian.providers.capabilities.CapabilityRequirements`
against the profiles of the models usable right now — the built-in table, plus
``[[execution.models]]`` from the configuration, restricted to one provider when
the run names one — and emits the seed's ``capability_required`` /
``capability_matched`` / ``capability_mismatch`` evidence (provider and model
ids, counts; never prompts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ProviderUnavailable, UnverifiedByTrace

if TYPE_CHECKING:
    from ..config import ModelProfileConfig
    from ..providers.capabilities import CapabilityRequirements, MatchResult, ModelProfile
    from ..providers.clients.base import LlmClient
    from ..providers.registry import ProviderRegistry

__all__ = ["ModelAccess", "ModelChoice"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model matched for one step (or why none was)."""

    provider: str | None
    model: str | None
    events: tuple[dict[str, Any], ...] = ()
    trace: UnverifiedByTrace | None = None


@dataclass
class ModelAccess:
    """Provider discovery and matching for one process (see the module docstring)."""

    registry: ProviderRegistry
    extra: Sequence[ModelProfile] = ()
    provider: str | None = None
    _profiles: tuple[ModelProfile, ...] | None = field(default=None, repr=False)

    @classmethod
    def create(
        cls,
        *,
        state_dir: Path,
        env: Mapping[str, str],
        profiles: Sequence[ModelProfileConfig] = (),
        provider: str | None = None,
        registry: ProviderRegistry | None = None,
    ) -> ModelAccess:
        from ..providers.capabilities import ModelProfile
        from ..providers.registry import default_registry

        reg = registry or default_registry(state_dir=state_dir, env=env)
        extra = tuple(
            ModelProfile(
                p.model,
                p.provider,
                frozenset(p.capabilities),  # type: ignore[arg-type]
                p.context_window,
                p.latency_ms,
                dict(p.levels),  # type: ignore[arg-type]
                source="discovered",
            )
            for p in profiles
        )
        return cls(reg, extra, provider)

    def profiles(self) -> tuple[ModelProfile, ...]:
        """Profiles of the models usable now (discovery cached by the registry)."""
        if self._profiles is None:
            from ..providers.capabilities import ModelCapabilityRegistry

            table = ModelCapabilityRegistry()
            for p in self.extra:
                table.add(p)
            found = table.available(self.registry, self.registry.discover())
            if self.provider is not None:
                found = tuple(p for p in found if p.provider == self.provider)
            self._profiles = found
        return self._profiles

    def choose(self, step: str, requirements: CapabilityRequirements) -> ModelChoice:
        """Match ``requirements``; the events say what was required and what matched."""
        from ..providers.capabilities import match_models

        events: list[dict[str, Any]] = [
            {
                "kind": "capability_required",
                "dispatch": step,
                "required": sorted(requirements.required),
                "preferred": sorted(requirements.preferred),
            }
        ]
        profiles = self.profiles()
        if not profiles:
            trace = UnverifiedByTrace(
                "provider_unavailable",
                "no usable model"
                + (f" from provider {self.provider}" if self.provider else "")
                + "; see `librarian providers list`",
            )
            events.append({"kind": "capability_mismatch", "dispatch": step, "rejected": 0})
            return ModelChoice(None, None, tuple(events), trace)
        result: MatchResult = match_models(requirements, profiles)
        if result.best is None:
            events.append(
                {"kind": "capability_mismatch", "dispatch": step, "rejected": len(result.rejected)}
            )
            why = "; ".join(
                f"{r.profile.provider}/{r.profile.model_id}: {', '.join(r.reasons)}"
                for r in result.rejected[:3]
            )
            return ModelChoice(
                None, None, tuple(events), UnverifiedByTrace("capability_mismatch", why)
            )
        best = result.best.profile
        events.append(
            {
                "kind": "capability_matched",
                "dispatch": step,
                "provider": best.provider,
                "model": best.model_id,
                "candidates": len(result.ranked),
            }
        )
        return ModelChoice(best.provider, best.model_id, tuple(events))

    def client(
        self, provider: str, model: str, *, idempotency_key: str, timeout_s: float | None
    ) -> LlmClient:
        """A client for ``provider``/``model`` that sends the step's idempotency key."""
        from ..providers.clients import ClientOptions, client_for

        probe = self.registry.get(provider)
        if probe is None:
            raise ProviderUnavailable(f"provider {provider!r} is not registered")
        options = ClientOptions(
            env=self.registry.env,
            timeout_s=120.0 if timeout_s is None else max(1.0, min(120.0, timeout_s)),
            headers={"Idempotency-Key": idempotency_key},
        )
        return client_for(probe, model, options)
