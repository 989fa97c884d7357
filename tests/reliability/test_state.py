"""The state folder is private, holds no raw secret, repairs its modes and stays bounded.

Item 3: ``git diff > d.diff; librarian compose x --diff d.diff`` stored the raw diff,
``.env`` secrets included, in a world-readable sidecar. Item 6: ``.librarian`` grew
without bound (cache and decisions). Both through the real entry point.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from tests.helpers import git, make_repo, run_cli, write_files
from tests.sources.repo_fixture import warm_tokenizers

pytestmark = pytest.mark.reliability

AWS = "AKIA" + "Q7R2M4XW9K3B5N8T"
STRIPE = "sk_live_" + "9fKq2LwX8vRt5YzB3nMp7HcD"
FILES = {
    "app/settings.py": 'DEBUG = False\nREGION = "eu-west-1"\n',
    "app/pay.py": "def charge(amount):\n    return amount\n",
    ".env": "DEBUG=true\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "app", FILES)
    write_files(
        root,
        {
            ".env": f"DEBUG=true\nAWS_ACCESS_KEY_ID={AWS}\nPASSWORD=hunter2-but-longer-x9\n",
            "app/pay.py": f'STRIPE_KEY = "{STRIPE}"\n\n\ndef charge(amount):\n    return amount\n',
        },
    )
    return root


def _modes(state: Path) -> dict[str, int]:
    return {
        str(p.relative_to(state)): stat.S_IMODE(p.lstat().st_mode)
        for p in [state, *state.rglob("*")]
    }


def test_a_diff_with_secrets_is_stored_redacted_and_private(repo: Path) -> None:
    diff = repo.parent / "d.diff"
    diff.write_text(git(repo, "diff"), encoding="utf-8")
    assert AWS in diff.read_text(encoding="utf-8")
    result = run_cli("compose", "charge the card", "--diff", str(diff), "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    decision = json.loads(result.stdout)["decision_id"]
    state = repo / ".librarian"
    sidecar = state / "decisions" / "private" / f"{decision}.json"
    stored = sidecar.read_text(encoding="utf-8")
    assert AWS not in stored and STRIPE not in stored and "hunter2" not in stored
    diff_text = json.loads(stored)["trigger"]["change"]["diff_text"]
    assert "[REDACTED:sensitive_file]" in diff_text and "[REDACTED:stripe_key]" in diff_text
    for rel, mode in _modes(state).items():
        is_dir = (state / rel).is_dir() if rel != "." else True
        assert mode == (0o700 if is_dir else 0o600), f"{rel}: {mode:04o}"
    # the redacted diff still replays to the same decision
    replay = run_cli("replay", decision, "--json", cwd=repo)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert json.loads(replay.stdout)["status"] == "identical"


def test_an_open_state_folder_is_made_private(repo: Path) -> None:
    assert run_cli("compose", "charge", cwd=repo).returncode == 0
    state = repo / ".librarian"
    for path in [state, *state.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    assert run_cli("compose", "charge again", cwd=repo).returncode == 0
    loose = {rel: f"{m:04o}" for rel, m in _modes(state).items() if m & 0o077}
    assert loose == {}


def test_doctor_reports_modes_and_init_repairs_them(repo: Path) -> None:
    assert run_cli("compose", "charge", cwd=repo).returncode == 0
    state = repo / ".librarian"
    (state / "decisions").chmod(0o700)
    for path in state.rglob("*.json*"):
        path.chmod(0o644)
    report = json.loads(run_cli("doctor", "--json", cwd=repo).stdout)
    assert report["state_size"]["not_private"] > 0
    assert any("readable by others" in p["message"] for p in report["problems"])
    assert run_cli("init", cwd=repo).returncode == 0
    assert (
        json.loads(run_cli("doctor", "--json", cwd=repo).stdout)["state_size"]["not_private"] == 0
    )


# --------------------------------------------------------------------- bounds


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_cache_and_decisions_stay_under_their_caps(repo: Path) -> None:
    warm_tokenizers()
    (repo / "librarian.toml").write_text(
        "[state]\ncache_max_mb = 1\ncache_max_entries = 5\ndecisions_max_mb = 1\n",
        encoding="utf-8",
    )
    # grow the workspace so each record and cache entry is sizeable
    write_files(
        repo,
        {
            f"app/mod{i}.py": "".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(40))
            for i in range(60)
        },
    )
    mib = 1024 * 1024
    with Librarian(repo) as lib:
        for i in range(60):
            lib.compose(
                f"change function f{i}_3 in module {i}", budget=6000, as_of=1_767_225_600 + i
            )
            state = lib.state
            assert len(list(state.cache_dir.glob("*.json"))) <= 5
            assert _size(state.cache_dir) <= mib
            assert _size(state.decisions_dir) <= mib
        decisions = sum(1 for _ in state.decisions_dir.glob("*.jsonl"))
    assert decisions >= 1
    report = json.loads(run_cli("doctor", "--json", cwd=repo).stdout)
    size = report["state_size"]
    assert size["cache"]["max_bytes"] == mib and size["cache"]["max_entries"] == 5
    assert size["decisions"]["bytes"] <= mib
    assert not any("over its cap" in p["message"] for p in report["problems"])


def test_old_decisions_are_evicted_by_age(repo: Path) -> None:
    (repo / "librarian.toml").write_text("[state]\ndecisions_max_age_days = 7\n", encoding="utf-8")
    with Librarian(repo) as lib:
        old = lib.compose("charge", as_of=1_767_225_600)
        assert old.decision_id is not None
        sidecar = lib.state.decisions_dir / "private" / f"{old.decision_id}.json"
        long_ago = time.time() - 30 * 86_400
        for path in lib.state.decisions_dir.rglob("*"):
            if path.is_file():
                os.utime(path, (long_ago, long_ago))
        new = lib.compose("charge the card now", as_of=1_767_225_700)
        assert not sidecar.exists()
        assert (lib.state.decisions_dir / "private" / f"{new.decision_id}.json").exists()
        with pytest.raises(KeyError):
            lib.explain(old.decision_id)
        assert lib.explain(str(new.decision_id))["decision_id"] == new.decision_id


def test_a_rebuilt_index_and_the_parse_cache_are_private(repo: Path, tmp_path: Path) -> None:
    """A damaged index is discarded and made anew: the new files are 0600 like the old
    (the user's umask would give 0644), and so is the per-user parse cache."""
    cache = tmp_path / "user-cache"
    env = {"LIBRARIAN_CACHE_DIR": str(cache)}
    assert run_cli("index", "--json", cwd=repo, env=env).returncode == 0
    state = repo / ".librarian"
    for suffix in ("-wal", "-shm"):
        (state / f"index.db{suffix}").unlink(missing_ok=True)
    (state / "index.db").unlink()
    (state / "index.db").write_bytes(os.urandom(64 * 1024))  # as a user's tool would: 0644
    (state / "index.db").chmod(0o644)
    result = run_cli("index", "--json", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rebuilt"] is True
    loose = {rel: f"{m:04o}" for rel, m in _modes(state).items() if m & 0o077}
    assert loose == {}
    assert cache.is_dir()
    loose_cache = {rel: f"{m:04o}" for rel, m in _modes(cache).items() if m & 0o077}
    assert loose_cache == {}


def test_an_index_seeded_from_a_sibling_checkout_is_private_and_leaves_nothing(
    repo: Path, tmp_path: Path
) -> None:
    """A second checkout's index is copied from the first's: the copy is 0600 from the
    start and its temporary files do not stay behind."""
    env = {"LIBRARIAN_CACHE_DIR": str(tmp_path / "user-cache")}
    assert run_cli("index", "--json", cwd=repo, env=env).returncode == 0
    second = tmp_path / "second"
    git(repo, "clone", "-q", str(repo), str(second))
    result = run_cli("index", "--json", cwd=second, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["seeded"] is True, result.stdout
    state = second / ".librarian"
    assert sorted(p.name for p in state.glob(".index.db.seed*")) == []
    loose = {rel: f"{m:04o}" for rel, m in _modes(state).items() if m & 0o077}
    assert loose == {}
