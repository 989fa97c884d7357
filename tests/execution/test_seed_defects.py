"""One test per seed 004 P1 defect the engine fixes, each failing on the seed's behaviour."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codelibrarian.execution.breakers import BreakerStore
from codelibrarian.execution.rules import retry_delay

from .conftest import make_service
from .library import compiled
from .sim import FAIL, ok, op, s, simulate

FACTS = {"codebase": {"has_tests": True}}


def test_quorum_of_three_needs_two_not_three() -> None:
    # seed: required = ceil(3 * 0.5) + 1 = 3, so two agreeing voters escalate
    tree = op("quorum", s("v", "v1"), s("v", "v2"), s("v", "v3"))
    script = {"v1": [ok(conclusion="A")], "v2": [ok(conclusion="A")], "v3": [ok(conclusion="B")]}
    sim = simulate(tree, script)
    (result,) = [e for e in sim.events if e["kind"] == "vote_result"]
    seed_required = -(-3 * 5 // 10) + 1
    assert seed_required == 3 and result["required"] == 2
    assert sim.status == "succeeded" and sim.outputs["quorum#1"]["conclusion"] == "A"


def test_jitter_is_reproducible_from_the_run_id_and_attempt() -> None:
    # seed: exp + Math.random() * exp * 0.3, a different delay on every replay
    tree = op("retry", s("b"), attempts=4, backoff="exponential_jitter", base_delay_ms=1000)
    script = {"b": [FAIL, FAIL, FAIL, ok()]}
    a = simulate(tree, script, run_id="run-a")
    again = simulate(tree, script, run_id="run-a")
    other = simulate(tree, script, run_id="run-b")
    assert a.dispatch_times == again.dispatch_times
    assert a.dispatch_times != other.dispatch_times
    delays = [e["delay_ms"] for e in a.events if e["kind"] == "retry_decision"]
    assert [1000 <= delays[0] < 1300, 2000 <= delays[1] < 2600, 4000 <= delays[2] < 5200] == [
        True,
        True,
        True,
    ]
    code = (
        "from codelibrarian.execution.rules import retry_delay as r;"
        "print([r('exponential_jitter', base_ms=1000, max_ms=60000, failed_attempt=n,"
        " seed='run-a|retry#1') for n in (1, 2, 3)])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    here = [
        retry_delay("exponential_jitter", base_ms=1000, max_ms=60000, failed_attempt=n,
                    seed="run-a|retry#1")
        for n in (1, 2, 3)
    ]  # fmt: skip
    assert json.loads(out.stdout) == here == delays


def test_breaker_state_is_shared_across_processes(tmp_path: Path) -> None:
    # seed: a static Map per process, so another process always sees a closed breaker
    folder = tmp_path / "breakers"
    code = (
        "import sys; from pathlib import Path;"
        "from codelibrarian.execution.breakers import BreakerStore as B;"
        "b = B(Path(sys.argv[1]));"
        "[b.record('svc', success=False, now_ms=1000, threshold=2) for _ in range(2)]"
    )
    subprocess.run([sys.executable, "-c", code, str(folder)], check=True, timeout=60)
    store = BreakerStore(folder)
    assert store.enter("svc", 1500, reset_after_ms=60000) == ("open", 2)
    # after the reset time exactly one caller (in any process) gets the half-open trial
    trial = (
        "import sys; from pathlib import Path;"
        "from codelibrarian.execution.breakers import BreakerStore as B;"
        "print(B(Path(sys.argv[1])).enter('svc', 70000, reset_after_ms=60000)[0])"
    )
    other = subprocess.run(
        [sys.executable, "-c", trial, str(folder)], capture_output=True, text=True, check=True
    ).stdout.strip()
    mine = store.enter("svc", 70001, reset_after_ms=60000)[0]
    assert sorted([other, mine]) == ["half_open", "open"]


def test_nested_loops_keep_their_own_counters() -> None:
    # seed: one state['__loop_iteration'] for every loop, so the inner loop's count
    # leaks into the outer one and the run stops after 2 dispatches
    tree = op("loop", op("loop", s("a"), max_iterations=2), max_iterations=3)
    sim = simulate(tree)
    assert sim.dispatches == ["a.1", "a.2", "a.3", "a.4", "a.5", "a.6"]
    outer = [e for e in sim.events if e["kind"] == "loop_decision" and e["node"] == "loop#1"]
    assert [e["iteration"] for e in outer] == [1, 2, 3]


def test_budget_cap_holds_across_parallel_branches() -> None:
    # seed: each branch's tokens are added after it ran, so three 100-token branches all
    # run under a 250-token cap and the total ends at 300
    tree = op("budget_cap", op("parallel", s("a"), s("b"), s("c")), max_tokens=250)
    sim = simulate(tree)
    assert sim.dispatches == ["a.1", "b.1"]
    assert sim.engine is not None and sim.engine.tokens_used <= 250
    assert sim.status == "terminated" and sim.reason == "budget_exceeded"


@pytest.mark.slow
def test_a_timebox_stops_a_running_step(buggy_repo: Path, tmp_path: Path) -> None:
    # seed: the deadline is compared after the primitive returned, so a 30 s step
    # runs to its end inside a 300 ms timebox
    marker = tmp_path / "stopped.txt"
    tree = op(
        "sequence",
        op(
            "timebox",
            s("test_sleep", ms=30000, marker=str(marker)),
            duration_ms=300,
            on_timeout="terminate",
        ),
        s("test_noop"),
    )
    service = make_service(buggy_repo, record_history=False)
    started = time.monotonic()
    view = service.start(compiled(tree), "sleep a while", provider="fake")
    elapsed = time.monotonic() - started
    assert view.status == "terminated" and view.reason == "timebox_expired"
    deadline = time.monotonic() + 60  # the stopped step writes it: generous, returns early
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.read_text().startswith("stopped after")
    assert int(marker.read_text().split()[2]) < 5000
    assert elapsed < 15
    assert service.verify(view.run_id).ok
