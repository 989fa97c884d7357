#!/usr/bin/env python3
"""Set up and run codelibrarian on a fresh machine with only Python 3.11+ and git.

    python3 scripts/dev.py demo   # install, then compose context for a sample task here
    python3 scripts/dev.py test   # install, then lint, type-check and run the whole suite

Both create ``.venv/`` on first use and reinstall only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".codelibrarian-installed"

DEMO_TASK = (
    "add a --since option to the tokens command that counts only files changed since a git revision"
)


def run(*cmd: str | Path, check: bool = True) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check).returncode


def ensure_env() -> None:
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.is_file() and STAMP.read_text().strip() == want and PY.exists():
        return
    if not PY.exists():
        print(f"creating {VENV.relative_to(ROOT)}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    # the semantic extra is small (a bundled static model) and its tests run in CI
    run(PY, "-m", "pip", "install", "--quiet", "-e", ".[dev]")
    STAMP.write_text(want + "\n")


def demo() -> int:
    ensure_env()
    librarian = BIN / "librarian"
    return run(librarian, "compose", DEMO_TASK, "--budget", "6000", "--explain", check=False)


def test(extra: list[str]) -> int:
    ensure_env()
    run(PY, "-m", "ruff", "format", "--check", "src", "tests", "scripts", "benchmarks")
    run(PY, "-m", "ruff", "check", "src", "tests", "scripts", "benchmarks")
    run(PY, "-m", "mypy")
    # two workers: the CI machine has two cores and many tests wait on subprocesses
    code = run(PY, "-m", "pytest", "-n", "2", *extra, check=False)
    if code == 5:  # no tests collected is a failure of the suite, not success
        print("pytest collected no tests", file=sys.stderr)
        return 1
    return code


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script runs before any install
        print("codelibrarian needs Python 3.11 or newer", file=sys.stderr)
        return 1
    if not argv or argv[0] not in {"demo", "test"}:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return demo() if argv[0] == "demo" else test(argv[1:])
    except subprocess.CalledProcessError as exc:
        return exc.returncode or 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
