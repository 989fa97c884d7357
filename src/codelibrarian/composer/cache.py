"""Cache keys computed from inputs only, and an in-memory LRU with an injected clock.

The key covers everything that can change the output: workspace fingerprint,
commitish, the candidate digest, rules, budget and constraints digests,
tokenizer, format, composer version and an ``extra`` mapping (a vitals digest,
say). The trigger (``file_saved``, ``mcp_request``...) is recorded in every
decision record but deliberately left out of the key, unlike the seed: nothing
in selection or rendering reads it — a trigger changes the pack only through the
candidates, whose digest is in the key — and keying on it would give every
trigger type its own cache line, so an unchanged workspace would keep missing.

Seed defect fixed: the candidate digest now includes each candidate's content
hash and every other output-relevant field, so an edit that keeps the token
estimate no longer hits a stale entry.

The TTL is a session timeout: an entry expires five minutes after it was last
stored *or used* (the seed's ``session_expired``), so an agent that keeps asking
within a session keeps hitting, and an idle workspace is recomputed.

Because the key covers the inputs, a stale hit is impossible by construction;
invalidation triggers only free memory early (``file_saved`` with a new
workspace fingerprint drops entries of other fingerprints, ``git_commit`` /
``config_changed`` / ``rules_changed`` / ``constraints_changed`` drop all,
``session_expired`` drops entries idle past the TTL). Time comes in as an
argument (epoch seconds); the cache never reads a clock.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Generic, Literal, Protocol, TypeVar

from ..errors import UsageError
from .determinism import digest, digest_json
from .types import Candidate

__all__ = [
    "COMPOSER_VERSION",
    "DEFAULT_TTL_SECONDS",
    "INVALIDATION_TRIGGERS",
    "CacheKeyInputs",
    "CompositionCache",
    "CompositionStore",
    "InvalidationTrigger",
    "cache_key",
    "candidate_digest",
]

#: bump whenever selection, rendering or shrinking can produce different output
COMPOSER_VERSION = "1.0.0"
DEFAULT_TTL_SECONDS = 300

InvalidationTrigger = Literal[
    "file_saved",
    "git_commit",
    "config_changed",
    "rules_changed",
    "constraints_changed",
    "session_expired",
]
INVALIDATION_TRIGGERS: tuple[str, ...] = (
    "file_saved",
    "git_commit",
    "config_changed",
    "rules_changed",
    "constraints_changed",
    "session_expired",
)


def candidate_digest(candidates: Iterable[Candidate]) -> str:
    """Order-independent digest of every output-relevant field, content hashes included.

    ``digest`` of the shapes sorted by their ``repr``. The JSON list is joined from
    each candidate's kept shape JSON; the order comes from the ids' ``repr`` (a
    shape's ``repr`` starts with its id's, and no id's ``repr`` is a prefix of
    another's, which is checked), the whole shapes' ``repr`` only among equal ids.
    """
    cands = list(candidates)
    ids = [repr(c.id) for c in cands]
    seen = Counter(ids)
    keyed = sorted(
        (
            (i, repr(c.shape()) if seen[i] > 1 else "", n)
            for n, (i, c) in enumerate(zip(ids, cands, strict=True))
        ),
        key=lambda k: (k[0], k[1]),
    )
    if any(b[0] != a[0] and b[0].startswith(a[0]) for a, b in pairwise(keyed)):
        ordered = sorted(cands, key=lambda c: repr(c.shape()))
    else:
        ordered = [cands[n] for _, _, n in keyed]
    return digest_json("[" + ",".join(c.shape_json() for c in ordered) + "]")


@dataclass(frozen=True, slots=True)
class CacheKeyInputs:
    workspace_fingerprint: str
    commitish: str
    candidate_digest: str
    rules_digest: str
    budget_digest: str
    constraints_digest: str
    tokenizer: str
    format: str
    composer_version: str = COMPOSER_VERSION
    extra: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "workspace_fingerprint": self.workspace_fingerprint,
            "commitish": self.commitish,
            "candidate_digest": self.candidate_digest,
            "rules_digest": self.rules_digest,
            "budget_digest": self.budget_digest,
            "constraints_digest": self.constraints_digest,
            "tokenizer": self.tokenizer,
            "format": self.format,
            "composer_version": self.composer_version,
            "extra": dict(self.extra),
        }


def cache_key(inputs: CacheKeyInputs) -> str:
    """32 hex characters of sha256 over the canonical JSON of the inputs."""
    return digest(inputs.to_dict())


T = TypeVar("T")


class CompositionStore(Protocol[T]):
    """What ``compose(cache=...)`` needs: the in-memory LRU, the disk cache, or both."""

    def get(self, key: str, *, now: int) -> T | None: ...

    def put(self, key: str, value: T, *, now: int, workspace_fingerprint: str = "") -> None: ...


@dataclass(slots=True)
class _Entry(Generic[T]):
    value: T
    last_used: int
    workspace: str


class CompositionCache(Generic[T]):
    """LRU of compositions by key, with a TTL measured on the caller's clock."""

    def __init__(self, max_entries: int = 256, ttl_seconds: int = DEFAULT_TTL_SECONDS) -> None:
        if max_entries <= 0 or ttl_seconds <= 0:
            raise UsageError("cache max_entries and ttl_seconds must be positive")
        self._entries: OrderedDict[str, _Entry[T]] = OrderedDict()
        self._max = max_entries
        self._ttl = ttl_seconds
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, *, now: int) -> T | None:
        entry = self._entries.get(key)
        if entry is None or not 0 <= now - entry.last_used < self._ttl:
            if entry is not None:
                del self._entries[key]
            self.misses += 1
            return None
        entry.last_used = now
        self._entries.move_to_end(key)
        self.hits += 1
        return entry.value

    def put(self, key: str, value: T, *, now: int, workspace_fingerprint: str = "") -> None:
        self._entries[key] = _Entry(value, now, workspace_fingerprint)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def invalidate(
        self, trigger: str, *, now: int = 0, workspace_fingerprint: str | None = None
    ) -> int:
        """Drop entries a trigger makes useless; returns how many were dropped."""
        if trigger not in INVALIDATION_TRIGGERS:
            raise UsageError(
                f"unknown invalidation trigger {trigger!r}",
                hint=f"Use one of: {', '.join(INVALIDATION_TRIGGERS)}.",
            )
        if trigger == "session_expired":
            doomed = [k for k, e in self._entries.items() if now - e.last_used >= self._ttl]
        elif trigger == "file_saved" and workspace_fingerprint is not None:
            doomed = [k for k, e in self._entries.items() if e.workspace != workspace_fingerprint]
        else:
            doomed = list(self._entries)
        for key in doomed:
            del self._entries[key]
        return len(doomed)

    def stats(self) -> Mapping[str, int]:
        return {"entries": len(self._entries), "hits": self.hits, "misses": self.misses}
