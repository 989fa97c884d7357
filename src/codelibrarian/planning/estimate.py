"""Expected runs and durations of a composition's steps (pure, documented rules).

How often a step is expected to run and how long the whole takes follow the
operators:

==================  ===========================================================
sequence            children one after another: durations add
parallel, quorum,   children at once: the longest child
consensus
loop                the body ``min(max_iterations, 3)`` times (three when
                    unbounded): an expected figure, not the worst case
retry               the body once (retries happen on failure only)
fallback            the primary only (alternatives run on failure only)
conditional         the longer branch (which one runs is decided at run time)
gate, timebox,      the body; a timebox also caps the duration
budget_cap,
circuit_breaker
==================  ===========================================================

A step's own duration is the median of its primitive's successful steps in past
runs when there are any, else the documented default for its executor
(:data:`DEFAULT_STEP_MS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..techniques.tree import Node, Step
from .history import StepTiming

__all__ = [
    "DEFAULT_STEP_MS",
    "EXPECTED_LOOP_ITERATIONS",
    "StepTime",
    "expected_runs",
    "step_time",
    "total_ms",
]

#: a step's duration when no run has measured its primitive: builtin steps run over
#: the index; agent steps are a coding agent's work; llm steps one provider call
DEFAULT_STEP_MS: Mapping[str, int] = {"builtin": 5_000, "agent": 600_000, "llm": 60_000}
EXPECTED_LOOP_ITERATIONS = 3
_PARALLEL = frozenset({"parallel", "quorum", "consensus"})


@dataclass(frozen=True, slots=True)
class StepTime:
    ms: int
    source: str  # "history" or "default"
    runs: int = 0

    def explain(self) -> str:
        if self.source == "history":
            return f"median of {self.runs} successful past runs"
        return "default for its executor (no past runs)"


def step_time(primitive: str, executor: str, timings: Mapping[str, StepTiming]) -> StepTime:
    t = timings.get(primitive)
    if t is not None:
        return StepTime(t.median_ms, "history", t.runs)
    return StepTime(DEFAULT_STEP_MS.get(executor, DEFAULT_STEP_MS["agent"]), "default")


def _iterations(params: Mapping[str, Any]) -> int:
    bound = params.get("max_iterations")
    if isinstance(bound, int) and not isinstance(bound, bool) and bound > 0:
        return min(bound, EXPECTED_LOOP_ITERATIONS)
    return EXPECTED_LOOP_ITERATIONS


def expected_runs(root: Node) -> dict[str, int]:
    """How many times each step (by id) is expected to run."""
    out: dict[str, int] = {}

    def visit(node: Node, times: int) -> None:
        if isinstance(node, Step):
            out[node.step_id] = out.get(node.step_id, 0) + times
            return
        if node.operator == "loop":
            times *= _iterations(node.params)
        if node.operator == "fallback":
            kids = node.children[:1]
            for alt in node.children[1:]:
                visit_zero(alt)
        else:
            kids = node.children
        for child in kids:
            visit(child, times)

    def visit_zero(node: Node) -> None:
        if isinstance(node, Step):
            out.setdefault(node.step_id, 0)
            return
        for child in node.children:
            visit_zero(child)

    visit(root, 1)
    return out


def total_ms(root: Node, durations: Mapping[str, int]) -> int:
    """Expected wall time of the whole tree, from each step's duration (by step id)."""
    if isinstance(root, Step):
        return durations.get(root.step_id, 0)
    kids = [total_ms(c, durations) for c in root.children]
    op = root.operator
    if not kids:
        return 0
    if op == "sequence":
        return sum(kids)
    if op in _PARALLEL or op == "conditional":
        return max(kids)
    if op == "loop":
        return kids[0] * _iterations(root.params) + sum(kids[1:])
    if op == "fallback":
        return kids[0]
    if op == "timebox":
        cap = root.params.get("duration_ms")
        body = sum(kids)
        return min(body, cap) if isinstance(cap, int) and cap > 0 else body
    return sum(kids)
