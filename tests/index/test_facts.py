"""Codebase and change facts from a real index of a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.index.facts import change_facts, compute_facts
from codelibrarian.index.store import open_store
from codelibrarian.workspace.git import parse_unified_diff
from tests.helpers import make_repo

FILES = {
    "app/__init__.py": "",
    "app/auth/login.py": (
        "import jwt\nfrom flask import request\n\n\n"
        "def login(user, password):\n    return jwt.encode({'u': user}, 'k')\n"
    ),
    "app/api/routes.py": (
        "from flask import Flask\n\napp = Flask(__name__)\n\n\n"
        "@app.route('/health')\ndef health():\n    return 'ok'\n"
    ),
    "app/models.py": "import sqlalchemy\n\n\nclass User:\n    pass\n",
    "web/src/Button.tsx": "import React from 'react';\nexport const Button = () => <button/>;\n",
    "tests/test_login.py": (
        "import pytest\nfrom app.auth.login import login\n\n\ndef test_login():\n    assert login\n"
    ),
    "docs/guide.md": "# Guide\n",
    "pyproject.toml": '[project]\nname = "app"\ndependencies = ["flask"]\n',
    ".github/workflows/ci.yml": "on: push\n",
}

DIFF = "\n".join(
    [
        "diff --git a/app/auth/login.py b/app/auth/login.py",
        "--- a/app/auth/login.py",
        "+++ b/app/auth/login.py",
        "@@ -4,3 +4,4 @@",
        " ",
        " def login(user, password):",
        '+    name = request.json["user"]',
        "     return jwt.encode({'u': user}, 'k')",
        "diff --git a/pyproject.toml b/pyproject.toml",
        "--- a/pyproject.toml",
        "+++ b/pyproject.toml",
        "@@ -1,3 +1,3 @@",
        " [project]",
        ' name = "app"',
        '-dependencies = ["flask"]',
        '+dependencies = ["flask>=3"]',
        "",
    ]
)


def test_codebase_and_change_facts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    with Librarian(repo) as lib:
        facts = lib.facts("users sometimes cannot log in", diff_text=DIFF)
    env = facts.env()
    cb = env["codebase"]
    assert cb["languages"][0] == "python" and "tsx" in cb["languages"]
    assert cb["has_tests"] and cb["test_file_count"] == 1
    assert cb["frameworks"] == ["flask", "pytest", "react", "sqlalchemy"]
    assert cb["has_auth"] and cb["has_api"] and cb["has_database"] and cb["has_ui"]
    assert cb["has_ci"] and cb["has_docs"] and cb["has_git"]
    assert facts.evidence["codebase.has_auth"] == ("app/auth/login.py",)
    assert "app/api/routes.py" in facts.evidence["codebase.has_api"]
    ch = env["change"]
    assert ch["present"] and ch["files_changed"] == 2
    assert (ch["lines_added"], ch["lines_removed"], ch["lines_changed"]) == (2, 1, 3)
    assert ch["touches_auth"] and ch["touches_input"] and ch["touches_dependencies"]
    assert ch["touches_config"] and not ch["touches_tests"] and not ch["touches_ui"]
    assert env["intent"]["keywords"] == ["users", "sometimes", "cannot", "log"]


def test_facts_are_deterministic_and_plain(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    with Librarian(repo) as lib:
        a = json.dumps(lib.facts("x").to_dict(), sort_keys=True)
        b = json.dumps(lib.facts("x").to_dict(), sort_keys=True)
    assert a == b


def test_no_change_and_no_git(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "main.go").write_text("package main\n\nfunc main() {}\n", encoding="utf-8")
    with Librarian(plain) as lib:
        env = lib.facts().env()
    assert env["codebase"]["languages"] == ["go"] and not env["codebase"]["has_git"]
    assert not env["change"]["present"] and env["change"]["files_changed"] == 0
    assert not env["codebase"]["has_tests"]


def test_change_facts_from_diffs_alone() -> None:
    values, ev = change_facts(parse_unified_diff(DIFF))
    assert values["touches_auth"] and ev.export()["change.touches_auth"] == ("app/auth/login.py",)
    values, _ = change_facts(())
    assert values["present"] is False


def test_uncommitted_work_is_the_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", FILES)
    (repo / "web/src/Button.tsx").write_text(
        "export const Button = () => <a/>;\n", encoding="utf-8"
    )
    with Librarian(repo) as lib:
        ch = lib.facts().env()["change"]
    assert ch["touches_ui"] and ch["files_changed"] == 1
    with open_store(repo, readonly=True) as store:
        again = compute_facts(store, (), root=repo, is_git=True)
    assert again.env()["change"]["present"] is False
    assert again.env()["codebase"] == lib.facts().env()["codebase"]
