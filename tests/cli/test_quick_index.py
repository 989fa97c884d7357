"""``librarian index`` without typer (``cli/index_run.py``): the same bytes, or typer.

A second checkout or a branch switch runs ``librarian index`` in a fresh process;
the plain forms skip typer, and anything else still goes through it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codelibrarian.cli.index_run import parse_index, quick_index
from tests.cli.test_startup_imports import _loaded_after
from tests.helpers import run_captured, run_cli, run_typer
from tests.sources.repo_fixture import build_repo


def test_the_parser_reads_what_typer_reads() -> None:
    assert parse_index(["index"]) == {"path": Path(), "as_json": False, "fmt": None}
    assert parse_index(["index", "/x", "--json"]) == {
        "path": Path("/x"),
        "as_json": True,
        "fmt": None,
    }
    assert parse_index(["index", "--format=json", "repo"]) == {
        "path": Path("repo"),
        "as_json": False,
        "fmt": "json",
    }
    assert parse_index(["index", "--format", "text"]) == {
        "path": Path(),
        "as_json": False,
        "fmt": "text",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["index", "--help"],
        ["index", "-h"],
        ["index", "--watch"],
        ["index", ".", "--background"],
        ["index", "a", "b"],
        ["index", "--json", "--json"],
        ["index", "--format"],
        ["index", "--format", "--json"],
        ["index", "--format", "json", "--format", "text"],
        ["index", "--json=yes"],
        ["index", "--", "."],
        ["index", "--unknown"],
        ["map"],
        [],
    ],
)
def test_anything_unusual_goes_to_typer(argv: list[str]) -> None:
    assert parse_index(argv) is None
    assert quick_index(argv) is None


def test_typer_still_reports_what_the_quick_path_leaves_to_it(tmp_path: Path) -> None:
    res = run_cli("index", str(tmp_path), "--nope")
    assert res.returncode == 2
    assert "--nope" in res.stderr
    helped = run_cli("index", "--help")
    assert helped.returncode == 0 and "--watch" in helped.stdout


def _typer(argv: list[str]) -> tuple[int, str, str]:
    return run_typer("index_cmds", argv)


def _quick(argv: list[str]) -> tuple[int, str, str]:
    return run_captured(lambda: quick_index(argv))


def _steady(out: str) -> str:
    """The output without the run's own duration."""
    try:
        doc = json.loads(out)
    except ValueError:
        return out.rsplit(" in ", 1)[0]
    doc.pop("seconds", None)
    return json.dumps(doc)


def test_both_paths_print_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = build_repo(tmp_path / "a")
    second = tmp_path / "b"
    shutil.copytree(first, second, symlinks=True)
    calls = [
        ["--json"],  # builds the index
        [],  # unchanged: the summary line
        ["--format", "json"],
        ["--format=text"],
        ["--format", "xml"],  # a usage error, both ways
        ["--format", "text", "--json"],
    ]
    for extra in calls:
        results = []
        for runner, repo in ((_typer, first), (_quick, second)):
            # a per-user cache each: the second copy would start from the first's index
            monkeypatch.setenv("LIBRARIAN_CACHE_DIR", str(tmp_path / f"cache-{repo.name}"))
            code, out, err = runner(["index", str(repo), *extra])
            results.append((code, _steady(out).replace(str(repo), "REPO"), err))
        assert results[0] == results[1], extra
        assert results[0][1] or results[0][2], extra
    missing = [
        runner(["index", str(tmp_path / "missing"), "--json"]) for runner in (_typer, _quick)
    ]
    assert missing[0] == missing[1] and missing[0][0] != 0


#: what a plain index run must not load: typer and the terminal renderer, and the
#: compose side of the facade (composer, sources, secret rules, retrieval)
NOT_FOR_INDEX = (
    "typer",
    "click",
    "rich",
    "codelibrarian.composer",
    "codelibrarian.sources",
    "codelibrarian.gate",
    "codelibrarian.service.compose",
    "codelibrarian.query.locate",
)


def test_a_plain_index_imports_no_typer_and_no_composer(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    assert _loaded_after(["index", str(repo), "--json"], NOT_FOR_INDEX) == []
    assert run_cli("index", str(repo), "--json").returncode == 0  # it did index
