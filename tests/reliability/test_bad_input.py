"""Bad input gets a clear error (or a warning in the result), never a traceback.

Each case below was reproduced as a traceback or a silent degenerate result on the
code before the hardening (issue 17, items 4, 7 and 8), through the real entry point.
Permission cases run the CLI as the unprivileged ``nobody`` user when the suite
runs as root (root reads and writes through any mode).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import GIT_ENV, make_repo, run_cli
from tests.reliability.fuzz import invoke_cli

pytestmark = pytest.mark.reliability

FILES = {
    "shop/pricing.py": "def apply_discount(total, rate):\n    return total * (1 - rate)\n",
    "shop/cart.py": "from shop.pricing import apply_discount\n\n\nclass Cart:\n    pass\n",
    "README.md": "# shop\n",
}
NOBODY = 65534


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", FILES)


def _clean(result: subprocess.CompletedProcess[str], code: int) -> None:
    """The exit code, a message on stderr, and no traceback anywhere."""
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert result.returncode == code, (result.returncode, result.stderr)
    if code:
        assert "error:" in result.stderr


# ------------------------------------------------------------------ item 4


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[workspace]\nmax_file_bytes = 9223372036854775807\n", "workspace.max_file_bytes"),
        ("[index]\nworkers = 100000\n", "index.workers"),
        ("[index]\nchunk_max_tokens = 99999999999999999999\n", "index.chunk_max_tokens"),
        ("[state]\ncache_max_mb = 0\n", "state.cache_max_mb"),
    ],
)
def test_out_of_range_config_values_are_config_errors(repo: Path, toml: str, key: str) -> None:
    (repo / "librarian.toml").write_text(toml, encoding="utf-8")
    result = run_cli("compose", "apply a discount", "-C", str(repo))
    _clean(result, 3)
    assert key in result.stderr


def test_librarian_toml_that_is_a_folder_is_an_error(repo: Path) -> None:
    (repo / "librarian.toml").mkdir()
    _clean(run_cli("compose", "apply a discount", "-C", str(repo)), 3)


def test_empty_task_for_pack_is_a_usage_error(repo: Path) -> None:
    result = run_cli("pack", "--agent", "Implementer", "--task", "", "-C", str(repo))
    _clean(result, 2)
    assert "task is empty" in result.stderr


def test_output_into_a_missing_folder_fails_before_any_work(repo: Path) -> None:
    result = run_cli("compose", "x", "-o", "/nonexistent/dir/out.md", "-C", str(repo))
    _clean(result, 2)
    assert "/nonexistent/dir" in result.stderr
    assert not (repo / ".librarian" / "decisions").exists()  # nothing was composed


@pytest.mark.parametrize("as_of", ["100000000000000000000", "-5", "253402300800"])
def test_as_of_out_of_range_is_a_usage_error(repo: Path, as_of: str) -> None:
    result = run_cli("compose", "x", f"--as-of={as_of}", "-C", str(repo))
    _clean(result, 2)


def test_state_folder_that_is_a_file(repo: Path) -> None:
    (repo / ".librarian").write_text("not a folder\n", encoding="utf-8")
    for args in (("index", str(repo)), ("compose", "x", "-C", str(repo))):
        result = run_cli(*args)
        _clean(result, 4)
        assert "is a file" in result.stderr


# --------------------------------------------------- as an unprivileged user


#: run as root, these tests drop to ``nobody``; run as anyone else, that user is
#: already unprivileged and the commands run as it
AS_ROOT = os.geteuid() == 0
UNPRIVILEGED = NOBODY if AS_ROOT else os.geteuid()


@pytest.fixture
def shared_repo() -> Iterator[Path]:
    """A repository owned by the unprivileged user in a folder everyone can enter."""
    base = Path(tempfile.mkdtemp(prefix="librarian-nobody-"))
    base.chmod(0o755)
    root = make_repo(base / "shop", FILES)
    (base / "home").mkdir()
    if AS_ROOT:
        for path in [base, *base.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    try:
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _as_nobody(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = root.parent / "home"
    env = {
        **os.environ,
        **GIT_ENV,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": str(home),
        "LIBRARIAN_CACHE_DIR": str(home / "cache"),
        "NO_COLOR": "1",
    }

    def drop() -> None:
        if AS_ROOT:
            os.setgid(NOBODY)
            os.setuid(NOBODY)

    return subprocess.run(
        [sys.executable, "-m", "codelibrarian", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        preexec_fn=drop,
        check=False,
    )


def test_read_only_state_folder_is_a_workspace_error(shared_repo: Path) -> None:
    assert _as_nobody(shared_repo, "index", ".").returncode == 0
    state = shared_repo / ".librarian"
    for path in [state, *state.rglob("*")]:
        path.chmod(0o500 if path.is_dir() else 0o400)
    for args in (
        ("index", "."),
        ("compose", "apply discount", "--no-cache"),
        ("pack", "--agent", "Implementer", "--task", "apply discount"),
    ):
        result = _as_nobody(shared_repo, *args)
        assert "Traceback" not in result.stderr, (args, result.stderr)
        assert result.returncode in (4, 5), (args, result.returncode, result.stderr)
        assert "error:" in result.stderr


def test_unreadable_config_is_a_config_error(shared_repo: Path) -> None:
    toml = shared_repo / "librarian.toml"
    toml.write_text("[budget]\ntotal_tokens = 4000\n", encoding="utf-8")
    os.chown(toml, UNPRIVILEGED, UNPRIVILEGED)
    toml.chmod(0o000)
    result = _as_nobody(shared_repo, "compose", "apply discount")
    _clean(result, 3)
    assert "librarian.toml" in result.stderr and "cannot be read" in result.stderr


# ------------------------------------------------------------------ item 7


def test_tiny_budget_is_refused_naming_the_smallest_that_works(repo: Path) -> None:
    result = run_cli("compose", "apply a discount", "--budget", "1", "--json", "-C", str(repo))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    doc = json.loads(result.stdout)  # with --json, the error is the one document on stdout
    assert doc["error"] == "usage_error"
    assert "too small for any pack" in doc["message"]
    assert "Give a budget of at least" in doc["hint"]
    assert not (repo / ".librarian" / "index.db").exists()  # refused before any work
    text = run_cli("compose", "apply a discount", "--budget", "1", "-C", str(repo))
    _clean(text, 2)
    assert "too small for any pack" in text.stderr


def test_a_budget_below_every_candidate_warns_that_the_pack_is_empty(repo: Path) -> None:
    result = run_cli("compose", "apply a discount", "--budget", "20", "--json", "-C", str(repo))
    _clean(result, 0)
    doc = json.loads(result.stdout)
    assert doc["tokens"] == 0
    assert any("too small for any of the" in w for w in doc["warnings"])


@pytest.mark.parametrize("task", ["", "   ", "\t\n"])
def test_blank_task_is_refused(repo: Path, task: str) -> None:
    result = run_cli("compose", task, "-C", str(repo))
    _clean(result, 2)
    assert "task is empty" in result.stderr


def test_unknown_model_is_a_warning(repo: Path) -> None:
    result = run_cli(
        "compose", "apply discount", "--model", "frobnicator-9", "--json", "-C", str(repo)
    )
    _clean(result, 0)
    assert any("unknown model 'frobnicator-9'" in w for w in json.loads(result.stdout)["warnings"])


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "shop/../../x"])
def test_files_outside_the_repository_are_refused(repo: Path, path: str) -> None:
    result = run_cli("compose", "apply discount", "--files", path, "-C", str(repo))
    _clean(result, 2)
    assert "outside the repository" in result.stderr


def test_files_not_in_the_index_are_named_in_a_warning(repo: Path) -> None:
    result = run_cli(
        "compose", "apply discount", "--files", "shop/missing.py", "--json", "-C", str(repo)
    )
    _clean(result, 0)
    assert any(
        "shop/missing.py: not in the index" in w for w in json.loads(result.stdout)["warnings"]
    )


# ------------------------------------------------------------------ item 8


def test_query_on_a_fresh_repository_indexes_like_compose(repo: Path) -> None:
    assert not (repo / ".librarian").exists()
    result = run_cli("query", "apply discount", "--json", "-C", str(repo))
    _clean(result, 0)
    assert json.loads(result.stdout)["response"]["packs"][0]["path"] == "shop/pricing.py"


#: every command with structured output, with the arguments it needs ({run} = a run id)
STRUCTURED: tuple[tuple[str, ...], ...] = (
    ("init",),
    ("doctor",),
    ("scan",),
    ("tokens",),
    ("index", "."),
    ("map", "--budget", "200"),
    ("query", "apply discount"),
    ("compose", "apply discount", "--as-of", "1767225600"),
    ("explain", "{decision}"),
    ("replay", "{decision}"),
    ("pack", "--agent", "Planner", "--task", "discount", "--run", "r1", "--as-of", "1767225600"),
    ("handoff", "--run", "r1", "--from", "Planner", "--to", "Implementer", "--as-of", "1767225600"),
    ("runs", "list"),
    ("runs", "show", "r1"),
    ("violations", "list"),
    ("vitals", "show"),
    ("window", "--goal", "apply discount", "--map-budget", "100"),
    ("providers", "list", "--offline"),
    ("techniques", "list"),
    ("patterns", "list"),
    ("presets", "list"),
    ("lcl", "facts"),
)  # fmt: skip


def test_json_and_format_json_are_accepted_everywhere(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every structured command, in-process through ``main`` (the entry point's body)."""
    monkeypatch.chdir(repo)
    code, out, err = invoke_cli(["compose", "apply discount", "--json", "--as-of", "1767225600"])
    assert code in (0, None), err
    decision = json.loads(out)["decision_id"]
    for template in STRUCTURED:
        args = [a.replace("{decision}", decision) for a in template]
        if args[0] == "providers" and "--offline" not in invoke_cli([*args[:2], "--help"])[1]:
            args.remove("--offline")
        docs = []
        for flag in (["--json"], ["--format", "json"], ["--format=json"]):
            code, out, err = invoke_cli([*args, *flag])
            assert "Traceback" not in err, (args, err)
            assert code in (0, 1, None), (args, flag, err)
            docs.append(json.loads(out))
        assert sorted(docs[0]) == sorted(docs[1]) == sorted(docs[2]), args
    bad = run_cli("map", "--format", "yaml", cwd=repo)
    _clean(bad, 2)
    assert "--format text or --format json" in bad.stderr


@pytest.mark.parametrize("sub", ["check", "compile"])
def test_a_binary_lcl_program_file_is_a_usage_error(repo: Path, sub: str) -> None:
    garbage = repo.parent / "garbage.toml"
    garbage.write_bytes(bytes(range(256)) * 4)
    code, out, err = invoke_cli(["lcl", sub, str(garbage), "--json"])
    assert "Traceback" not in err
    assert code == 2, out + err
    assert "utf-8" in json.loads(out)["message"].lower()
