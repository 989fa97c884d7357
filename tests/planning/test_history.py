"""Run history: the smoothed, bounded boost; step timings; traces read from JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codelibrarian.errors import UsageError
from codelibrarian.execution.traces import RunTrace, StepTrace
from codelibrarian.planning.history import (
    BOOST_MAX,
    outcome_for,
    step_timings,
    trace_to_dict,
    traces_from_jsonl,
)


def _run(i: int, ok: bool, *, cid: str = "tc_x", action: str | None = "debug",
         status: str | None = None, ms: int = 100) -> RunTrace:  # fmt: skip
    step = StepTrace("s1", "tp_a", "success" if ok else "failure", 1, i, ms, 10)
    st = status or ("succeeded" if ok else "failed")
    return RunTrace(f"r{i}", cid, "pattern_p", action, "auth", st, i, i + 5, (step,))  # type: ignore[arg-type]


def test_boost_is_smoothed_and_bounded() -> None:
    one = outcome_for("tc_x", [_run(0, True)], action="debug")
    assert (one.runs, one.rate, one.boost) == (1, 666, 66)
    many = outcome_for("tc_x", [_run(i, True) for i in range(50)], action="debug")
    assert many.boost == BOOST_MAX
    bad = outcome_for("tc_x", [_run(i, False) for i in range(50)], action="debug")
    assert bad.boost == -BOOST_MAX
    assert outcome_for("tc_y", [_run(0, True)], action="debug").boost == 0


def test_unfinished_runs_say_nothing() -> None:
    runs = [_run(0, True, status="running"), _run(1, True, status="awaiting_human")]
    assert outcome_for("tc_x", runs, action=None).runs == 0


def test_runs_for_the_same_kind_of_intent_win_when_there_are_enough() -> None:
    runs = [_run(i, False, action="review") for i in range(10)]
    runs += [_run(100 + i, True, action="debug") for i in range(3)]
    o = outcome_for("tc_x", runs, action="debug")
    assert (o.runs, o.successes, o.same_action) == (3, 3, True)
    few = outcome_for("tc_x", runs[:12], action="debug")
    assert (few.runs, few.same_action) == (12, False)


def test_step_timings_are_lower_medians_of_successes() -> None:
    runs = [_run(i, True, ms=ms) for i, ms in enumerate((400, 100, 300, 200))]
    runs.append(_run(9, False, ms=99_999))
    t = step_timings(runs)["tp_a"]
    assert (t.median_ms, t.runs) == (200, 4)


def test_traces_round_trip_through_json_lines() -> None:
    runs = [_run(i, i % 2 == 0) for i in range(3)]
    text = "\n".join(json.dumps(trace_to_dict(r)) for r in runs) + "\n\n"
    assert traces_from_jsonl(text) == tuple(runs)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("[1]", "not a JSON object"),
        ('{"run_id": "r", "composition_id": "c", "status": "done", "started_at": 1}', "status"),
        (
            '{"run_id": "r", "composition_id": "c", "status": "failed", "started_at": 1, '
            '"steps": [{"step_id": "s", "primitive_id": "p", "outcome": "meh"}]}',
            "outcome",
        ),
        ('{"run_id": "", "composition_id": "c", "status": "failed", "started_at": 1}', "run_id"),
    ],
)
def test_bad_traces_name_the_line_and_the_field(line: str, needle: str) -> None:
    with pytest.raises(UsageError) as err:
        traces_from_jsonl("\n" + line, source="t.jsonl")
    assert "t.jsonl:2" in err.value.message and needle in err.value.message


def test_run_traces_reads_through_a_pluggable_loader(tmp_path: Path) -> None:
    from codelibrarian.service.planning import NO_RUN_HISTORY, run_traces
    from codelibrarian.service.workspace import WorkspaceSession

    ws = WorkspaceSession(tmp_path)
    late = RunTrace("r2", "tc_a", None, "debug", None, "succeeded", 20, 30, ())
    early = RunTrace("r1", "tc_a", None, "debug", None, "failed", 10, 15, ())
    traces, degr = run_traces(ws, lambda _ws: ([late, early], ()))
    assert [t.run_id for t in traces] == ["r1", "r2"] and degr == ()
    traces, degr = run_traces(ws, lambda _ws: ([late], ["r9"]))
    assert [d.reason for d in degr] == ["runs_skipped"] and "1 run(s)" in degr[0].detail
    assert run_traces(ws, lambda _ws: None) == ((), (NO_RUN_HISTORY,))
