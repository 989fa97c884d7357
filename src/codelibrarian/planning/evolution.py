"""Evolution (seed 004 P7): learn better workflows from finished runs — proposals only.

:func:`evolve` is a pure function of the run traces, the library's compositions
and ``as_of`` (epoch seconds; the engine tells run times in epoch seconds). It
returns a report; nothing changes until a person (or an agent) approves an item
(``librarian evolve approve ID``), which writes a preset.

* **Discovered sequences** — contiguous runs of primitives (length 2–6) in the
  steps that ran (skipped steps do not count), counted once per run: kept when
  they occur in at least :data:`MIN_FREQUENCY` runs that succeeded at least
  :data:`MIN_SUCCESS` of the time. A sequence inside a longer kept one with the
  same runs is dropped (it says nothing the longer one does not).
* **Proposals** — a kept sequence that no composition already holds (as a whole
  or as a contiguous part: running a composition is not discovering it) becomes
  a composition proposal. Its id is derived from its content
  (``tc_evolved_<sha256 of the sequence, 10 hex>``), so the same evidence always
  gives the same id. Its one score is ``success x min(1, runs / 20)`` per mille —
  the seed called this "confidence" in one place and "proposalScore" in another;
  here it is the score, and nothing else is called confidence. Its description
  prints the success rate as a percentage of the rate (the seed printed 0.9 as
  "1%").
* **Mutations** — a composition with at least :data:`MUTATION_MIN_RUNS` finished
  runs and success at most :data:`MUTATION_MAX_SUCCESS`: the primitive whose step
  fails most often among its failed runs (more than :data:`FAILURE_SHARE` of them)
  gets a retry when its failures are timeouts or errors on the first attempt, a
  verification step after it when its contract was violated.
* **Deprecation candidates** — success below :data:`DEPRECATE_SUCCESS` over at
  least :data:`DEPRECATE_MIN_RUNS` runs, and no run started in the
  :data:`UNUSED_DAYS` days before ``as_of``.

Every list is sorted with a total key; every rate is an integer per mille; the
report is byte-identical for the same inputs, whatever the hash seed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .history import FINISHED

if TYPE_CHECKING:
    from ..execution.traces import RunTrace

__all__ = [
    "DEPRECATE_MIN_RUNS",
    "DEPRECATE_SUCCESS",
    "MIN_FREQUENCY",
    "MIN_SUCCESS",
    "MUTATION_MAX_SUCCESS",
    "MUTATION_MIN_RUNS",
    "UNUSED_DAYS",
    "Deprecation",
    "DiscoveredSequence",
    "EvolutionReport",
    "Mutation",
    "Proposal",
    "evolve",
    "proposal_id",
]

MIN_LENGTH, MAX_LENGTH = 2, 6
MIN_FREQUENCY = 5
MIN_SUCCESS = 700
MAX_PROPOSALS = 10
MUTATION_MIN_RUNS = 10
MUTATION_MAX_SUCCESS = 800
FAILURE_SHARE = 600
DEPRECATE_SUCCESS = 300
DEPRECATE_MIN_RUNS = 30
UNUSED_DAYS = 30
_DAY = 86_400
_SCORE_SATURATION = 20
_FAILED = frozenset({"failure", "violated", "timeout", "escalated"})


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:10]


def proposal_id(sequence: Sequence[str]) -> str:
    """The content-derived id of a proposed composition."""
    return f"tc_evolved_{_digest(*sequence)}"


def _pct(per_mille: int) -> str:
    """``850`` -> ``"85%"``, ``875`` -> ``"87.5%"`` (a rate, shown as a percentage of it)."""
    whole, tenth = divmod(per_mille, 10)
    return f"{whole}%" if tenth == 0 else f"{whole}.{tenth}%"


@dataclass(frozen=True, slots=True)
class DiscoveredSequence:
    primitives: tuple[str, ...]
    runs: int
    successes: int
    median_ms: int
    first_seen: int
    last_seen: int
    actions: tuple[str, ...]

    @property
    def success(self) -> int:
        return self.successes * 1000 // self.runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "primitives": list(self.primitives),
            "runs": self.runs,
            "successes": self.successes,
            "success_per_mille": self.success,
            "median_ms": self.median_ms,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "common_intent_actions": list(self.actions),
        }


@dataclass(frozen=True, slots=True)
class Proposal:
    id: str
    name: str
    description: str
    primitives: tuple[str, ...]
    retry: tuple[str, ...]
    runs: int
    success: int
    score: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "proposal",
            "name": self.name,
            "description": self.description,
            "primitives": list(self.primitives),
            "retry": list(self.retry),
            "based_on": "discovered_sequence",
            "evidence": {"runs": self.runs, "success_per_mille": self.success},
            "score_per_mille": self.score,
        }


@dataclass(frozen=True, slots=True)
class Mutation:
    id: str
    composition: str
    kind: str  # "add_operator" (a retry) or "add_primitive" (a verification after it)
    primitive: str
    description: str
    evidence: str
    runs: int
    success: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "mutation",
            "composition": self.composition,
            "mutation": self.kind,
            "primitive": self.primitive,
            "description": self.description,
            "evidence": self.evidence,
            "runs": self.runs,
            "success_per_mille": self.success,
        }


@dataclass(frozen=True, slots=True)
class Deprecation:
    id: str
    composition: str
    runs: int
    success: int
    last_used: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "deprecation",
            "composition": self.composition,
            "runs": self.runs,
            "success_per_mille": self.success,
            "last_used": self.last_used,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class EvolutionReport:
    as_of: int
    runs: int
    discovered: tuple[DiscoveredSequence, ...]
    proposals: tuple[Proposal, ...]
    mutations: tuple[Mutation, ...]
    deprecations: tuple[Deprecation, ...]
    notes: tuple[str, ...] = field(default=())

    def item(self, item_id: str) -> Proposal | Mutation | Deprecation | None:
        for group in (self.proposals, self.mutations, self.deprecations):
            for x in group:
                if x.id == item_id:
                    return x
        return None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(x.id for g in (self.proposals, self.mutations, self.deprecations) for x in g)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "codelibrarian.evolution/1",
            "as_of": self.as_of,
            "runs": self.runs,
            "discovered": [d.to_dict() for d in self.discovered],
            "proposals": [p.to_dict() for p in self.proposals],
            "mutations": [m.to_dict() for m in self.mutations],
            "deprecations": [d.to_dict() for d in self.deprecations],
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------- mining


def _ran(trace: RunTrace) -> tuple[str, ...]:
    return tuple(s.primitive_id for s in trace.steps if s.outcome != "skipped")


def _median(values: Sequence[int]) -> int:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2] if ordered else 0


def _inside(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """Is ``short`` a contiguous part of ``long``?"""
    n = len(short)
    return any(long[i : i + n] == short for i in range(len(long) - n + 1))


def _mine(traces: Sequence[RunTrace]) -> list[DiscoveredSequence]:
    seen: dict[tuple[str, ...], list[RunTrace]] = {}
    for t in traces:
        seq = _ran(t)
        subs: set[tuple[str, ...]] = set()
        for n in range(MIN_LENGTH, min(MAX_LENGTH, len(seq)) + 1):
            for i in range(len(seq) - n + 1):
                subs.add(seq[i : i + n])
        for sub in subs:
            seen.setdefault(sub, []).append(t)
    kept: dict[tuple[str, ...], DiscoveredSequence] = {}
    for sub, runs in seen.items():
        if len(runs) < MIN_FREQUENCY:
            continue
        ok = sum(1 for t in runs if t.succeeded)
        if ok * 1000 // len(runs) < MIN_SUCCESS:
            continue
        actions = Counter(t.intent_action for t in runs if t.intent_action)
        kept[sub] = DiscoveredSequence(
            sub,
            len(runs),
            ok,
            _median([(t.finished_at or t.started_at) - t.started_at for t in runs]) * 1000,
            min(t.started_at for t in runs),
            max(t.started_at for t in runs),
            tuple(a for a, _ in sorted(actions.items(), key=lambda kv: (-kv[1], kv[0]))[:3]),
        )

    closed = [
        d
        for d in kept.values()
        if not any(
            len(o.primitives) > len(d.primitives) and o.runs == d.runs
            and _inside(d.primitives, o.primitives)
            for o in kept.values()
        )
    ]  # fmt: skip
    return sorted(closed, key=lambda d: (-d.runs * d.success, -len(d.primitives), d.primitives))


def _score(d: DiscoveredSequence) -> int:
    return d.success * min(1000, d.runs * 1000 // _SCORE_SATURATION) // 1000


def _retried(traces: Sequence[RunTrace], seq: tuple[str, ...]) -> tuple[str, ...]:
    """Primitives of ``seq`` that needed more than one attempt in at least half their steps."""
    attempts: dict[str, list[int]] = {}
    for t in traces:
        for s in t.steps:
            if s.primitive_id in seq:
                attempts.setdefault(s.primitive_id, []).append(s.attempts)
    out = []
    for pid in dict.fromkeys(seq):
        a = attempts.get(pid, [])
        if a and sum(1 for x in a if x > 1) * 2 >= len(a):
            out.append(pid)
    return tuple(out)


# ---------------------------------------------------------------------------- evolve


def _by_composition(traces: Sequence[RunTrace]) -> dict[str, list[RunTrace]]:
    out: dict[str, list[RunTrace]] = {}
    for t in traces:
        out.setdefault(t.composition_id, []).append(t)
    return out


def _mutation(cid: str, runs: list[RunTrace], success: int) -> Mutation | None:
    failed = [t for t in runs if not t.succeeded]
    if not failed:
        return None
    blame: Counter[str] = Counter()
    how: dict[str, Counter[str]] = {}
    for t in failed:
        step = next((s for s in t.steps if s.outcome in _FAILED), None)
        if step is None:
            continue
        blame[step.primitive_id] += 1
        how.setdefault(step.primitive_id, Counter())[step.outcome] += 1
    if not blame:
        return None
    pid, n = sorted(blame.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    share = n * 1000 // len(failed)
    if share <= FAILURE_SHARE:
        return None
    outcomes = how[pid]
    violated = outcomes["violated"] * 2 > n
    kind = "add_primitive" if violated else "add_operator"
    if violated:
        desc = f"add a verification step (tp_verify_plan) after {pid}"
        expect = "its output breaks its contract: check it before the next step relies on it"
    else:
        desc = f"wrap {pid} in a retry (3 attempts)"
        expect = "its failures look transient (errors or timeouts on the first attempt)"
    evidence = (
        f"{pid} is the failing step in {n} of {len(failed)} failed runs ({_pct(share)}); "
        f"{', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))}; {expect}"
    )
    return Mutation(
        f"mut_{_digest(cid, kind, pid)}", cid, kind, pid, desc, evidence, len(runs), success
    )


def evolve(
    traces: Sequence[RunTrace],
    compositions: Mapping[str, tuple[str, ...]],
    *,
    as_of: int,
) -> EvolutionReport:
    """The report (module docstring); ``compositions`` maps id -> primitive sequence."""
    done = sorted((t for t in traces if t.status in FINISHED), key=lambda t: t.run_id)
    notes: list[str] = []
    if len(done) < len(traces):
        notes.append(f"{len(traces) - len(done)} unfinished run(s) left out")
    existing = [tuple(seq) for _, seq in sorted(compositions.items())]
    proposals: list[Proposal] = []
    discovered = _mine(done)
    for d in discovered:
        if any(_inside(d.primitives, seq) for seq in existing):
            continue
        if len(proposals) >= MAX_PROPOSALS:
            break
        arrow = " -> ".join(d.primitives)
        proposals.append(
            Proposal(
                proposal_id(d.primitives),
                f"evolved: {arrow}",
                f"Discovered in {d.runs} runs with {_pct(d.success)} success",
                d.primitives,
                _retried(done, d.primitives),
                d.runs,
                d.success,
                _score(d),
            )
        )
    proposals.sort(key=lambda p: (-p.score, p.id))
    mutations: list[Mutation] = []
    deprecations: list[Deprecation] = []
    for cid, runs in sorted(_by_composition(done).items()):
        ok = sum(1 for t in runs if t.succeeded)
        success = ok * 1000 // len(runs)
        if len(runs) >= MUTATION_MIN_RUNS and success <= MUTATION_MAX_SUCCESS:
            m = _mutation(cid, runs, success)
            if m is not None:
                mutations.append(m)
        last = max(t.started_at for t in runs)
        idle_days = (as_of - last) // _DAY
        if (
            len(runs) >= DEPRECATE_MIN_RUNS
            and success < DEPRECATE_SUCCESS
            and idle_days >= UNUSED_DAYS
        ):
            deprecations.append(
                Deprecation(
                    f"dep_{_digest(cid)}",
                    cid,
                    len(runs),
                    success,
                    last,
                    f"{ok} of {len(runs)} runs succeeded ({_pct(success)}); "
                    f"not used for {idle_days} days",
                )
            )
    return EvolutionReport(
        as_of,
        len(done),
        tuple(discovered),
        tuple(proposals),
        tuple(sorted(mutations, key=lambda m: (m.composition, m.id))),
        tuple(sorted(deprecations, key=lambda d: (d.composition, d.id))),
        tuple(notes),
    )


def preset_table(item: Proposal | Mutation, name: str) -> dict[str, Any]:
    """The LCL program (TOML table) an approved proposal or mutation becomes."""
    if isinstance(item, Proposal):
        table: dict[str, Any] = {
            "name": name,
            "description": f"{item.description} (evolution proposal {item.id})",
            "base": "primitives",
            "primitive_ids": list(item.primitives),
            "template": "pipeline",
        }
        if item.retry:
            table["operators"] = [
                {"type": "retry", "inputs": [p], "parameters": {"attempts": 3}} for p in item.retry
            ]
        return table
    table = {
        "name": name,
        "description": f"{item.composition} with {item.description} (evolution mutation {item.id})",
        "base": "composition",
        "base_id": item.composition,
    }
    if item.kind == "add_operator":
        table["operators"] = [
            {"type": "retry", "inputs": [item.primitive], "parameters": {"attempts": 3}}
        ]
    else:
        table["conditionals"] = [
            {"when": "true", "then": "add", "primitive_id": "tp_verify_plan",
             "position": f"after:{item.primitive}"}
        ]  # fmt: skip
    return table
