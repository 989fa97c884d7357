"""Circuit breakers persisted per key under ``.librarian/breakers/``.

Each breaker is one small JSON file named by a digest of its key (the key itself
is inside, for ``librarian runs`` readers). Reads and writes go through an
exclusive ``flock`` on the file, so two runs in two processes see one state and
only one of them gets the half-open trial. The transitions are the pure
:func:`~.rules.breaker_enter` / :func:`~.rules.breaker_record`; the clock is the
caller's.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .rules import BreakerVerdict, breaker_enter, breaker_record, digest_value

__all__ = ["BreakerStore"]


class BreakerStore:
    """Breaker states under ``dir`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def path(self, key: str) -> Path:
        return self.dir / f"{digest_value(key)[:24]}.json"

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[tuple[int, dict[str, Any]]]:
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path(key), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = b""
            while chunk := os.read(fd, 65536):
                raw += chunk
            try:
                data = json.loads(raw) if raw else {}
            except ValueError:
                data = {}
            state = data.get("state") if isinstance(data, dict) else None
            yield fd, dict(state) if isinstance(state, dict) else {}
        finally:
            os.close(fd)

    @staticmethod
    def _write(fd: int, key: str, state: dict[str, Any]) -> None:
        data = json.dumps({"key": key, "state": state}, sort_keys=True).encode("utf-8")
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data + b"\n")

    def enter(self, key: str, now_ms: int, reset_after_ms: int) -> tuple[BreakerVerdict, int]:
        """May the body run? ``(verdict, consecutive failures)``; a half-open verdict
        is this caller's trial (recorded at once, so no other process gets it)."""
        with self._locked(key) as (fd, state):
            verdict, new = breaker_enter(state, now_ms, reset_after_ms)
            if new != state:
                self._write(fd, key, new)
            return verdict, int(new.get("failures", 0))

    def record(self, key: str, *, success: bool, now_ms: int, threshold: int) -> dict[str, Any]:
        with self._locked(key) as (fd, state):
            new = breaker_record(state, success=success, now_ms=now_ms, threshold=threshold)
            self._write(fd, key, new)
            return new

    def state(self, key: str) -> dict[str, Any]:
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        state = data.get("state") if isinstance(data, dict) else None
        return dict(state) if isinstance(state, dict) else {}
