"""The labelled intent set in benchmarks/intents/ stays valid, and its checker catches breakage."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
INTENTS = ROOT / "benchmarks" / "intents"
CHECK = INTENTS / "check.py"


def run_check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def load_check_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("intents_check", CHECK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows() -> list[dict[str, object]]:
    lines = (INTENTS / "intents.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def write(path: Path, data: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def test_the_shipped_set_is_valid_and_covers_every_pattern() -> None:
    result = run_check("--agreement")
    assert result.returncode == 0, result.stderr
    assert "| **all** |" in result.stdout
    assert "kappa" in result.stdout
    data = rows()
    labels = {r["label"] for r in data}
    assert labels == set(load_check_module().PATTERNS)
    for half in ("dev", "eval"):
        assert {r["label"] for r in data if r["split"] == half} == labels


def test_the_passes_label_the_same_intents_as_the_set() -> None:
    check = load_check_module()
    ids = {str(r["id"]) for r in rows()}
    for name in ("pass1.tsv", "pass2.tsv", "pass3.tsv"):
        labels = check.read_pass(INTENTS / "agreement" / name)
        assert set(labels) == ids
        assert set(labels.values()) <= set(check.PATTERNS)


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("unknown_label", "is not one of the 16 pattern ids"),
        ("duplicate_id", "duplicate id"),
        ("also_equals_label", "must be null or another pattern id"),
        ("null_source_not_invented", "a null source is allowed only"),
        ("repo_mismatch", "does not match"),
        ("pattern_only_in_dev", "in eval, fewer than"),
        ("missing_key", "missing keys why"),
    ],
)
def test_the_checker_rejects_broken_sets(tmp_path: Path, breakage: str, message: str) -> None:
    data = rows()
    first_issue = next(r for r in data if r["source_kind"] == "issue")
    if breakage == "unknown_label":
        data[0]["label"] = "pattern_vibes"
    elif breakage == "duplicate_id":
        data[1]["id"] = data[0]["id"]
    elif breakage == "also_equals_label":
        data[0]["also"] = data[0]["label"]
    elif breakage == "null_source_not_invented":
        first_issue["source"] = None
    elif breakage == "repo_mismatch":
        first_issue["source_repo"] = "someone/else"
    elif breakage == "pattern_only_in_dev":
        for r in data:
            if r["label"] == "pattern_api_design":
                r["split"] = "dev"
    elif breakage == "missing_key":
        del data[0]["why"]
    result = run_check(write(tmp_path / "intents.jsonl", data))
    assert result.returncode == 1
    assert message in result.stderr


def test_the_checker_rejects_a_line_that_is_not_json(tmp_path: Path) -> None:
    path = write(tmp_path / "intents.jsonl", rows())
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    result = run_check(path)
    assert result.returncode == 1
    assert "not JSON" in result.stderr


def test_kappa_matches_a_hand_computed_example() -> None:
    check = load_check_module()
    # observed 3/4; chance (2*1 + 2*3) / 16 = 1/2; kappa (3/4 - 1/2) / (1 - 1/2) = 1/2
    n, observed, kappa = check.agreement(
        {"a": "x", "b": "x", "c": "y", "d": "y"},
        {"a": "x", "b": "y", "c": "y", "d": "y"},
    )
    assert (n, observed, kappa) == (4, 0.75, 0.5)


def test_the_blind_copy_hides_labels_and_sources() -> None:
    result = run_check("--blind")
    assert result.returncode == 0, result.stderr
    blind = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(set(row) == {"id", "intent"} for row in blind)
    assert sorted(str(r["id"]) for r in blind) == sorted(str(r["id"]) for r in rows())
    # shuffled: not in the file's id order
    assert [r["id"] for r in blind] != sorted(r["id"] for r in blind)
