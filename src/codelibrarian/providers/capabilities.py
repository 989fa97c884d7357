"""LLM capability requirements and matching (seed 004, P21).

* a vocabulary of ten capabilities and three levels (basic < advanced < expert);
* :class:`ModelProfile` — what a model can do, its context window and latency;
* :class:`ModelCapabilityRegistry` — built-in profiles plus what discovery found
  (models a probe listed, upgraded by a passed qualification);
* :class:`CapabilityRequirements` — what a primitive needs (required) and would
  like (preferred);
* :func:`match_models` — filters on required capabilities, context window,
  latency and levels, ranks by preferred capabilities, breaks ties
  deterministically, and explains every acceptance and rejection.

Seed fixes: the seed stops at the first unmet requirement (so a rejection cannot
say everything that was wrong), ranks by a sort that is not total, and treats a
level missing from ``capabilityLevels`` as ``undefined``. Here every problem is
listed, ties break on latency, context, provider and model id, and a capability
a model has without a stated level counts as ``basic``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from ..errors import UsageError
from .registry import Discovery, ProviderRegistry

__all__ = [
    "BUILTIN_PROFILES",
    "CAPABILITIES",
    "LEVELS",
    "Capability",
    "CapabilityRequirements",
    "Level",
    "MatchResult",
    "ModelCapabilityRegistry",
    "ModelMatch",
    "ModelProfile",
    "Rejection",
    "match_models",
]

Capability = Literal[
    "reasoning",
    "code_generation",
    "code_analysis",
    "long_context",
    "json_mode",
    "function_calling",
    "vision",
    "streaming",
    "low_latency",
    "high_accuracy",
]
Level = Literal["basic", "advanced", "expert"]
CAPABILITIES: tuple[Capability, ...] = get_args(Capability)
LEVELS: tuple[Level, ...] = get_args(Level)
_RANK: Mapping[str, int] = {"basic": 1, "advanced": 2, "expert": 3}


def _check_caps(caps: Iterable[str], where: str) -> None:
    unknown = sorted(set(caps) - set(CAPABILITIES))
    if unknown:
        raise UsageError(
            f"unknown capability {unknown[0]!r} in {where}",
            hint=f"Known capabilities: {', '.join(CAPABILITIES)}.",
        )


def _check_levels(levels: Mapping[Capability, Level] | Mapping[str, str], where: str) -> None:
    _check_caps(levels, where)
    bad = sorted(v for v in levels.values() if v not in _RANK)
    if bad:
        raise UsageError(
            f"unknown level {bad[0]!r} in {where}", hint=f"Levels: {', '.join(LEVELS)}."
        )


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What one model offers. ``source``: builtin, discovered, or qualified."""

    model_id: str
    provider: str
    capabilities: frozenset[Capability]
    context_window: int
    typical_latency_ms: int
    levels: Mapping[Capability, Level] = field(default_factory=dict)
    source: Literal["builtin", "discovered", "qualified"] = "builtin"

    def __post_init__(self) -> None:
        _check_caps(self.capabilities, f"profile {self.provider}/{self.model_id}")
        _check_levels(self.levels, f"profile {self.provider}/{self.model_id}")

    @property
    def key(self) -> tuple[str, str]:
        return (self.provider, self.model_id)

    def level_of(self, cap: Capability) -> Level | None:
        """The stated level, ``basic`` for an unlevelled capability, None if absent."""
        if cap not in self.capabilities:
            return None
        return self.levels.get(cap, "basic")

    def to_dict(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "model": self.model_id,
            "capabilities": sorted(self.capabilities),
            "levels": dict(sorted(self.levels.items())),
            "context_window": self.context_window,
            "typical_latency_ms": self.typical_latency_ms,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class CapabilityRequirements:
    """What a primitive needs from a model (seed ``CapabilityRequirements``)."""

    required: tuple[Capability, ...] = ()
    preferred: tuple[Capability, ...] = ()
    min_context_tokens: int | None = None
    max_latency_ms: int | None = None
    levels: Mapping[Capability, Level] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_caps((*self.required, *self.preferred), "requirements")
        _check_levels(self.levels, "requirements")


def _p(
    provider: str,
    model: str,
    caps: str,
    context: int,
    latency: int,
    **levels: Level,
) -> ModelProfile:
    return ModelProfile(
        model,
        provider,
        frozenset(caps.split()),  # type: ignore[arg-type]
        context,
        latency,
        levels,  # type: ignore[arg-type]
    )


_CORE = "reasoning code_generation code_analysis long_context json_mode streaming"
#: Built-in profiles. Latencies are typical first-answer times, deliberately rough;
#: the seed's model ids carried invented dates, so current aliases are used.
BUILTIN_PROFILES: tuple[ModelProfile, ...] = (
    _p("claude", "claude-opus-4-5", f"{_CORE} vision high_accuracy", 200_000, 2000,
       reasoning="expert", code_generation="expert", code_analysis="expert"),
    _p("claude", "claude-sonnet-4-5", f"{_CORE} vision low_latency", 200_000, 800,
       reasoning="advanced", code_generation="advanced", code_analysis="advanced"),
    _p("claude", "claude-haiku-4-5", f"{_CORE} vision low_latency", 200_000, 500),
    _p("codex", "gpt-5-codex", f"{_CORE} function_calling high_accuracy", 272_000, 2500,
       reasoning="expert", code_generation="expert", code_analysis="advanced"),
    _p("ollama", "llama3.2", "code_analysis streaming", 128_000, 1500),
)  # fmt: skip

#: what an unknown model a probe listed is assumed to offer
_DISCOVERED_CAPS: frozenset[Capability] = frozenset({"code_analysis", "streaming"})
_DISCOVERED_CONTEXT = 8192
_DISCOVERED_LATENCY_MS = 3000


def _base_name(model: str) -> str:
    return model.removesuffix(":latest")


class ModelCapabilityRegistry:
    """Profiles by ``(provider, model)``; built-ins first, additions override."""

    def __init__(self, profiles: Iterable[ModelProfile] = BUILTIN_PROFILES) -> None:
        self._profiles: dict[tuple[str, str], ModelProfile] = {}
        for profile in profiles:
            self.add(profile)

    def add(self, profile: ModelProfile) -> None:
        self._profiles[profile.key] = profile

    def get(self, provider: str, model: str) -> ModelProfile | None:
        return self._profiles.get((provider, model)) or self._profiles.get(
            (provider, _base_name(model))
        )

    def profiles(self) -> tuple[ModelProfile, ...]:
        return tuple(self._profiles[k] for k in sorted(self._profiles))

    def available(
        self,
        registry: ProviderRegistry,
        discovery: Discovery,
        qualified: Mapping[tuple[str, str], bool] | None = None,
    ) -> tuple[ModelProfile, ...]:
        """Profiles for the models usable providers offer right now.

        A provider that lists models contributes those; one that lists none (the
        CLIs) contributes its built-in profiles, or its default model. Unknown
        models get a conservative ``discovered`` profile; a passed qualification
        adds ``json_mode`` (``source="qualified"``).
        """
        qualified = qualified or {}
        out: dict[tuple[str, str], ModelProfile] = {}
        for probe in registry.all():
            d = probe.descriptor
            result = discovery.results.get(d.id)
            if result is None or not result.usable:
                continue
            if result.models:
                models = list(result.models)
            else:
                known = [p.model_id for p in self.profiles() if p.provider == d.id]
                models = known or [d.default_model]
            for model in models:
                profile = self.get(d.id, model)
                if profile is None:
                    profile = ModelProfile(
                        model, d.id, _DISCOVERED_CAPS, _DISCOVERED_CONTEXT,
                        _DISCOVERED_LATENCY_MS, source="discovered",
                    )  # fmt: skip
                elif profile.model_id != model:
                    profile = replace(profile, model_id=model)
                if qualified.get((d.id, model)) and "json_mode" not in profile.capabilities:
                    json_mode: Capability = "json_mode"
                    caps = profile.capabilities | {json_mode}
                    profile = replace(profile, capabilities=caps, source="qualified")
                out[(d.id, model)] = profile
        return tuple(out[k] for k in sorted(out))


@dataclass(frozen=True, slots=True)
class ModelMatch:
    profile: ModelProfile
    preferred_hits: tuple[Capability, ...]
    #: integer rank key parts: preferred hits, then summed levels of wanted capabilities
    score: int
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rejection:
    profile: ModelProfile
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MatchResult:
    best: ModelMatch | None
    ranked: tuple[ModelMatch, ...]
    rejected: tuple[Rejection, ...]

    def explain(self) -> str:
        lines: list[str] = []
        for i, m in enumerate(self.ranked):
            head = "chosen" if i == 0 else f"rank {i + 1}"
            lines.append(
                f"{head}: {m.profile.provider}/{m.profile.model_id} ({'; '.join(m.reasons)})"
            )
        for r in self.rejected:
            lines.append(
                f"rejected: {r.profile.provider}/{r.profile.model_id} ({'; '.join(r.reasons)})"
            )
        if self.best is None:
            lines.insert(0, "no model meets the requirements")
        return "\n".join(lines)

    def events(self) -> tuple[dict[str, object], ...]:
        """Evidence-ledger events (seed P21): capability_matched / capability_mismatch."""
        out: list[dict[str, object]] = []
        if self.best is not None:
            p = self.best.profile
            out.append({"event": "capability_matched", "provider": p.provider, "model": p.model_id})
        for r in self.rejected:
            out.append(
                {
                    "event": "capability_mismatch",
                    "provider": r.profile.provider,
                    "model": r.profile.model_id,
                    "reasons": list(r.reasons),
                }
            )
        return tuple(out)

    def to_dict(self) -> dict[str, object]:
        return {
            "best": None if self.best is None else self.best.profile.to_dict(),
            "ranked": [
                {**m.profile.to_dict(), "score": m.score, "reasons": list(m.reasons)}
                for m in self.ranked
            ],
            "rejected": [
                {**r.profile.to_dict(), "reasons": list(r.reasons)} for r in self.rejected
            ],
        }


def _problems(req: CapabilityRequirements, p: ModelProfile) -> list[str]:
    problems = [f"lacks required {c}" for c in sorted(set(req.required)) if c not in p.capabilities]
    if req.min_context_tokens is not None and p.context_window < req.min_context_tokens:
        problems.append(f"context {p.context_window} < required {req.min_context_tokens}")
    if req.max_latency_ms is not None and p.typical_latency_ms > req.max_latency_ms:
        problems.append(
            f"typical latency {p.typical_latency_ms} ms > allowed {req.max_latency_ms} ms"
        )
    for cap in sorted(req.levels):
        need = req.levels[cap]
        have = p.level_of(cap)
        if have is None:
            if cap not in req.required:
                problems.append(f"lacks {cap} (level {need} required)")
        elif _RANK[have] < _RANK[need]:
            problems.append(f"{cap} is {have}, {need} required")
    return problems


def match_models(
    requirements: CapabilityRequirements, profiles: Iterable[ModelProfile]
) -> MatchResult:
    """Filter by hard requirements, rank by preferences; every verdict explained.

    Order: more preferred capabilities, then higher summed levels over required
    and preferred capabilities, then lower typical latency, larger context
    window, then provider and model id — a total order, so ties are stable.
    """
    matches: list[tuple[tuple[int, int, int, int, str, str], ModelMatch]] = []
    rejected: list[Rejection] = []
    wanted = sorted(set(requirements.required) | set(requirements.preferred))
    for p in profiles:
        problems = _problems(requirements, p)
        if problems:
            rejected.append(Rejection(p, tuple(problems)))
            continue
        hits = tuple(c for c in sorted(set(requirements.preferred)) if c in p.capabilities)
        level_sum = sum(_RANK[lv] for c in wanted if (lv := p.level_of(c)) is not None)
        reasons = ["meets every requirement"]
        if requirements.preferred:
            reasons.append(f"{len(hits)}/{len(set(requirements.preferred))} preferred")
        reasons.append(f"latency {p.typical_latency_ms} ms, context {p.context_window}")
        match = ModelMatch(p, hits, len(hits) * 1000 + level_sum, tuple(reasons))
        key = (
            -len(hits),
            -level_sum,
            p.typical_latency_ms,
            -p.context_window,
            p.provider,
            p.model_id,
        )
        matches.append((key, match))
    matches.sort(key=lambda km: km[0])
    ranked = tuple(m for _, m in matches)
    rejected.sort(key=lambda r: (r.profile.provider, r.profile.model_id))
    return MatchResult(ranked[0] if ranked else None, ranked, tuple(rejected))
