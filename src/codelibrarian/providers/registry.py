"""The provider registry: registration, concurrent discovery, caching (seed P0 §D).

Unlike the seed's module-level singleton, a registry is an ordinary object: the
CLI and the API build one with :func:`default_registry`, tests build their own.
Built-in probes arrive through the ``codelibrarian.providers`` entry-point
group, the same door third-party plugins use.

Discovery runs every probe at once in a thread pool and gives each
``probe_timeout_s`` (5 s) before reporting it as timed out. Results are cached
in memory and persisted to ``<state_dir>/providers.json`` for 30 minutes, keyed
by the provider set and the environment variables the probes read, so a second
``librarian`` process does not probe again. The same file keeps each provider's
*last-known-good* model list: when a provider answers but its model list cannot
be read, discovery falls back to that list and marks it ``last_known_good``.
Availability itself is never taken from an old answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Literal

from ..errors import UsageError
from ..workspace.private import private_write
from .types import (
    DiscoveredProvider,
    ProbeContext,
    ProbeResult,
    ProviderDescriptor,
    ProviderProbe,
    ProviderStatus,
)

__all__ = [
    "CACHE_TTL_S",
    "ENTRY_POINT_GROUP",
    "PROBE_TIMEOUT_S",
    "Discovery",
    "PluginLoadError",
    "ProviderRegistry",
    "default_registry",
]

ENTRY_POINT_GROUP = "codelibrarian.providers"
CACHE_TTL_S = 30 * 60
PROBE_TIMEOUT_S = 5.0
_FILE_VERSION = 1
_ALWAYS_KEYED = ("PATH", "HOME")


@dataclass(frozen=True, slots=True)
class Discovery:
    """Probe results by provider id, when they were taken and where they came from."""

    results: Mapping[str, ProbeResult]
    checked_at: int
    source: Literal["fresh", "memory", "persisted"]

    def to_dict(self) -> dict[str, object]:
        return {
            "checked_at": self.checked_at,
            "source": self.source,
            "results": {k: self.results[k].to_dict() for k in sorted(self.results)},
        }


@dataclass(frozen=True, slots=True)
class PluginLoadError:
    """An entry point that could not be loaded; discovery goes on without it."""

    name: str
    value: str
    error: str


class ProviderRegistry:
    """Registered probes plus discovery with a cache and a last-known-good file."""

    def __init__(
        self,
        *,
        state_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        probe_timeout_s: float = PROBE_TIMEOUT_S,
        cache_ttl_s: int = CACHE_TTL_S,
        on_event: Callable[[Mapping[str, object]], None] | None = None,
    ) -> None:
        self._on_event = on_event
        self._probes: dict[str, ProviderProbe] = {}
        self._state_dir = state_dir
        self.env: Mapping[str, str] = dict(os.environ) if env is None else dict(env)
        self._clock = clock
        self.probe_timeout_s = probe_timeout_s
        self.cache_ttl_s = cache_ttl_s
        self._cache: tuple[str, Discovery] | None = None
        self.load_errors: tuple[PluginLoadError, ...] = ()

    # -- registration -------------------------------------------------------

    def register(self, probe: ProviderProbe, *, replace: bool = False) -> None:
        """Add a probe; an id already taken is an error unless ``replace``."""
        descriptor = getattr(probe, "descriptor", None)
        if not isinstance(descriptor, ProviderDescriptor) or not callable(
            getattr(probe, "probe", None)
        ):
            raise UsageError(
                f"{probe!r} is not a provider probe",
                hint="A probe needs a `descriptor` (ProviderDescriptor) and a `probe(ctx)` method.",
            )
        if descriptor.id in self._probes and not replace:
            raise UsageError(
                f"provider {descriptor.id!r} is already registered",
                hint="Unregister it first or pass replace=True.",
            )
        self._probes[descriptor.id] = probe
        self._cache = None

    def unregister(self, provider_id: str) -> None:
        """Remove a probe; unknown ids are ignored."""
        if self._probes.pop(provider_id, None) is not None:
            self._cache = None

    def get(self, provider_id: str) -> ProviderProbe | None:
        return self._probes.get(provider_id)

    def require(self, provider_id: str) -> ProviderProbe:
        """The probe for ``provider_id``, or a usage error listing the known ids."""
        probe = self._probes.get(provider_id)
        if probe is None:
            known = ", ".join(self.ids()) or "(none registered)"
            raise UsageError(
                f"unknown LLM provider {provider_id!r}",
                hint=f"Known providers: {known}. Install a plugin or fix LIBRARIAN_LLM_PROVIDER.",
            )
        return probe

    def all(self) -> tuple[ProviderProbe, ...]:
        """Every probe, best priority first (ties by id)."""
        return tuple(
            self._probes[i]
            for i in sorted(self._probes, key=lambda i: (self._probes[i].descriptor.priority, i))
        )

    def ids(self) -> tuple[str, ...]:
        return tuple(p.descriptor.id for p in self.all())

    def load_entry_points(
        self, entry_points: Iterable[importlib_metadata.EntryPoint] | None = None
    ) -> tuple[PluginLoadError, ...]:
        """Register every probe of the ``codelibrarian.providers`` group.

        An entry point may name a probe object, a probe class, or a zero-argument
        factory. Broken plugins are recorded in ``load_errors`` and skipped.
        """
        eps = (
            importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)
            if entry_points is None
            else entry_points
        )
        errors: list[PluginLoadError] = []
        for ep in sorted(eps, key=lambda e: (e.name, e.value)):
            try:
                obj: Any = ep.load()
                if isinstance(obj, type) or (not hasattr(obj, "descriptor") and callable(obj)):
                    obj = obj()
                self.register(obj, replace=False)
            except Exception as exc:  # a plugin's failure must not stop discovery
                errors.append(PluginLoadError(ep.name, ep.value, f"{type(exc).__name__}: {exc}"))
        self.load_errors = (*self.load_errors, *errors)
        return tuple(errors)

    # -- discovery ----------------------------------------------------------

    def context(self) -> ProbeContext:
        return ProbeContext(env=self.env, timeout_s=self.probe_timeout_s)

    def discover(self, *, force_refresh: bool = False) -> Discovery:
        """Probe every provider (or reuse a result younger than the cache TTL)."""
        key = self._cache_key()
        now = int(self._clock())
        if not force_refresh:
            cached = self.cached()
            if cached is not None:
                self._cache = (key, cached)
                self._emit("provider_discovery_cached", source=cached.source)
                return cached
        results = self._probe_all(now)
        results = self._apply_last_known_good(results)
        discovery = Discovery(results=results, checked_at=now, source="fresh")
        self._cache = (key, discovery)
        self._write_file(key, discovery)
        return discovery

    def _emit(self, event: str, **fields: object) -> None:
        if self._on_event is not None:
            self._on_event({"event": event, **fields})

    def cached(self) -> Discovery | None:
        """The cached discovery (memory, then the persisted file) if still fresh; never probes."""
        key = self._cache_key()
        now = int(self._clock())
        if self._cache is not None and self._fresh(self._cache, key, now):
            return replace(self._cache[1], source="memory")
        snapshot = _snapshot_from_file(self._read_file(), key)
        if snapshot is not None and 0 <= now - snapshot.checked_at < self.cache_ttl_s:
            return snapshot
        return None

    def check(self, provider_id: str) -> ProbeResult:
        """Probe one provider now (no cache)."""
        probe = self.require(provider_id)
        return self._run_probes([probe], int(self._clock()))[provider_id]

    def statuses(self, *, force_refresh: bool = False) -> tuple[ProviderStatus, ...]:
        """Every provider with its latest result, best priority first."""
        discovery = self.discover(force_refresh=force_refresh)
        return tuple(
            ProviderStatus(p.descriptor, discovery.results[p.descriptor.id]) for p in self.all()
        )

    def find_best(
        self, *, force_refresh: bool = False, require_embeddings: bool = False
    ) -> DiscoveredProvider | None:
        """The usable provider with the best (lowest) priority, ties by id."""
        discovery = self.discover(force_refresh=force_refresh)
        for probe in self.all():
            d = probe.descriptor
            result = discovery.results.get(d.id)
            if result is None or not result.usable or not d.supports_chat:
                continue
            if require_embeddings and not d.supports_embeddings:
                continue
            model, choice = choose_model(d, result)
            return DiscoveredProvider(d.id, model, d, result, choice)
        return None

    # -- internals ----------------------------------------------------------

    def _fresh(self, cached: tuple[str, Discovery], key: str, now: int) -> bool:
        return cached[0] == key and 0 <= now - cached[1].checked_at < self.cache_ttl_s

    def _cache_key(self) -> str:
        names = set(_ALWAYS_KEYED)
        parts: list[str] = []
        for probe in self.all():
            d = probe.descriptor
            names.update(d.env_vars)
            parts.append(f"{d.id}:{d.priority}:{type(probe).__module__}.{type(probe).__qualname__}")
        parts.extend(f"{n}={self.env.get(n, '')}" for n in sorted(names))
        digest = hashlib.blake2b("\n".join(parts).encode(), digest_size=16)
        return digest.hexdigest()

    def _probe_all(self, now: int) -> dict[str, ProbeResult]:
        return self._run_probes(list(self.all()), now)

    def _run_probes(self, probes: list[ProviderProbe], now: int) -> dict[str, ProbeResult]:
        if not probes:
            return {}
        ctx = replace(self.context(), deadline=time.monotonic() + self.probe_timeout_s)
        for p in probes:
            self._emit("provider_check_start", provider=p.descriptor.id)
        pool = ThreadPoolExecutor(max_workers=len(probes), thread_name_prefix="probe")
        futures: dict[str, Future[ProbeResult]] = {
            p.descriptor.id: pool.submit(p.probe, ctx) for p in probes
        }
        wait(futures.values(), timeout=self.probe_timeout_s)
        pool.shutdown(wait=False, cancel_futures=True)
        results: dict[str, ProbeResult] = {}
        for probe in probes:
            d = probe.descriptor
            future = futures[d.id]
            if not future.done():
                result = ProbeResult(
                    False,
                    False,
                    "timeout",
                    f"probe did not finish within {self.probe_timeout_s:g}s",
                    d.remedy or None,
                )
            elif future.exception() is not None:
                exc = future.exception()
                result = ProbeResult(
                    False,
                    False,
                    "error",
                    f"probe raised {type(exc).__name__}: {exc}",
                    d.remedy or None,
                )
            else:
                raw: object = future.result()
                result = (
                    raw
                    if isinstance(raw, ProbeResult)
                    else ProbeResult(
                        False, False, "error", f"probe returned {type(raw).__name__}", None
                    )
                )
            results[d.id] = replace(result, checked_at=now)
            self._emit(
                "provider_check_finish",
                provider=d.id,
                status=results[d.id].status,
                usable=results[d.id].usable,
            )
        return results

    def _apply_last_known_good(self, results: dict[str, ProbeResult]) -> dict[str, ProbeResult]:
        lkg = _lkg_from_file(self._read_file())
        out: dict[str, ProbeResult] = {}
        for pid, result in results.items():
            known = lkg.get(pid)
            if result.usable and result.models_source == "none" and known:
                out[pid] = replace(result, models=known, models_source="last_known_good")
            else:
                out[pid] = result
        return out

    def _path(self) -> Path | None:
        return None if self._state_dir is None else self._state_dir / "providers.json"

    def _read_file(self) -> Mapping[str, object]:
        path = self._path()
        if path is None:
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != _FILE_VERSION:
            return {}
        return data

    def _write_file(self, key: str, discovery: Discovery) -> None:
        path = self._path()
        if path is None:
            return
        lkg: dict[str, object] = {}
        old = self._read_file().get("last_known_good")
        if isinstance(old, dict):
            lkg.update(old)
        for pid, result in discovery.results.items():
            if result.usable and result.models and result.models_source == "probe":
                lkg[pid] = {"checked_at": discovery.checked_at, "models": list(result.models)}
        data = {
            "version": _FILE_VERSION,
            "key": key,
            "checked_at": discovery.checked_at,
            "results": {k: discovery.results[k].to_dict() for k in sorted(discovery.results)},
            "last_known_good": dict(sorted(lkg.items())),
        }
        try:
            private_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
        except OSError:
            return  # a read-only state dir costs the cache, not discovery


def _snapshot_from_file(data: Mapping[str, object], key: str) -> Discovery | None:
    if data.get("key") != key:
        return None
    checked_at = data.get("checked_at")
    raw = data.get("results")
    if not isinstance(checked_at, int) or not isinstance(raw, dict):
        return None
    try:
        results = {str(k): ProbeResult.from_dict(v) for k, v in raw.items()}
    except (ValueError, AttributeError, TypeError):
        return None
    return Discovery(results=results, checked_at=checked_at, source="persisted")


def _lkg_from_file(data: Mapping[str, object]) -> dict[str, tuple[str, ...]]:
    raw = data.get("last_known_good")
    out: dict[str, tuple[str, ...]] = {}
    if isinstance(raw, dict):
        for pid, entry in raw.items():
            models = entry.get("models") if isinstance(entry, dict) else None
            if isinstance(models, list) and all(isinstance(m, str) for m in models):
                out[str(pid)] = tuple(sorted(models))
    return out


def choose_model(
    descriptor: ProviderDescriptor, result: ProbeResult
) -> tuple[str, Literal["default", "first_listed"]]:
    """The descriptor's default model when offered (or when the list is unknown),
    else the first listed model in sorted order. ``name`` matches ``name:latest``."""
    default = descriptor.default_model
    if not result.models or default in result.models or f"{default}:latest" in result.models:
        return default, "default"
    return result.models[0], "first_listed"


def default_registry(
    *,
    state_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.time,
    probe_timeout_s: float = PROBE_TIMEOUT_S,
) -> ProviderRegistry:
    """A registry with every installed probe (built-ins included) loaded."""
    registry = ProviderRegistry(
        state_dir=state_dir, env=env, clock=clock, probe_timeout_s=probe_timeout_s
    )
    registry.load_entry_points()
    return registry
