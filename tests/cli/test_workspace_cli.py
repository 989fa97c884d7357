"""`librarian init | doctor | scan | tokens` through the real entry point."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo, run_cli, write_files

FILES: dict[str, str | bytes] = {
    "src/app.py": "def main() -> None:\n    print('hello world')\n",
    "src/util.py": "X = 1\n",
    "docs/guide.md": "# Guide\n\nSome words here.\n",
    "data.bin": b"\x00\x01binary",
    "README.md": "# Demo\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("cli") / "repo", FILES)


def _json(*args: str, code: int = 0) -> dict[str, object]:
    result = run_cli(*args)
    assert result.returncode == code, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_init_creates_state_once(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n"})
    first = _json("init", "--json", "--repo", str(root))
    assert first["created"] is True
    assert first["config"] == "defaults"
    secret = root / ".librarian" / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    before = secret.read_bytes()
    second = _json("init", "--json", "--repo", str(root))
    assert second["created"] is False
    assert secret.read_bytes() == before
    text = run_cli("init", "--repo", str(root))
    assert text.returncode == 0
    assert "Already set up" in text.stdout


def test_doctor_json_has_every_section(repo: Path) -> None:
    data = _json("doctor", "--json", "--repo", str(repo))
    assert data["ok"] is True
    python = data["python"]
    assert isinstance(python, dict)
    assert python["ok"] is True
    packages = data["packages"]
    assert isinstance(packages, dict)
    for name in ("bpe-openai", "pydantic", "typer", "tree-sitter-language-pack", "pathspec"):
        assert packages[name], name
    tokenizer = data["tokenizer"]
    assert isinstance(tokenizer, dict)
    encodings = tokenizer["encodings"]
    assert isinstance(encodings, dict)
    assert set(encodings) == {"o200k_base", "cl100k_base"}
    for info in encodings.values():
        assert info["ok"] is True
        assert info["sample_tokens"] > 0
    grammars = data["grammars"]
    assert isinstance(grammars, dict)
    assert len(grammars) == 13
    assert all(grammars.values())
    sqlite = data["sqlite"]
    assert isinstance(sqlite, dict)
    assert sqlite["fts5"] is True
    assert data["config"] == {
        "ok": True,
        "file": None,
        "total_tokens": 8000,
        "model": "gpt-4o",
    }
    git = data["git"]
    assert isinstance(git, dict)
    assert git["available"] is True
    assert git["is_repo"] is True
    assert isinstance(git["head"], str)
    state = data["state"]
    assert isinstance(state, dict)
    assert "exists" in state
    problems = data["problems"]
    assert isinstance(problems, list)
    assert all(p["level"] == "warning" for p in problems)


def test_doctor_text_mentions_each_check(repo: Path) -> None:
    result = run_cli("doctor", "--repo", str(repo))
    assert result.returncode == 0
    for word in ("Python", "Tokenizer", "Grammars", "SQLite", "FTS5", "Config", "Git", "State"):
        assert word in result.stdout


def test_doctor_reports_a_world_readable_secret(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n"})
    assert run_cli("init", "--repo", str(root)).returncode == 0
    (root / ".librarian" / "secret").chmod(0o644)
    result = run_cli("doctor", "--json", "--repo", str(root))
    assert result.returncode == 1
    data = json.loads(result.stdout)
    (problem,) = [p for p in data["problems"] if p["check"] == "state" and p["level"] == "error"]
    assert "chmod 600" in problem["fix"]


def test_scan_json(repo: Path) -> None:
    data = _json("scan", "--json", "--repo", str(repo))
    assert data["is_git"] is True
    assert data["files"] == 4
    assert data["total_bytes"] == sum(
        len(v) for k, v in FILES.items() if k != "data.bin" and isinstance(v, str)
    )
    assert data["skipped"] == {"binary": 1}
    assert data["skipped_files"] == [{"path": "data.bin", "reason": "binary"}]
    by_ext = data["by_extension"]
    assert isinstance(by_ext, dict)
    assert by_ext[".py"] == {"files": 2, "bytes": len(FILES["src/app.py"]) + 6}
    by_lang = data["by_language"]
    assert isinstance(by_lang, dict)
    assert sum(row["files"] for row in by_lang.values()) == 4


def test_scan_text(repo: Path) -> None:
    result = run_cli("scan", "--repo", str(repo))
    assert result.returncode == 0
    assert "4 files" in result.stdout
    assert "binary 1" in result.stdout


def test_scan_plain_folder(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.py": "a\n", ".gitignore": "*.log\n", "x.log": "no\n"})
    data = _json("scan", "--json", "--repo", str(tmp_path))
    assert data["is_git"] is False
    assert data["files"] == 2


def test_tokens_json_matches_the_tokenizer(repo: Path) -> None:
    data = _json("tokens", "--json", "--repo", str(repo))
    tok = get_tokenizer("gpt-4o")
    files = data["files"]
    assert isinstance(files, list)
    expected = {
        path: tok.count(content) for path, content in FILES.items() if isinstance(content, str)
    }
    assert {f["path"]: f["tokens"] for f in files} == expected
    assert data["total_tokens"] == sum(expected.values())
    assert data["encoding"] == "o200k_base"
    assert data["safety_factor_permille"] == 1000
    counts = [(-f["tokens"], f["path"]) for f in files]
    assert counts == sorted(counts)  # largest first, ties by path


def test_tokens_filters_and_model(repo: Path) -> None:
    data = _json("tokens", "src", "--json", "--model", "claude-opus-4-7", "--repo", str(repo))
    files = data["files"]
    assert isinstance(files, list)
    assert sorted(f["path"] for f in files) == ["src/app.py", "src/util.py"]
    assert data["safety_factor_permille"] == 1800
    scaled = get_tokenizer("claude-opus-4-7")
    assert files[0]["tokens"] == scaled.count(str(FILES["src/app.py"]))


def test_tokens_glob_matches_whole_paths(repo: Path) -> None:
    # globs match the whole repo-relative path and "*" crosses folders (fnmatch)
    data = _json("tokens", "*.md", "--json", "--repo", str(repo))
    files = data["files"]
    assert isinstance(files, list)
    assert sorted(f["path"] for f in files) == ["README.md", "docs/guide.md"]
    only_docs = _json("tokens", "docs/*", "--json", "--repo", str(repo))
    assert only_docs["file_count"] == 1


def test_tokens_path_relative_to_cwd(repo: Path) -> None:
    result = run_cli("tokens", "util.py", "--json", "--repo", str(repo), cwd=repo / "src")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [f["path"] for f in data["files"]] == ["src/util.py"]


def test_tokens_path_outside_the_repo(repo: Path) -> None:
    result = run_cli("tokens", "../..", "--repo", str(repo), cwd=repo / "src")
    assert result.returncode == 2
    assert "outside the repository" in result.stderr


def test_tokens_text_output(repo: Path) -> None:
    result = run_cli("tokens", "--top", "1", "--repo", str(repo))
    assert result.returncode == 0
    assert "o200k_base" in result.stdout
    assert "exact" in result.stdout
    assert "... 3 more files" in result.stdout
    assert "total" in result.stdout


def test_tokens_no_match_is_a_usage_error(repo: Path) -> None:
    result = run_cli("tokens", "nothing/here", "--repo", str(repo))
    assert result.returncode == 2
    assert "no listed file matches" in result.stderr
    data = json.loads(run_cli("tokens", "nothing", "--json", "--repo", str(repo)).stdout)
    assert data == {
        "ok": False,
        "error": "usage_error",
        "message": "no listed file matches nothing.",
        "hint": data["hint"],
        "exit_code": 2,
    }


def test_missing_repo_folder(tmp_path: Path) -> None:
    result = run_cli("scan", "--json", "--repo", str(tmp_path / "absent"))
    assert result.returncode == 1
    assert json.loads(result.stdout)["ok"] is False
