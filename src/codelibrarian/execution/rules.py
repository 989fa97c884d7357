"""Pure rules the operators use: backoff delays, breaker transitions, vote counts.

Each is a small function of values, so it is tested on its own and a replay
computes exactly what the original run did.

* :func:`retry_delay` — the wait before the next attempt. The seed's
  ``exponential_jitter`` drew from an unseeded ``Math.random()``; here the jitter
  is a hash of the run id, the node and the attempt, so a replay waits the same.
  Everything is integer milliseconds.
* :func:`breaker_enter` / :func:`breaker_record` — a circuit breaker's state
  machine (closed → open after ``threshold`` consecutive failures → one half-open
  trial after ``reset_after_ms`` → closed on success, open again on failure). The
  state is a plain mapping the shell persists per breaker under
  ``.librarian/breakers/`` (the seed kept one static map per process and read the
  wall clock).
* :func:`tally` — votes by canonical JSON value, ties and dissent made explicit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "BreakerVerdict",
    "Tally",
    "breaker_enter",
    "breaker_record",
    "canonical",
    "digest_value",
    "retry_delay",
    "tally",
]

BreakerVerdict = Literal["closed", "half_open", "open"]


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_value(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value`` (hex, 32 characters)."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()[:32]


def _jitter_per_mille(seed: str) -> int:
    raw = hashlib.blake2b(seed.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(raw, "big") % 1000


def retry_delay(backoff: str, *, base_ms: int, max_ms: int, failed_attempt: int, seed: str) -> int:
    """Milliseconds to wait after attempt ``failed_attempt`` (1-based) failed.

    ``constant``: base; ``linear``: base × n; ``exponential``: base × 2^(n-1);
    ``exponential_jitter``: the exponential delay plus up to 30% of it, the share
    taken from a hash of ``seed`` and n. Never above ``max_ms``.
    """
    n = max(1, failed_attempt)
    if backoff == "constant":
        delay = base_ms
    elif backoff == "linear":
        delay = base_ms * n
    else:
        delay = base_ms * (1 << min(n - 1, 40))
        if backoff == "exponential_jitter":
            delay += delay * 3 * _jitter_per_mille(f"{seed}|{n}") // 10_000
    return max(0, min(delay, max_ms))


def breaker_enter(
    state: Mapping[str, Any], now_ms: int, reset_after_ms: int
) -> tuple[BreakerVerdict, dict[str, Any]]:
    """May the protected body run now? ``(verdict, new state)``.

    An open breaker lets exactly one trial through once ``reset_after_ms`` has
    passed since it opened (the breaker turns half-open); while that trial runs,
    others are refused, unless the trial is itself older than ``reset_after_ms``
    (its runner died), when a new trial may start.
    """
    current = dict(state) or {"state": "closed", "failures": 0}
    status = current.get("state", "closed")
    if status == "closed":
        return "closed", current
    if status == "open":
        opened = int(current.get("opened_at", 0))
        if now_ms - opened >= reset_after_ms:
            current.update(state="half_open", trial_at=now_ms)
            return "half_open", current
        return "open", current
    trial = int(current.get("trial_at", 0))
    if now_ms - trial >= reset_after_ms:
        current.update(trial_at=now_ms)
        return "half_open", current
    return "open", current


def breaker_record(
    state: Mapping[str, Any], *, success: bool, now_ms: int, threshold: int
) -> dict[str, Any]:
    """The state after the body ran: success closes; a failure counts, and opens the
    breaker at ``threshold`` consecutive failures (a failed half-open trial at once)."""
    current = dict(state) or {"state": "closed", "failures": 0}
    if success:
        return {"state": "closed", "failures": 0}
    failures = int(current.get("failures", 0)) + 1
    if current.get("state") == "half_open" or failures >= threshold:
        return {"state": "open", "failures": failures, "opened_at": now_ms}
    return {"state": "closed", "failures": failures}


@dataclass(frozen=True, slots=True)
class Tally:
    """Votes counted: the leading value (None on a tie or without votes) and who dissented."""

    voters: int
    abstained: tuple[str, ...]
    counts: tuple[tuple[str, int], ...]
    top: str | None
    top_votes: int
    tied: bool
    dissent: tuple[str, ...]

    @property
    def distinct(self) -> int:
        return len(self.counts)


def tally(votes: Sequence[tuple[str, str | None]]) -> Tally:
    """Count ``(voter id, canonical vote or None for an abstention)``.

    Counts are sorted by votes (most first), then value, so the order never
    depends on arrival. ``top`` is the leading value unless two values share the
    lead (``tied``); dissent lists every voter who did not vote for ``top``
    (abstentions included), in the order given.
    """
    counts: dict[str, int] = {}
    for _voter, vote in votes:
        if vote is not None:
            counts[vote] = counts.get(vote, 0) + 1
    ranked = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    top_votes = ranked[0][1] if ranked else 0
    tied = len(ranked) > 1 and ranked[1][1] == top_votes
    top = None if not ranked or tied else ranked[0][0]
    return Tally(
        voters=len(votes),
        abstained=tuple(v for v, vote in votes if vote is None),
        counts=ranked,
        top=top,
        top_votes=top_votes,
        tied=tied,
        dissent=tuple(v for v, vote in votes if top is None or vote != top),
    )
