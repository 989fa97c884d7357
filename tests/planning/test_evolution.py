"""Evolution over 500 simulated runs: the planted sequence is proposed, the failing
composition gets a mutation and a deprecation, the report is byte-identical across
runs and hash seeds, and ids come from content."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codelibrarian.execution.traces import RunTrace, StepTrace
from codelibrarian.planning.evolution import (
    EvolutionReport,
    _pct,
    evolve,
    preset_table,
    proposal_id,
)
from codelibrarian.techniques.lcl import programs_from_text
from codelibrarian.techniques.lcl.presets import to_toml
from codelibrarian.techniques.registry import default_library
from tests.planning.simulate import (
    FAILING,
    FAILING_STEP,
    PLANTED_SEQUENCE,
    simulate_runs,
)

AS_OF = 1_800_000_000
#: the checkout (the subprocess imports ``tests.planning.simulate`` from it)
ROOT = Path(__file__).resolve().parents[2]


def _comps() -> dict[str, tuple[str, ...]]:
    return {cid: c.primitives for cid, c in default_library().compositions.items()}


@pytest.fixture(scope="module")
def report() -> EvolutionReport:
    runs = simulate_runs(500, _comps(), as_of=AS_OF, seed=3)
    assert len(runs) == 500
    return evolve(runs, _comps(), as_of=AS_OF)


def test_planted_sequence_is_the_top_proposal(report: EvolutionReport) -> None:
    top = report.proposals[0]
    assert top.primitives == PLANTED_SEQUENCE
    assert top.id == proposal_id(PLANTED_SEQUENCE)
    assert top.runs >= 5 and top.success >= 700
    assert top.score == top.success * min(1000, top.runs * 50) // 1000
    # no proposal is (part of) a composition the library already has
    for p in report.proposals:
        for seq in _comps().values():
            n = len(p.primitives)
            assert all(seq[i : i + n] != p.primitives for i in range(len(seq)))


def test_failing_composition_gets_a_mutation_and_a_deprecation(report: EvolutionReport) -> None:
    mut = [m for m in report.mutations if m.composition == FAILING]
    assert len(mut) == 1 and mut[0].primitive == FAILING_STEP
    assert mut[0].kind == "add_operator" and "retry" in mut[0].description
    dep = [d for d in report.deprecations if d.composition == FAILING]
    assert len(dep) == 1 and dep[0].success < 300 and dep[0].runs >= 30
    assert "not used for" in dep[0].reason


def test_deprecation_needs_thirty_idle_days() -> None:
    runs = simulate_runs(500, _comps(), as_of=AS_OF, seed=3)
    recent = evolve(runs, _comps(), as_of=AS_OF - 20 * 86_400)
    assert not [d for d in recent.deprecations if d.composition == FAILING]


def test_report_is_byte_identical_across_runs_and_hash_seeds(report: EvolutionReport) -> None:
    mine = json.dumps(report.to_dict(), sort_keys=False)
    again = evolve(simulate_runs(500, _comps(), as_of=AS_OF, seed=3), _comps(), as_of=AS_OF)
    assert json.dumps(again.to_dict(), sort_keys=False) == mine
    code = (
        "import json, sys\n"
        "from codelibrarian.planning.evolution import evolve\n"
        "from tests.planning.simulate import simulate_runs\n"
        "from codelibrarian.techniques.registry import default_library\n"
        "c = {k: v.primitives for k, v in default_library().compositions.items()}\n"
        f"r = evolve(simulate_runs(500, c, as_of={AS_OF}, seed=3), c, as_of={AS_OF})\n"
        "sys.stdout.write(json.dumps(r.to_dict()))\n"
    )
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, timeout=120, cwd=ROOT)  # fmt: skip
        assert out.stdout == mine


def test_percentages_are_of_the_rate_not_the_fraction() -> None:
    # the seed printed a 0.9 success rate with toFixed(0) of the fraction: "1%"
    assert _pct(900) == "90%" and _pct(875) == "87.5%" and _pct(1000) == "100%"


def test_one_score_no_confidence_field(report: EvolutionReport) -> None:
    d = report.proposals[0].to_dict()
    assert "score_per_mille" in d and "confidence" not in json.dumps(d)


def _t(i: int, seq: tuple[str, ...], ok: bool, cid: str = "adhoc") -> RunTrace:
    steps = tuple(StepTrace(p, p, "success", 1, i, 1000, 5) for p in seq)
    return RunTrace(f"r{i:03d}", cid, None, "debug", None, "succeeded" if ok else "failed",
                    i, i + 10, steps)  # fmt: skip


def test_thresholds_frequency_and_success() -> None:
    seq = ("tp_secret_scan", "tp_write_docs")
    four = [_t(i, seq, True) for i in range(4)]
    assert not evolve(four, {}, as_of=AS_OF).proposals  # frequency 4 < 5
    mixed = [_t(i, seq, i < 3) for i in range(5)]  # 60% < 70%
    assert not evolve(mixed, {}, as_of=AS_OF).proposals
    ok = [_t(i, seq, True) for i in range(5)]
    got = evolve(ok, {}, as_of=AS_OF).proposals
    assert [p.primitives for p in got] == [seq]
    assert got[0].description == "Discovered in 5 runs with 100% success"


def test_approved_items_become_compiling_programs(report: EvolutionReport) -> None:
    for item in (report.proposals[0], *report.mutations):
        name = "evolved_test"
        text = to_toml(preset_table(item, name))
        programs, diags = programs_from_text(text, f"{name}.toml")
        assert not [d for d in diags if d.severity == "error"], text
        programs[0].compile()
