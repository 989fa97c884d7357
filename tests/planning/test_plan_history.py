"""Run history reaches the plan: the engine's ``load_traces`` is found at run time,
finished runs boost the composition that worked and time the steps they measured,
and runs whose ledger did not verify are left out and said so.

The execution engine's run store is not part of every build, so the module it lives
in is stood in for here (the true edge of this package): a module
``codelibrarian.execution.store`` with ``load_traces(state)`` returning the
engine's shape (``traces``, ``skipped_runs``).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.api import Librarian
from codelibrarian.execution.traces import RunTrace, StepTrace
from codelibrarian.providers.registry import ProviderRegistry
from tests.planning.repo_fixture import AS_OF, build_repo

pytest.importorskip("static_model")

INTENT = "The CSV export crashes when a report has no rows"
COMP = "tc_root_cause_recovery"


def _runs() -> tuple[RunTrace, ...]:
    out = []
    for i in range(6):
        start = AS_OF - 86_400 * (i + 1)
        steps = (
            StepTrace("s1", "tp_min_repro", "success", 1, start, 120_000, 800),
            StepTrace("s2", "tp_hypothesis", "success", 1, start + 200, 240_000, 900),
        )
        out.append(RunTrace(f"r{i}", COMP, "pattern_bug_investigation", "debug", None,
                            "succeeded", start, start + 900, steps))  # fmt: skip
    return tuple(out)


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"traces": _runs(), "skipped": ("r-bad",)}
    store = types.ModuleType("codelibrarian.execution.store")

    def load_traces(state: Any) -> Any:
        seen["state_dir"] = state.dir
        return types.SimpleNamespace(traces=seen["traces"], skipped_runs=seen["skipped"])

    store.load_traces = load_traces  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "codelibrarian.execution.store", store)
    return seen


def test_history_boosts_the_composition_and_times_its_steps(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    root = build_repo(tmp_path / "service")
    with Librarian(root) as lib:
        plan = lib.plan(INTENT, as_of=AS_OF, registry=ProviderRegistry(env={}))
    assert engine["state_dir"] == root / ".librarian"
    assert plan.chosen.id == COMP
    assert plan.chosen.history is not None and plan.chosen.history.boost > 0
    times = {s.primitive: s.time_source for s in plan.steps}
    assert times["tp_min_repro"] == "median of 6 successful past runs"
    assert times["tp_implement"].startswith("default")
    codes = [d.reason for d in plan.degradations]
    assert "runs_skipped" in codes and "no_run_history" not in codes
