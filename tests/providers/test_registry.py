"""Registry: registration, entry points, concurrent discovery, caching, last-known-good."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from codelibrarian.errors import UsageError
from codelibrarian.providers import (
    CACHE_TTL_S,
    FakeProvider,
    ProbeContext,
    ProbeResult,
    ProviderRegistry,
    default_registry,
)
from codelibrarian.providers.probes.ollama import OllamaProbe

from .conftest import CLAUDE_OK, CODEX_OK, Env, ModelServer, Route, fixed, make_exe, ollama_routes

Serve = Callable[[dict[tuple[str, str], Route]], ModelServer]


class Clock:
    def __init__(self, now: float = 1_800_000_000) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class SlowProbe(FakeProvider):
    def __init__(self, pid: str, delay: float, priority: int = 50) -> None:
        super().__init__(id=pid, priority=priority)
        self.delay = delay

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        time.sleep(self.delay)
        return super().probe(ctx)


class BrokenProbe(FakeProvider):
    def probe(self, ctx: ProbeContext) -> ProbeResult:
        raise RuntimeError("plugin bug")


def test_register_get_all_unregister() -> None:
    reg = ProviderRegistry(env={})
    b, a, c = (
        FakeProvider(id="b", priority=5),
        FakeProvider(id="a", priority=5),
        FakeProvider(id="c", priority=1),
    )
    for p in (b, a, c):
        reg.register(p)
    assert reg.ids() == ("c", "a", "b")  # priority, then id
    assert reg.get("a") is a and reg.get("zzz") is None
    with pytest.raises(UsageError, match="already registered"):
        reg.register(FakeProvider(id="a"))
    reg.register(FakeProvider(id="a", priority=0), replace=True)
    assert reg.ids()[0] == "a"
    reg.unregister("a")
    reg.unregister("never-there")
    assert reg.ids() == ("c", "b")
    with pytest.raises(UsageError, match="not a provider probe"):
        reg.register(object())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Known providers: c, b"):
        reg.require("nope")


def test_builtin_probes_arrive_through_entry_points() -> None:
    reg = default_registry(env={})
    assert reg.ids() == ("claude", "codex", "ollama", "lmstudio")
    assert [p.descriptor.priority for p in reg.all()] == [10, 20, 30, 35]
    assert reg.load_errors == ()


def test_entry_point_loader_with_fake_entry_points() -> None:
    group = "codelibrarian.providers"
    eps = [
        EntryPoint("acme", "tests.providers.plugin_sample:probe", group),
        EntryPoint("acme-class", "tests.providers.plugin_sample:AcmeClassProbe", group),
        EntryPoint("acme-factory", "tests.providers.plugin_sample:make_probe", group),
        EntryPoint("broken-import", "tests.providers.no_such_module:probe", group),
        EntryPoint("broken-object", "tests.providers.plugin_sample:not_a_probe", group),
    ]
    reg = ProviderRegistry(env={})
    errors = reg.load_entry_points(eps)
    assert reg.ids() == ("acme", "acme-class", "acme-factory")
    assert [e.name for e in errors] == ["broken-import", "broken-object"]
    assert "ModuleNotFoundError" in errors[0].error
    assert reg.load_errors == errors


def test_probes_run_concurrently_with_a_timeout_each() -> None:
    reg = ProviderRegistry(env={}, probe_timeout_s=1.0)
    for i in range(4):
        reg.register(SlowProbe(f"slow{i}", 0.4, priority=i))
    reg.register(SlowProbe("stuck", 5.0, priority=9))
    reg.register(BrokenProbe(id="broken", priority=10))
    start = time.perf_counter()
    found = reg.discover()
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0  # not 4 × 0.4 + 5
    assert all(found.results[f"slow{i}"].usable for i in range(4))
    assert found.results["stuck"].status == "timeout"
    assert "within 1s" in (found.results["stuck"].error or "")
    broken = found.results["broken"]
    assert broken.status == "error" and "RuntimeError: plugin bug" in (broken.error or "")


def test_cache_for_thirty_minutes_with_an_injected_clock(tmp_path: Path) -> None:
    clock = Clock()
    fake = FakeProvider()
    reg = ProviderRegistry(env={}, clock=clock, state_dir=tmp_path)
    reg.register(fake)
    assert reg.discover().source == "fresh"
    clock.now += CACHE_TTL_S - 1
    assert reg.discover().source == "memory"
    assert len(fake.probes_run) == 1
    assert reg.discover(force_refresh=True).source == "fresh"
    assert len(fake.probes_run) == 2
    clock.now += CACHE_TTL_S
    assert reg.discover().source == "fresh"
    assert len(fake.probes_run) == 3


def test_persisted_cache_serves_a_second_process(tmp_path: Path) -> None:
    clock = Clock()
    first = ProviderRegistry(env={"X": "1"}, clock=clock, state_dir=tmp_path)
    first.register(FakeProvider(models=("m2", "m1")))
    first.discover()
    data = json.loads((tmp_path / "providers.json").read_text())
    assert data["results"]["fake"]["models"] == ["m1", "m2"]

    again = FakeProvider()
    second = ProviderRegistry(env={"X": "1"}, clock=clock, state_dir=tmp_path)
    second.register(again)
    clock.now += 60
    found = second.discover()
    assert found.source == "persisted" and again.probes_run == []
    assert found.results["fake"].models == ("m1", "m2")
    assert second.cached() is not None

    # a different environment for the probes (PATH here) is a different cache
    third = ProviderRegistry(env={"X": "1", "PATH": "/elsewhere"}, clock=clock, state_dir=tmp_path)
    third.register(FakeProvider())
    assert third.cached() is None
    assert third.discover().source == "fresh"


def test_corrupt_state_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "providers.json").write_text("{broken")
    reg = ProviderRegistry(env={}, state_dir=tmp_path)
    reg.register(FakeProvider())
    assert reg.discover().source == "fresh"
    assert json.loads((tmp_path / "providers.json").read_text())["version"] == 1


def test_last_known_good_models_when_the_list_breaks(
    env: Env, serve: Serve, tmp_path: Path
) -> None:
    routes = ollama_routes(models=["llama3.2:latest"])
    server = serve(routes)
    reg = ProviderRegistry(env=env.with_(OLLAMA_HOST=server.url), state_dir=tmp_path)
    reg.register(OllamaProbe())
    assert reg.discover().results["ollama"].models == ("llama3.2:latest",)
    routes[("GET", "/api/tags")] = fixed(b"garbage")
    result = reg.discover(force_refresh=True).results["ollama"]
    assert result.usable
    assert result.models == ("llama3.2:latest",)
    assert result.models_source == "last_known_good"
    # availability is never taken from the old answer
    server.close()
    assert reg.discover(force_refresh=True).results["ollama"].status == "unreachable"


def test_best_provider_by_priority_among_several(env: Env, serve: Serve) -> None:
    make_exe(env.bin, "claude", CLAUDE_OK)
    make_exe(env.bin, "codex", CODEX_OK)
    server = serve(ollama_routes())
    reg = default_registry(env=env.with_(OLLAMA_HOST=server.url))
    best = reg.find_best()
    assert best is not None and (best.provider, best.model) == ("claude", "claude-sonnet-4-5")
    emb = reg.find_best(require_embeddings=True)
    assert emb is not None and emb.provider == "ollama"
    assert emb.model == "llama3.2" and emb.model_choice == "default"
    reg.unregister("claude")
    best = reg.find_best()
    assert best is not None and best.provider == "codex"


def test_first_listed_model_when_default_absent(env: Env, serve: Serve) -> None:
    server = serve(ollama_routes(models=["zeta:1b", "alpha:3b"]))
    reg = ProviderRegistry(env=env.with_(OLLAMA_HOST=server.url))
    reg.register(OllamaProbe())
    best = reg.find_best()
    assert best is not None and (best.model, best.model_choice) == ("alpha:3b", "first_listed")


def test_nothing_available_gives_none(env: Env) -> None:
    reg = default_registry(env=env.vars)
    assert reg.find_best() is None
    statuses = {s.descriptor.id: s.result.status for s in reg.statuses()}
    assert statuses == {
        "claude": "not_installed",
        "codex": "not_installed",
        "ollama": "unreachable",
        "lmstudio": "unreachable",
    }


def test_check_one_provider_bypasses_the_cache() -> None:
    fake = FakeProvider()
    reg = ProviderRegistry(env={})
    reg.register(fake)
    reg.discover()
    assert reg.check("fake").usable
    assert len(fake.probes_run) == 2


def test_discovery_is_thread_safe_enough_for_parallel_callers() -> None:
    reg = ProviderRegistry(env={})
    reg.register(FakeProvider())
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(reg.find_best() is not None))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


def test_events_for_the_evidence_ledger() -> None:
    events: list[dict[str, object]] = []
    reg = ProviderRegistry(env={}, on_event=lambda e: events.append(dict(e)))
    reg.register(FakeProvider())
    reg.discover()
    reg.discover()
    assert events == [
        {"event": "provider_check_start", "provider": "fake"},
        {"event": "provider_check_finish", "provider": "fake", "status": "ok", "usable": True},
        {"event": "provider_discovery_cached", "source": "memory"},
    ]


def test_a_probe_with_several_calls_shares_one_deadline(env: Env) -> None:
    make_exe(
        env.bin,
        "claude",
        """
if args == ["--version"]:
    time.sleep(0.4); print("2.0.14"); sys.exit(0)
time.sleep(3); print(json.dumps({"loggedIn": True}))
""",
    )
    from codelibrarian.providers.probes.claude import ClaudeProbe

    ctx = ProbeContext(env=env.vars, timeout_s=5.0, deadline=time.monotonic() + 0.8)
    start = time.perf_counter()
    result = ClaudeProbe().probe(ctx)
    assert time.perf_counter() - start < 2.0  # auth status got only what was left
    assert result.status == "timeout" and "auth status" in (result.error or "")
