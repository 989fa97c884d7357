"""Configuration: defaults, validation rules, and broken files through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codelibrarian.config import (
    LANES,
    BudgetConfig,
    BudgetProblem,
    Config,
    LaneBudget,
    find_config_file,
    load_config,
    validate_budget,
)
from codelibrarian.errors import EXIT_CODES, ConfigError
from tests.helpers import run_cli

SEED_DEFAULT_LANES = {
    "policy": (200, 500, 0),
    "rules": (500, 2000, 1),
    "local": (1000, 3000, 2),
    "structure": (0, 1500, 3),
    "retrieved": (0, 2000, 4),
    "history": (0, 1000, 5),
}


def test_defaults_are_the_seed_budget(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.source == ""
    assert config.budget.total_tokens == 8000
    assert tuple(config.budget.lanes) == LANES
    got = {n: (b.min, b.max, b.priority) for n, b in config.budget.lanes.items()}
    assert got == SEED_DEFAULT_LANES
    assert config.workspace.max_file_bytes == 1_048_576
    assert config.compose.model == "gpt-4o"


def test_librarian_toml_overrides_and_partial_lanes(tmp_path: Path) -> None:
    (tmp_path / "librarian.toml").write_text(
        "[budget]\ntotal_tokens = 12000\n[budget.lanes.rules]\nmax = 2500\n"
        "[workspace]\nignore = ['gen/']\n[compose]\nmodel = 'claude-sonnet-4-6'\n",
        encoding="utf-8",
    )
    config = load_config(tmp_path)
    assert config.source == "librarian.toml"
    assert config.budget.total_tokens == 12000
    assert config.budget.lanes["rules"] == LaneBudget(min=500, max=2500, priority=1)
    assert config.budget.lanes["local"] == LaneBudget(min=1000, max=3000, priority=2)
    assert config.workspace.ignore == ("gen/",)
    assert config.compose.model == "claude-sonnet-4-6"


def test_pyproject_tool_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n[tool.librarian.budget]\ntotal_tokens = 4000\n",
        encoding="utf-8",
    )
    assert find_config_file(tmp_path) == (tmp_path / "pyproject.toml", "tool.librarian")
    config = load_config(tmp_path)
    assert config.source == "pyproject.toml"
    assert config.budget.total_tokens == 4000


def test_librarian_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.librarian.budget]\ntotal_tokens = 4000\n", encoding="utf-8"
    )
    (tmp_path / "librarian.toml").write_text("[budget]\ntotal_tokens = 5000\n", encoding="utf-8")
    assert load_config(tmp_path).budget.total_tokens == 5000


def test_pyproject_without_our_table_is_ignored_even_if_broken(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'x'\n", encoding="utf-8")
    assert find_config_file(tmp_path) is None
    assert load_config(tmp_path) == Config()


def test_explicit_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path, explicit=tmp_path / "nope.toml")


def test_validate_budget_rules_and_messages() -> None:
    lanes = dict(BudgetConfig().lanes)
    validate_budget(8000, lanes)
    with pytest.raises(BudgetProblem, match=r"sum of lane mins \(1700\) exceeds total \(1000\)"):
        validate_budget(1000, lanes)
    bad = lanes | {"rules": LaneBudget(min=10, max=5, priority=1)}
    with pytest.raises(ValueError, match=r"Lane rules: min \(10\) > max \(5\)"):
        validate_budget(8000, bad)
    neg = lanes | {"history": LaneBudget(min=-1, max=5, priority=5)}
    with pytest.raises(BudgetProblem, match="Lane history: negative budget") as info:
        validate_budget(8000, neg)
    assert info.value.key == "budget.lanes.history.min"


def test_with_total_scales_mins_down() -> None:
    small = BudgetConfig().with_total(850)
    assert small.total_tokens == 850
    assert sum(b.min for b in small.lanes.values()) <= 850
    assert small.lanes["policy"].max == 500


# ---------------------------------------------------------------- broken files, real CLI

BROKEN: list[tuple[str, str, str, str, str]] = [
    # (id, file name, content, expected key, expected fix fragment)
    (
        "unknown-key",
        "librarian.toml",
        "[budget]\ntotal_tokenz = 9000\n",
        "[budget.total_tokenz]",
        "Did you mean 'total_tokens'?",
    ),
    (
        "unknown-top-level",
        "librarian.toml",
        "[compse]\nmodel = 'gpt-4o'\n",
        "[compse]",
        "Did you mean 'compose'?",
    ),
    (
        "unknown-lane",
        "librarian.toml",
        "[budget.lanes.retreived]\nmax = 100\n",
        "[budget.lanes.retreived]",
        "Did you mean 'retrieved'?",
    ),
    (
        "lane-min-over-max",
        "librarian.toml",
        "[budget.lanes.rules]\nmin = 3000\nmax = 2000\n",
        "[budget.lanes.rules.min]",
        "at most 2000",
    ),
    (
        "sum-of-mins-over-total",
        "librarian.toml",
        "[budget]\ntotal_tokens = 1000\n",
        "[budget.total_tokens]",
        "at least 1700",
    ),
    (
        "wrong-type",
        "librarian.toml",
        "[budget]\ntotal_tokens = '8000'\n",
        "[budget.total_tokens]",
        "type",
    ),
    (
        "negative",
        "librarian.toml",
        "[budget.lanes.history]\nmax = -5\n",
        "[budget.lanes.history.max]",
        "0 or more",
    ),
    (
        "bad-toml",
        "librarian.toml",
        "[budget\ntotal_tokens = 1\n",
        "not valid TOML",
        "Fix the TOML syntax",
    ),
    (
        "pyproject-tool-table",
        "pyproject.toml",
        "[project]\nname = 'x'\n[tool.librarian.workspace]\nmax_file_byte = 10\n",
        "[tool.librarian.workspace.max_file_byte]",
        "Did you mean 'max_file_bytes'?",
    ),
    (
        "pyproject-broken-with-table",
        "pyproject.toml",
        "[project\n[tool.librarian]\n",
        "not valid TOML",
        "Fix the TOML syntax",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "content", "key", "fix"),
    [case[1:] for case in BROKEN],
    ids=[case[0] for case in BROKEN],
)
def test_broken_config_makes_doctor_fail_with_file_key_and_fix(
    tmp_path: Path, name: str, content: str, key: str, fix: str
) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    result = run_cli("doctor", "--repo", str(tmp_path))
    assert result.returncode == EXIT_CODES[ConfigError]
    assert f"{name}:" in result.stderr
    assert key in result.stderr
    assert fix in result.stderr
    assert "Traceback" not in result.stderr

    as_json = run_cli("doctor", "--json", "--repo", str(tmp_path))
    assert as_json.returncode == EXIT_CODES[ConfigError]
    report = json.loads(as_json.stdout)
    assert report["ok"] is False
    assert report["config"]["ok"] is False
    assert report["config"]["file"] == name
    (problem,) = [p for p in report["problems"] if p["check"] == "config"]
    assert key in problem["message"]
    assert fix in problem["fix"]


def test_broken_config_stops_other_commands_too(tmp_path: Path) -> None:
    (tmp_path / "librarian.toml").write_text("[budget]\ntotal_tokenz = 1\n", encoding="utf-8")
    for args in (("scan",), ("tokens",), ("init",)):
        result = run_cli(*args, "--repo", str(tmp_path))
        assert result.returncode == 3, args
        assert "[budget.total_tokenz]" in result.stderr
    result = run_cli("scan", "--json", "--repo", str(tmp_path))
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert data["error"] == "config_error"
    assert data["exit_code"] == 3
    assert not (tmp_path / ".librarian").exists()
