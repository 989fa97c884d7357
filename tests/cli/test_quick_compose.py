"""``librarian compose`` without typer (``cli/compose_run.py``): the same bytes, or typer.

The quick path reads only command lines it is sure to read as typer does; for
anything else it steps aside, and typer prints its usual messages.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codelibrarian.cli.compose_run import parse_compose, quick_compose
from tests.helpers import run_captured, run_cli, run_typer
from tests.sources.repo_fixture import AS_OF, build_repo

TASK = "add a post method with retry backoff to HttpClient"


def test_the_parser_reads_what_typer_reads() -> None:
    got = parse_compose(
        ["compose", TASK, "--budget", "900", "-m", "gpt-4o", "--files=a.py", "-f", "b.py",
         "--json", "--no-cache", "-C", "/x", "--as-of=12", "--explain"]
    )  # fmt: skip
    assert got == {
        "task": TASK,
        "budget": 900,
        "model": "gpt-4o",
        "files": ("a.py", "b.py"),
        "as_json": True,
        "no_cache": True,
        "repo": Path("/x"),
        "as_of": 12,
        "explain": True,
    }
    # options may come before the task, as click allows
    assert parse_compose(["compose", "-b", "5", TASK]) == {"task": TASK, "budget": 5}


@pytest.mark.parametrize(
    "argv",
    [
        ["compose"],
        ["compose", "--help"],
        ["compose", TASK, "-h"],
        ["compose", TASK, "--budget"],  # a value missing
        ["compose", TASK, "--budget", "--json"],  # an option where the value should be
        ["compose", TASK, "--budget", "lots"],
        ["compose", TASK, "--budget", "1_000"],  # click reads it; this parser is not sure
        ["compose", TASK, "-b8000"],
        ["compose", TASK, "--budget", "9", "--budget", "10"],
        ["compose", TASK, "--json", "--json"],
        ["compose", TASK, "--json=yes"],
        ["compose", TASK, "another"],
        ["compose", TASK, "--unknown"],
        ["compose", "--", TASK],
        ["compose", "-", "--json"],
        ["query", TASK],
    ],
)
def test_anything_unusual_goes_to_typer(argv: list[str]) -> None:
    assert parse_compose(argv) is None
    assert quick_compose(argv) is None


def test_typer_still_reports_what_the_quick_path_leaves_to_it(tmp_path: Path) -> None:
    res = run_cli("compose", TASK, "-C", str(tmp_path), "--budget", "lots")
    assert res.returncode == 2
    assert "--budget" in res.stderr
    helped = run_cli("compose", "--help")
    assert helped.returncode == 0 and "--no-cache" in helped.stdout


def _typer(argv: list[str]) -> tuple[int, str, str]:
    return run_typer("compose_cmds", argv)


def _quick(argv: list[str]) -> tuple[int, str, str]:
    return run_captured(lambda: quick_compose(argv))


def test_both_paths_print_the_same_bytes(tmp_path: Path) -> None:
    # each call records a decision the next call's history lane may read, so each path
    # runs the same calls on its own copy of one repository (state folder and its
    # secret included: artifact ids are keyed by it)
    first = build_repo(tmp_path / "a")
    assert _quick(["compose", TASK, "-C", str(first), "--dry-run"])[0] == 0
    second = tmp_path / "b"
    shutil.copytree(first, second, symlinks=True)
    calls = [
        ["--budget", "900", "--as-of", str(AS_OF), "--no-cache"],
        ["--budget", "700", "--format", "json", "--as-of", str(AS_OF)],
        ["--budget", "600", "--dry-run", "--reveal", "--verbose", "--as-of", str(AS_OF)],
        ["--budget", "800", "--format", "xml", "--json"],  # a usage error, both ways
        ["--budget", "800", "--diff", str(tmp_path / "missing.diff")],
    ]
    for extra in calls:
        results = []
        for runner, repo in ((_typer, first), (_quick, second)):
            code, out, err = runner(["compose", TASK, "-C", str(repo), *extra])
            if "json" in extra and code == 0:
                doc = json.loads(out)
                doc.pop("decision_id")  # a new id per recorded call
                out = json.dumps(doc)
            results.append((code, out.replace(str(repo), "REPO"), err.replace(str(repo), "REPO")))
        assert results[0] == results[1], extra
        assert results[0][1] or results[0][2], extra


def test_a_piped_compose_imports_no_typer(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    code = (
        "import sys, contextlib, io\n"
        f"sys.argv = ['librarian', 'compose', {TASK!r}, '-C', {str(repo)!r}, '--budget', '600']\n"
        "from codelibrarian.cli.app import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main()\n"
        "assert 'http_client' in out.getvalue(), out.getvalue()\n"
        "print(','.join(m for m in ('typer', 'click', 'rich') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "LIBRARIAN_NO_RESIDENT": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
