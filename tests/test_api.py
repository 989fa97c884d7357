"""End-to-end tests of the Librarian facade on real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codelibrarian.api import Librarian, shape_budget
from codelibrarian.config import BudgetConfig
from codelibrarian.errors import NotFound, UsageError
from codelibrarian.tokens import get_tokenizer
from tests.helpers import git, write_files
from tests.sources.repo_fixture import AS_OF, PRIVATE_KEY, SECRETS, build_repo, warm_tokenizers

TASK = "add a post method with retry backoff to HttpClient; read AWS settings region"


@pytest.fixture(autouse=True, scope="module")
def _warm() -> None:
    warm_tokenizers()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = build_repo(tmp_path / "repo")
    # a new private key file staged in the change in progress
    write_files(root, {"deploy/id_rsa": PRIVATE_KEY})
    git(root, "add", "deploy/id_rsa")
    return root


@pytest.fixture
def lib(repo: Path) -> Librarian:
    with Librarian(repo) as librarian:
        yield librarian


def test_change_in_progress_is_pinned_and_shown(lib: Librarian) -> None:
    result = lib.compose(TASK, budget=3000, as_of=AS_OF)
    pinned = [a for a in result.artifacts if a.reason == "pinned"]
    assert [a.path for a in pinned] == ["src/app/http_client.py"]
    assert all(a.kind == "local_diff" and a.lane == "local" for a in pinned)
    assert '+        return self._send("POST", path)' in result.text
    assert "src/app/http_client.py" in result.text


def test_rule_files_land_in_the_rules_lane(lib: Librarian) -> None:
    result = lib.compose(TASK, budget=6000, as_of=AS_OF)
    rule_paths = {a.path for a in result.artifacts if a.lane == "rules"}
    assert {"AGENTS.md", ".cursor/rules/http.mdc"} <= rule_paths
    assert all(a.kind == "rule_doc" for a in result.artifacts if a.lane == "rules")
    # rule documents are not repeated as retrieved code
    assert not any(a.lane == "retrieved" and a.path == "AGENTS.md" for a in result.artifacts)


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json", "plain"])
def test_secrets_never_appear_and_decisions_say_why(lib: Librarian, fmt: str) -> None:
    result = lib.compose(
        TASK, budget=4000, as_of=AS_OF, fmt=fmt, files=("deploy/id_ed25519", "config/settings.py")
    )
    document = json.dumps(result.to_dict()) if fmt == "json" else result.text
    for secret in SECRETS:
        assert secret not in document
    assert "PRIVATE KEY" not in result.text
    # the config file is useful: shown, with its secrets redacted span by span
    assert "config/settings.py" in result.files
    assert "[REDACTED:aws_access_key_id]" in result.text
    assert result.redactions and all(r.reason == "secret_redacted" for r in result.redactions)
    # the key files are excluded by policy, with the rule name
    excluded = [r for r in result.rejected if r.reason == "excluded_by_policy"]
    assert len(excluded) >= 2
    assert all("ssh_private_key" in r.detail for r in excluded)
    # the decision record says why, with ids and counts only
    assert result.decision_id is not None
    explained = lib.explain(result.decision_id)
    assert {e["rule"] for e in explained["excluded_by_policy"]} == {"ssh_private_key"}
    assert sum(r["spans"] for r in explained["redactions"]) >= 2
    record_text = json.dumps(lib.decision(result.decision_id))
    for needle in (*SECRETS, "deploy/", "config/settings.py", "id_rsa"):
        assert needle not in record_text


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json", "plain"])
@pytest.mark.parametrize("budget", [300, 800, 2000, 8000])
def test_pack_never_exceeds_the_budget(lib: Librarian, fmt: str, budget: int) -> None:
    result = lib.compose(TASK, budget=budget, as_of=AS_OF, fmt=fmt)  # type: ignore[arg-type]
    assert get_tokenizer("gpt-4o").count(result.text) <= budget
    assert result.tokens <= budget


def test_budget_of_a_claude_model_counts_with_its_safety_factor(lib: Librarian) -> None:
    result = lib.compose(TASK, budget=1500, as_of=AS_OF, model="claude-sonnet-4")
    assert get_tokenizer("claude-sonnet-4").count(result.text) <= 1500


def test_same_trigger_twice_is_identical_and_a_cache_hit(repo: Path) -> None:
    with Librarian(repo) as first:
        a = first.compose(TASK, budget=2500, as_of=AS_OF)
    with Librarian(repo) as second:  # a new process would see the disk cache too
        b = second.compose(TASK, budget=2500, as_of=AS_OF)
        c = second.compose(TASK, budget=2500, as_of=AS_OF)
    assert not a.cache_hit
    assert b.cache_hit and c.cache_hit
    assert a.text == b.text == c.text
    assert a.cache_key == b.cache_key
    assert a.decision_id == b.decision_id


def test_no_cache_gives_the_same_bytes(lib: Librarian) -> None:
    a = lib.compose(TASK, budget=2500, as_of=AS_OF, use_cache=False)
    b = lib.compose(TASK, budget=2500, as_of=AS_OF, use_cache=False)
    assert not a.cache_hit and not b.cache_hit
    assert a.text == b.text


def test_replay_identical_then_inputs_changed(repo: Path) -> None:
    with Librarian(repo) as lib:
        result = lib.compose(TASK, budget=2500, as_of=AS_OF)
        assert result.decision_id is not None
        assert lib.replay(result.decision_id).status == "identical"
    write_files(repo, {"src/app/retry.py": "def backoff(attempt: int) -> float:\n    return 1.0\n"})
    with Librarian(repo) as lib:
        report = lib.replay(result.decision_id)
    assert report.status == "inputs_changed"
    assert report.differences


def test_replay_of_an_unknown_decision_is_not_found(lib: Librarian) -> None:
    with pytest.raises(NotFound):
        lib.replay("d0000000000000000000000")


def test_diff_text_is_the_current_change(repo: Path) -> None:
    git(repo, "checkout", "--", "src/app/http_client.py")
    diff = (
        "diff --git a/src/app/cache.py b/src/app/cache.py\n"
        "--- a/src/app/cache.py\n+++ b/src/app/cache.py\n"
        "@@ -1,4 +1,5 @@\n class LruCache:\n+    # evict the oldest entry first\n"
        "     def __init__(self, size: int) -> None:\n         self.size = size\n"
        "         self.items: dict[str, str] = {}\n"
    )
    with Librarian(repo) as lib:
        result = lib.compose(
            "evict entries from LruCache", budget=2000, as_of=AS_OF, diff_text=diff
        )
    pinned = [a for a in result.artifacts if a.reason == "pinned"]
    assert [a.path for a in pinned] == ["src/app/cache.py"]
    assert "+    # evict the oldest entry first" in result.text


def test_base_and_diff_exclude_each_other(lib: Librarian) -> None:
    with pytest.raises(UsageError):
        lib.compose(TASK, base="HEAD", diff_text="", as_of=AS_OF)


def test_violations_are_must_include(lib: Librarian) -> None:
    v = lib.add_violation(
        "no-bare-retry", "retry without backoff", file="src/app/http_client.py", as_of=AS_OF - 60
    )
    result = lib.compose(TASK, budget=2500, as_of=AS_OF)
    chosen = [a for a in result.artifacts if a.kind == "violation"]
    assert len(chosen) == 1 and chosen[0].reason == "must_include"
    assert "no-bare-retry" in result.text
    assert lib.violations()[0].id == v.id


def test_history_lane_offers_learnings_and_sessions(lib: Librarian) -> None:
    lib.record_learning("touching HttpClient retries", "keep backoff exponential", as_of=AS_OF - 10)
    lib.record_session("s1", "added get() with retries to HttpClient", as_of=AS_OF - 5)
    result = lib.compose(TASK, budget=8000, as_of=AS_OF)
    kinds = {a.kind for a in result.artifacts if a.lane == "history"}
    assert kinds == {"learning", "session_history"}
    assert "keep backoff exponential" in result.text


def test_vitals_are_part_of_the_cache_key(lib: Librarian) -> None:
    a = lib.compose(TASK, budget=2500, as_of=AS_OF)
    lib.record_vitals(tests="fail", lint="fail", as_of=AS_OF)
    b = lib.compose(TASK, budget=2500, as_of=AS_OF)
    assert a.cache_key != b.cache_key and not b.cache_hit
    assert b.vitals.oxygen == 0 and a.vitals.oxygen == 1000


def test_shape_budget_scales_defaults_and_lends_unused_room() -> None:
    shaped = shape_budget(
        BudgetConfig(), 2000, {"local": 100, "retrieved": 5000}, scale_defaults=True
    )
    assert shaped.total_tokens == 2000
    assert shaped.lanes["local"].min == 250 and shaped.lanes["rules"].min == 125
    # policy/rules/history have nothing: their room goes to retrieved and structure
    assert shaped.lanes["retrieved"].max == 2000 - 100  # all the room local leaves
    assert shaped.lanes["structure"].max == 375  # structure has nothing more to give
    assert shaped.lanes["retrieved"].max <= 2000


def test_same_librarian_sees_edits_made_between_compositions(repo: Path) -> None:
    git(repo, "stash", "-q")  # a clean work tree (the fixture's change is set aside)
    with Librarian(repo) as lib:
        clean = lib.compose(TASK, budget=3000, as_of=AS_OF)
        assert not any(a.kind == "local_diff" for a in clean.artifacts)
        write_files(
            repo, {"src/app/retry.py": "def backoff(attempt: int) -> float:\n    return 9.0\n"}
        )
        dirty = lib.compose(TASK, budget=3000, as_of=AS_OF)
    pinned = [a.path for a in dirty.artifacts if a.kind == "local_diff"]
    assert pinned == ["src/app/retry.py"]
    assert "+    return 9.0" in dirty.text
