"""``librarian compose | explain | replay | violations | vitals`` through the real entry point."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from codelibrarian.tokens import get_tokenizer
from tests.helpers import run_cli, write_files
from tests.sources.repo_fixture import AS_OF, SECRETS, build_repo

TASK = "add a post method with retry backoff to HttpClient"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_repo(tmp_path_factory.mktemp("cli") / "repo")


def _count(text: str) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return get_tokenizer("gpt-4o").count(text)


def test_compose_json_then_explain_replay(repo: Path) -> None:
    args = ("compose", TASK, "-C", str(repo), "--budget", "1200", "--as-of", str(AS_OF))
    res = run_cli(*args, "--format", "json", "--files", "deploy/id_ed25519")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    for key in ("artifacts", "rejected", "totals", "cache_key", "decision_id", "text"):
        assert key in doc
    assert doc["tokens"] <= 1200 and _count(doc["text"]) <= 1200
    first = doc["artifacts"][0]
    assert set(first) >= {"id", "kind", "lane", "path", "lines", "tokens", "shrunk", "reason"}
    assert any(a["reason"] == "pinned" and a["kind"] == "local_diff" for a in doc["artifacts"])
    assert any(r["reason"] == "excluded_by_policy" for r in doc["rejected"])
    for secret in SECRETS:
        assert secret not in res.stdout
    decision = doc["decision_id"]
    # the ranking stack's stages, with counts and never a path
    assert [s["stage"] for s in doc["locate"]] == ["retrieval", "expansion", "scoring", "map"]
    assert "BM25" in doc["locate"][0]["summary"]
    assert "src/" not in json.dumps(doc["locate"])

    again = run_cli(*args, "--format", "json", "--files", "deploy/id_ed25519")
    assert json.loads(again.stdout)["cache_hit"] is True
    assert json.loads(again.stdout)["text"] == doc["text"]

    explained = run_cli("explain", decision, "-C", str(repo), "--json")
    assert explained.returncode == 0, explained.stderr
    data = json.loads(explained.stdout)
    assert data["excluded_by_policy"][0]["rule"] == "ssh_private_key"
    assert "deploy/" not in explained.stdout
    assert data["locate"] == doc["locate"]

    text = run_cli("explain", decision, "-C", str(repo))
    assert "excluded_by_policy" in text.stdout
    assert "locate scoring: " in text.stdout

    replayed = run_cli("replay", decision, "-C", str(repo))
    assert replayed.returncode == 0, replayed.stderr + replayed.stdout
    assert "identical" in replayed.stdout


def test_compose_markdown_to_file_with_explanation(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "pack.md"
    res = run_cli(
        "compose", TASK, "-C", str(repo), "--budget", "900", "--explain", "-o", str(out),
        "--as-of", str(AS_OF),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    pack = out.read_text(encoding="utf-8")
    assert "### src/app/http_client.py" in pack
    assert _count(pack.rstrip("\n")) <= 900
    assert "Lane breakdown" in res.stderr and "wrote" in res.stderr
    assert "Locate stages\n  retrieval: BM25 " in res.stderr


@pytest.mark.parametrize("fmt", ["xml", "plain"])
def test_compose_other_formats_and_dry_run(repo: Path, fmt: str) -> None:
    res = run_cli(
        "compose", TASK, "-C", str(repo), "--budget", "700", "--format", fmt,
        "--as-of", str(AS_OF),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert _count(res.stdout.rstrip("\n")) <= 700
    marker = "<artifact " if fmt == "xml" else "=== "
    assert marker in res.stdout
    dry = run_cli("compose", TASK, "-C", str(repo), "--dry-run", "--verbose", "--reveal")
    assert dry.returncode == 0 and dry.stdout == ""
    assert "selected:" in dry.stderr and "src/app/http_client.py" in dry.stderr


def test_usage_errors_exit_2(repo: Path, tmp_path: Path) -> None:
    diff = tmp_path / "x.diff"
    diff.write_text("", encoding="utf-8")
    res = run_cli("compose", TASK, "-C", str(repo), "--base", "HEAD", "--diff", str(diff))
    assert res.returncode == 2
    assert "exclude each other" in res.stderr
    bad = run_cli("compose", TASK, "-C", str(repo), "--format", "yaml")
    assert bad.returncode == 2
    missing = run_cli("explain", "dnope", "-C", str(repo), "--json")
    assert missing.returncode == 10 and json.loads(missing.stdout)["error"] == "not_found"


def test_violations_and_vitals(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "v")
    add = run_cli(
        "violations", "add", "--rule", "no-print", "--message", "print left in",
        "--file", "src/app/retry.py", "--line", "3", "--severity", "high",
        "--as-of", str(AS_OF), "-C", str(repo), "--json",
    )  # fmt: skip
    assert add.returncode == 0, add.stderr
    assert json.loads(add.stdout)["id"] == "v1"
    listed = run_cli("violations", "list", "-C", str(repo), "--json")
    assert [v["rule"] for v in json.loads(listed.stdout)] == ["no-print"]

    rec = run_cli("vitals", "record", "--tests", "fail", "-C", str(repo), "--json")
    assert json.loads(rec.stdout)["tests"] == "fail"
    bad = run_cli("vitals", "record", "--tests", "maybe", "-C", str(repo))
    assert bad.returncode == 2
    write_files(repo, {"src/app/cache.py": "x = 1\n" * 400})
    show = json.loads(run_cli("vitals", "show", "-C", str(repo), "--json").stdout)
    assert show["pressure"] == "high" and show["oxygen"] == 500 and show["tests"] == "fail"
