"""On-disk composition cache (``.librarian/cache/``), plus a memory-then-disk tier.

One JSON file per cache key, written atomically (temporary file + rename), so a
crash never leaves a half-written entry and concurrent writers of one key agree
(same key, same inputs, same content). The file's mtime is set to the caller's
``now`` on write and on every hit, so the TTL is a session timeout (five minutes
since last use), as in memory, at the cost of one ``utime`` per hit. Entries
past the TTL, unreadable or from another composer version are misses and are
removed. Time is passed in; the cache never reads a clock.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..composer.cache import (
    COMPOSER_VERSION,
    DEFAULT_TTL_SECONDS,
    INVALIDATION_TRIGGERS,
    CompositionCache,
)
from ..composer.pipeline import Composition
from ..errors import UsageError
from ..workspace.private import private_dir

__all__ = ["DiskCache", "TieredCache"]

_SUFFIX = ".json"


class DiskCache:
    """Compositions by cache key under ``directory`` (created on first write)."""

    def __init__(
        self,
        directory: Path,
        *,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        max_entries: int = 512,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        if ttl_seconds <= 0 or max_entries <= 0 or max_bytes <= 0:
            raise UsageError("disk cache ttl_seconds, max_entries and max_bytes must be positive")
        self.directory = Path(directory)
        self._ttl = ttl_seconds
        self._max = max_entries
        self._max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        if not key or not all(ch.isalnum() or ch in "-_" for ch in key):
            raise UsageError(f"invalid cache key {key!r}")
        return self.directory / f"{key}{_SUFFIX}"

    def _load(self, path: Path) -> dict[str, Any] | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("composer_version") != COMPOSER_VERSION:
            return None
        return data

    @staticmethod
    def _last_used(path: Path) -> int | None:
        try:
            return path.stat().st_mtime_ns // 1_000_000_000
        except OSError:
            return None

    def get(self, key: str, *, now: int) -> Composition | None:
        path = self._path(key)
        last_used = self._last_used(path)
        if last_used is None:
            return None
        if not 0 <= now - last_used < self._ttl:
            path.unlink(missing_ok=True)
            return None
        data = self._load(path)
        try:
            if data is None:
                raise ValueError("unreadable cache entry")
            hit = Composition.from_dict(data["composition"])
        except (KeyError, TypeError, ValueError):
            path.unlink(missing_ok=True)
            return None
        os.utime(path, ns=(now * 1_000_000_000, now * 1_000_000_000))
        return hit

    def put(
        self, key: str, value: Composition, *, now: int, workspace_fingerprint: str = ""
    ) -> None:
        path = self._path(key)
        private_dir(self.directory)
        payload = {
            "composer_version": COMPOSER_VERSION,
            "workspace_fingerprint": workspace_fingerprint,
            "composition": value.to_dict(),
        }
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False, sort_keys=True)
            os.utime(tmp, ns=(now * 1_000_000_000, now * 1_000_000_000))
            Path(tmp).replace(path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._prune(now)

    def _entries(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(
            p for p in self.directory.iterdir() if p.suffix == _SUFFIX and p.name[0] != "."
        )

    def _prune(self, now: int) -> None:
        """Expired entries, then the least recently used until within both caps."""
        stamped: list[tuple[int, str, int, Path]] = []
        for p in self._entries():
            try:
                st = p.stat()
            except OSError:
                continue
            used = st.st_mtime_ns // 1_000_000_000
            if now - used >= self._ttl:
                p.unlink(missing_ok=True)
                continue
            stamped.append((used, p.name, st.st_size, p))
        stamped.sort()
        total = sum(row[2] for row in stamped)
        while stamped and (len(stamped) > self._max or total > self._max_bytes):
            _, _, size, path = stamped.pop(0)
            path.unlink(missing_ok=True)
            total -= size

    def invalidate(
        self, trigger: str, *, now: int = 0, workspace_fingerprint: str | None = None
    ) -> int:
        """Same rules as ``CompositionCache.invalidate``; returns how many were removed."""
        if trigger not in INVALIDATION_TRIGGERS:
            raise UsageError(
                f"unknown invalidation trigger {trigger!r}",
                hint=f"Use one of: {', '.join(INVALIDATION_TRIGGERS)}.",
            )
        removed = 0
        for path in self._entries():
            data = self._load(path)
            if data is None:
                doomed = True
            elif trigger == "session_expired":
                doomed = now - (self._last_used(path) or 0) >= self._ttl
            elif trigger == "file_saved" and workspace_fingerprint is not None:
                doomed = data.get("workspace_fingerprint") != workspace_fingerprint
            else:
                doomed = True
            if doomed:
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def __len__(self) -> int:
        return len(self._entries())


class TieredCache:
    """Memory first, then disk; a disk hit is promoted to memory."""

    def __init__(self, memory: CompositionCache[Composition], disk: DiskCache) -> None:
        self.memory = memory
        self.disk = disk

    def get(self, key: str, *, now: int) -> Composition | None:
        hit = self.memory.get(key, now=now)
        if hit is not None:
            return hit
        hit = self.disk.get(key, now=now)
        if hit is not None:
            self.memory.put(key, hit, now=now)
        return hit

    def put(
        self, key: str, value: Composition, *, now: int, workspace_fingerprint: str = ""
    ) -> None:
        self.memory.put(key, value, now=now, workspace_fingerprint=workspace_fingerprint)
        self.disk.put(key, value, now=now, workspace_fingerprint=workspace_fingerprint)

    def invalidate(
        self, trigger: str, *, now: int = 0, workspace_fingerprint: str | None = None
    ) -> int:
        a = self.memory.invalidate(trigger, now=now, workspace_fingerprint=workspace_fingerprint)
        b = self.disk.invalidate(trigger, now=now, workspace_fingerprint=workspace_fingerprint)
        return a + b
