"""Same inputs, two processes, different hash seeds: byte-identical packs and records."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(seed: str, fmt: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.composer._compose_once", fmt],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
        timeout=240,
    )
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["markdown", "xml"])
def test_two_processes_with_different_hash_seeds_agree(fmt: str) -> None:
    first = _run("0", fmt)
    second = _run("424242", fmt)
    assert first == second
    text, record, explanation = first.decode("utf-8").split("\n=====\n")
    assert text.strip() and '"rankings"' in record and "Lane breakdown" in explanation
    # the record never carries paths
    for path in ("src/app.py", "secrets/prod.key", "docs/rules.md"):
        assert path not in record
