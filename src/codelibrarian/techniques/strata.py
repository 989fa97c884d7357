"""Expressiveness strata: how sure we are that a composition ends, and what it may spend.

==============  ==========================================================================
stratum         a composition is in it when
==============  ==========================================================================
finite          the most primitive runs it can make is a number fixed by the tree itself:
                sequences, parallels, conditionals, gates, fallbacks, votes; loops with a
                literal ``max_iterations``; retries (``attempts`` is always a literal)
bounded         it has an unbounded part (a loop with no ``max_iterations``) but every
                such part sits inside a ``timebox`` or ``budget_cap``: it ends when the
                time or tokens run out — a bound set by configuration, not by the tree
productive      some unbounded loop is not capped: it may run indefinitely, one
                iteration at a time (watch/monitor style)
unrestricted    a step may rewrite the composition it runs in (a ``self_modifying``
                primitive), or an extension operator declares itself unrestricted
==============  ==========================================================================

The seed contradicted itself, and these are the fixes (each has a test):

* It listed "bounded loop with counter" as *finite* but inferred every loop with
  ``maxIterations`` as *bounded*. A literal bound is static, so such a loop is finite.
* It listed retry and timebox as *bounded* examples, yet its inference ignored them
  (a retry or timebox composition came out finite). Retry with a literal
  ``attempts`` is finite; a timebox or budget cap never raises a stratum — it
  lowers an uncapped unbounded body from productive to bounded.
* Its loop interpreter imposed a hidden limit of 100 iterations while its
  inference called a loop without ``maxIterations`` productive. Here there is
  no hidden limit, and such a loop is productive.
* It only looked at a flat list of top-level operators; here the whole tree is walked.
* Branch cycles: the seed's ``branch`` results could jump to any primitive, making
  cycles possible. Compositions here are trees (conditional/gate/fallback only
  choose among their own children), so a branch cannot form a cycle; ordering
  cycles among relationship edges are rejected when the library loads.

:data:`EXECUTION_POLICIES` is the seed's per-stratum policy table with two fixes:
``productive`` said "safe with supervision" and "not autonomous" at once (here it
is simply not autonomous and needs approval); and the seed's limits (one minute
and 50k tokens for a finite run, ten minutes and 500k for a bounded one) assumed
machine-speed steps, while most steps here are an agent's work with its own
context pack — a five-step finite workflow spends more than 50k tokens on context
alone. Finite runs get 30 minutes and 200k tokens, bounded runs two hours and 1M.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from .tree import Node, OperatorNode, Step

__all__ = [
    "EXECUTION_POLICIES",
    "STRATA",
    "ExecutionPolicy",
    "Stratum",
    "StratumValidation",
    "StratumViolation",
    "infer_stratum",
    "stratum_reasons",
    "validate_stratum",
]

Stratum = Literal["finite", "bounded", "productive", "unrestricted"]
STRATA: tuple[Stratum, ...] = get_args(Stratum)
_RANK: Mapping[str, int] = {s: i for i, s in enumerate(STRATA)}


@dataclass(frozen=True, slots=True)
class ExecutionPolicy:
    """Limits and approvals for running a composition of one stratum.

    ``None`` means no limit. Durations are wall-clock milliseconds of the whole
    run, tokens are every context pack plus every model call.
    """

    stratum: Stratum
    max_duration_ms: int | None
    max_tokens: int | None
    checkpoint_interval_ms: int | None
    human_approval_required: bool
    autonomous_execution: bool
    progress_reporting_required: bool = False
    idle_timeout_ms: int | None = None
    continuous_monitoring: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "stratum": self.stratum,
            "max_duration_ms": self.max_duration_ms,
            "max_tokens": self.max_tokens,
            "checkpoint_interval_ms": self.checkpoint_interval_ms,
            "human_approval_required": self.human_approval_required,
            "autonomous_execution": self.autonomous_execution,
            "progress_reporting_required": self.progress_reporting_required,
            "idle_timeout_ms": self.idle_timeout_ms,
            "continuous_monitoring": self.continuous_monitoring,
        }


EXECUTION_POLICIES: Mapping[Stratum, ExecutionPolicy] = {
    "finite": ExecutionPolicy("finite", 1_800_000, 200_000, None, False, True),
    "bounded": ExecutionPolicy("bounded", 7_200_000, 1_000_000, 60_000, False, True),
    "productive": ExecutionPolicy(
        "productive", None, None, 30_000, True, False, True, idle_timeout_ms=300_000
    ),
    "unrestricted": ExecutionPolicy(
        "unrestricted", None, None, 10_000, True, False, True, continuous_monitoring=True
    ),
}


def _max(a: Stratum, b: Stratum) -> Stratum:
    return a if _RANK[a] >= _RANK[b] else b


@dataclass(frozen=True, slots=True)
class StratumViolation:
    node_id: str
    reason: str
    suggested_fix: str

    def to_dict(self) -> dict[str, str]:
        return {
            "operator_id": self.node_id,
            "reason": self.reason,
            "suggested_fix": self.suggested_fix,
        }


def _infer(
    node: Node,
    rules: Mapping[str, str],
    self_modifying: Callable[[str], bool],
    out: list[tuple[str, Stratum, str]],
) -> Stratum:
    """The stratum of ``node``; ``out`` collects ``(node id, stratum, why)`` for raises."""
    if isinstance(node, Step):
        if self_modifying(node.primitive):
            out.append((node.step_id, "unrestricted", f"{node.primitive} rewrites its composition"))
            return "unrestricted"
        return "finite"
    assert isinstance(node, OperatorNode)
    body: Stratum = "finite"
    for child in node.children:
        body = _max(body, _infer(child, rules, self_modifying, out))
    rule = rules.get(node.operator, "max")
    if rule == "unrestricted":
        out.append(
            (node.node_id, "unrestricted", f"operator {node.operator} declares itself unrestricted")
        )
        return "unrestricted"
    if rule == "loop" and node.params.get("max_iterations") is None:
        out.append((node.node_id, "productive", "loop without max_iterations"))
        return _max(body, "productive")
    if rule == "cap" and body == "productive":
        out.append((node.node_id, "bounded", f"{node.operator} caps an unbounded body"))
        return "bounded"
    return body


def infer_stratum(
    root: Node,
    *,
    rules: Mapping[str, str] | None = None,
    self_modifying: Callable[[str], bool] = lambda _p: False,
) -> Stratum:
    """The stratum of a tree (see the module docstring). ``rules`` maps operator ids to
    their :data:`~.operators.StratumRule` (built-ins by default)."""
    from .operators import BUILTIN_OPERATORS

    table = dict(rules) if rules is not None else {o.id: o.stratum for o in BUILTIN_OPERATORS}
    return _infer(root, table, self_modifying, [])


def stratum_reasons(
    root: Node,
    *,
    rules: Mapping[str, str] | None = None,
    self_modifying: Callable[[str], bool] = lambda _p: False,
) -> tuple[tuple[str, Stratum, str], ...]:
    """Why: every node that raised (or, for caps, lowered) the stratum, in tree order."""
    from .operators import BUILTIN_OPERATORS

    table = dict(rules) if rules is not None else {o.id: o.stratum for o in BUILTIN_OPERATORS}
    out: list[tuple[str, Stratum, str]] = []
    _infer(root, table, self_modifying, out)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class StratumValidation:
    valid: bool
    actual: Stratum
    required: Stratum
    violations: tuple[StratumViolation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "actual": self.actual,
            "required": self.required,
            "violations": [v.to_dict() for v in self.violations],
        }


_FIXES: Mapping[str, str] = {
    "productive": "set max_iterations on the loop, or wrap it in a timebox or budget_cap",
    "bounded": "give the loop a literal max_iterations (a cap bounds time, not the step count)",
    "unrestricted": "remove the self-modifying step or the unrestricted operator",
}


def validate_stratum(
    root: Node,
    required: Stratum,
    *,
    rules: Mapping[str, str] | None = None,
    self_modifying: Callable[[str], bool] = lambda _p: False,
) -> StratumValidation:
    """Is the tree at most ``required``? Violations name each offending node and a fix."""
    reasons = stratum_reasons(root, rules=rules, self_modifying=self_modifying)
    actual = infer_stratum(root, rules=rules, self_modifying=self_modifying)
    if _RANK[actual] <= _RANK[required]:
        return StratumValidation(True, actual, required)
    violations = tuple(
        StratumViolation(node_id, f"{why} (stratum {stratum})", _FIXES[stratum])
        for node_id, stratum, why in reasons
        if _RANK[stratum] > _RANK[required]
    )
    if not violations:  # a cap lowered a body that is still above ``required``
        violations = tuple(
            StratumViolation(node_id, f"{why} (stratum {stratum})", _FIXES[stratum])
            for node_id, stratum, why in reasons
        )
    return StratumValidation(False, actual, required, violations)
