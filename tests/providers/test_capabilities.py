"""Capability vocabulary, profiles, the model capability registry and the matcher."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.errors import UsageError
from codelibrarian.providers import (
    BUILTIN_PROFILES,
    CAPABILITIES,
    LEVELS,
    CapabilityRequirements,
    Discovery,
    FakeProvider,
    ModelCapabilityRegistry,
    ModelProfile,
    ProbeResult,
    ProviderRegistry,
    match_models,
)


def profile(model: str, caps: str, context: int = 100_000, latency: int = 1000,
            provider: str = "p", **levels: str) -> ModelProfile:  # fmt: skip
    return ModelProfile(model, provider, frozenset(caps.split()), context, latency, levels)  # type: ignore[arg-type]


def test_vocabulary() -> None:
    assert len(CAPABILITIES) == 10 and "json_mode" in CAPABILITIES
    assert LEVELS == ("basic", "advanced", "expert")
    with pytest.raises(UsageError, match="unknown capability 'telepathy'"):
        CapabilityRequirements(required=("telepathy",))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown level 'godlike'"):
        CapabilityRequirements(levels={"reasoning": "godlike"})  # type: ignore[dict-item]
    with pytest.raises(UsageError):
        profile("m", "reasoning mind_reading")


def test_every_requirement_filters_and_explains() -> None:
    models = [
        profile("small", "code_analysis json_mode", context=8_000, latency=300),
        profile("slow", "code_analysis json_mode reasoning", latency=9_000, reasoning="expert"),
        profile("shallow", "code_analysis json_mode reasoning", reasoning="basic"),
        profile("right", "code_analysis json_mode reasoning", reasoning="advanced"),
        profile("nojson", "code_analysis reasoning", reasoning="expert"),
    ]
    req = CapabilityRequirements(
        required=("code_analysis", "json_mode"),
        min_context_tokens=32_000,
        max_latency_ms=5_000,
        levels={"reasoning": "advanced"},
    )
    result = match_models(req, models)
    assert result.best is not None and result.best.profile.model_id == "right"
    reasons = {r.profile.model_id: r.reasons for r in result.rejected}
    assert reasons["small"] == (
        "context 8000 < required 32000",
        "lacks reasoning (level advanced required)",
    )
    assert reasons["slow"] == ("typical latency 9000 ms > allowed 5000 ms",)
    assert reasons["shallow"] == ("reasoning is basic, advanced required",)
    assert reasons["nojson"] == ("lacks required json_mode",)
    text = result.explain()
    assert text.splitlines()[0].startswith("chosen: p/right (meets every requirement")
    assert "rejected: p/slow (typical latency 9000 ms > allowed 5000 ms)" in text
    events = result.events()
    assert events[0] == {"event": "capability_matched", "provider": "p", "model": "right"}
    assert {e["event"] for e in events[1:]} == {"capability_mismatch"}


def test_preferred_capabilities_rank_then_deterministic_ties() -> None:
    a = profile("a", "code_analysis vision", latency=900)
    b = profile("b", "code_analysis vision streaming", latency=2000)
    c = profile("c", "code_analysis", latency=100)
    d = profile("d", "code_analysis vision", latency=900)  # ties with a except the id
    req = CapabilityRequirements(required=("code_analysis",), preferred=("vision", "streaming"))
    result = match_models(req, [d, c, b, a])
    assert [m.profile.model_id for m in result.ranked] == ["b", "a", "d", "c"]
    assert result.ranked[0].preferred_hits == ("streaming", "vision")
    assert "2/2 preferred" in result.ranked[0].reasons


def test_levels_break_ties_before_latency() -> None:
    fast = profile("fast", "reasoning", latency=100, reasoning="basic")
    deep = profile("deep", "reasoning", latency=3000, reasoning="expert")
    result = match_models(CapabilityRequirements(preferred=("reasoning",)), [fast, deep])
    assert result.best is not None and result.best.profile.model_id == "deep"


def test_no_match() -> None:
    result = match_models(
        CapabilityRequirements(required=("vision",)), [profile("m", "code_analysis")]
    )
    assert result.best is None and result.ranked == ()
    assert result.explain().startswith("no model meets the requirements")
    assert result.to_dict()["best"] is None


_caps = st.lists(st.sampled_from(CAPABILITIES), max_size=5, unique=True)
_profiles = st.lists(
    st.builds(
        lambda i, caps, ctx, lat: ModelProfile(f"m{i}", "p", frozenset(caps), ctx, lat),
        st.integers(0, 50),
        _caps,
        st.sampled_from([8_000, 32_000, 200_000]),
        st.sampled_from([100, 800, 5_000]),
    ),
    max_size=8,
    unique_by=lambda p: p.model_id,
)


@given(_profiles, _caps, _caps, st.randoms(use_true_random=False))
def test_matching_ignores_input_order(
    profiles: list[ModelProfile], required: list[str], preferred: list[str], rnd: object
) -> None:
    req = CapabilityRequirements(required=tuple(required), preferred=tuple(preferred))  # type: ignore[arg-type]
    shuffled = list(profiles)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    one, two = match_models(req, profiles), match_models(req, shuffled)
    assert one.to_dict() == two.to_dict()
    assert len(one.ranked) + len(one.rejected) == len(profiles)
    for m in one.ranked:
        assert set(required) <= m.profile.capabilities


def test_registry_profiles_from_discovery_and_qualification() -> None:
    reg = ProviderRegistry(env={})
    reg.register(FakeProvider(id="ollama", priority=30, models=("llama3.2:latest", "tiny:1b")))
    reg.register(FakeProvider(id="claude", priority=10, models=()))
    reg.register(FakeProvider(id="codex", priority=20, available=False))
    discovery = reg.discover()
    caps = ModelCapabilityRegistry()
    available = caps.available(reg, discovery, qualified={("ollama", "tiny:1b"): True})
    keys = [(p.provider, p.model_id, p.source) for p in available]
    assert keys == [
        ("claude", "claude-haiku-4-5", "builtin"),
        ("claude", "claude-opus-4-5", "builtin"),
        ("claude", "claude-sonnet-4-5", "builtin"),
        ("ollama", "llama3.2:latest", "builtin"),  # matched to the llama3.2 profile
        ("ollama", "tiny:1b", "qualified"),
    ]
    tiny = available[-1]
    assert "json_mode" in tiny.capabilities and tiny.context_window == 8192
    # the matcher then picks among what is actually available
    need = CapabilityRequirements(required=("json_mode",), max_latency_ms=1000)
    best = match_models(need, available).best
    assert best is not None and best.profile.model_id == "claude-haiku-4-5"


def test_builtin_profiles_are_valid_and_unique() -> None:
    keys = [p.key for p in BUILTIN_PROFILES]
    assert len(keys) == len(set(keys))
    assert ModelCapabilityRegistry().get("claude", "claude-opus-4-5") is not None
    unusable = Discovery(
        results={"x": ProbeResult(False, False, "unreachable")}, checked_at=0, source="fresh"
    )
    reg = ProviderRegistry(env={})
    reg.register(FakeProvider(id="x"))
    assert ModelCapabilityRegistry().available(reg, unusable) == ()
