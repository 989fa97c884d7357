"""Time codebase + change facts (``index/facts.py``) on a generated ~2,000-file repository.

Builds a git repository under ``--dir`` (default: a temporary directory) with
--files files across Python, TypeScript and Go modules (auth, api, models, UI
components, tests, docs), indexes it once, then times ``compute_facts`` warm
(index open, OS cache warm) --runs times, with and without a 40-file change, and
reports the median and the p95 in milliseconds. Planning computes facts on every
call, so the goal is < 100 ms warm.

    .venv/bin/python benchmarks/bench_facts.py --files 2000 --runs 30
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from codelibrarian.index.facts import compute_facts
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.store import open_store
from codelibrarian.workspace.git import working_diff

KINDS = (
    (
        "src/app/auth/session_{i}.py",
        "import jwt\nfrom flask import request\n\n\n"
        "def check_{i}(token):\n    return jwt.decode(token, 'k')\n",
    ),
    (
        "src/app/api/routes_{i}.py",
        "from flask import Blueprint\n\nbp = Blueprint('r{i}', __name__)\n\n\n"
        "@bp.route('/x{i}')\ndef handler_{i}():\n    return 'ok'\n",
    ),
    ("src/app/models/model_{i}.py", "import sqlalchemy\n\n\nclass Model{i}:\n    id = {i}\n"),
    ("src/app/core/util_{i}.py", "def util_{i}(x):\n    return x + {i}\n"),
    (
        "web/src/components/Widget{i}.tsx",
        "import React from 'react';\nexport const Widget{i} = () => <div>{i}</div>;\n",
    ),
    (
        "svc/pkg/h{i}.go",
        'package pkg\n\nimport "net/http"\n\n'
        "func H{i}(w http.ResponseWriter, r *http.Request) {{}}\n",
    ),
    (
        "tests/test_util_{i}.py",
        "import pytest\nfrom app.core.util_{i} import util_{i}\n\n\n"
        "def test_{i}():\n    assert util_{i}(1)\n",
    ),
    ("docs/page_{i}.md", "# Page {i}\n"),
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.invalid", *args],
        check=True,
        capture_output=True,
    )


def build(repo: Path, n: int) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "-q", "-b", "main")
    for i in range(n):
        pattern, body = KINDS[i % len(KINDS)]
        path = repo / pattern.format(i=i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body.format(i=i), encoding="utf-8")
    (repo / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")


def _time(runs: int, fn: Callable[[], object]) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=2000, help="files of the generated repository")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--dir", type=Path, default=None, help="default: a temporary folder")
    args = ap.parse_args(argv)
    base = args.dir or Path(tempfile.mkdtemp(prefix="bench-facts-"))
    repo = base / f"repo{args.files}"
    if not (repo / ".git").exists():
        build(repo, args.files)
    index_workspace(repo)
    for i in range(0, 320, 8):  # a 40-file change
        p = repo / KINDS[0][0].format(i=i)
        p.write_text(
            p.read_text(encoding="utf-8") + "password = request.json['p']\n", encoding="utf-8"
        )
    changes = working_diff(repo)
    with open_store(repo, readonly=True) as store:
        files = len(store.paths())
        compute_facts(store, changes, task="warm up", root=repo, is_git=True)
        clean = _time(args.runs, lambda: compute_facts(store, (), task="t", root=repo, is_git=True))
        changed = _time(
            args.runs, lambda: compute_facts(store, changes, task="t", root=repo, is_git=True)
        )
        facts = compute_facts(store, changes, task="t", root=repo, is_git=True)
    print(f"indexed files: {files}; changed files: {len(changes)}; runs: {args.runs}")
    for name, times in (("no change", clean), ("40-file change", changed)):
        p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)]
        print(f"  {name}: median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms")
    cb = facts.env()["codebase"]
    flags = "/".join(str(cb[k]) for k in ("has_auth", "has_api", "has_database", "has_ui"))
    print(f"  facts: languages {cb['languages']}, frameworks {cb['frameworks']}")
    print(f"  auth/api/database/ui: {flags}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
