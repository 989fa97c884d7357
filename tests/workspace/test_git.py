"""Git helpers against real repositories, and the unified diff parser."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codelibrarian.errors import GitUnavailable, NotARepository, UsageError
from codelibrarian.workspace.git import (
    Commit,
    FileDiff,
    Hunk,
    diff_against,
    head_commit,
    is_git_repo,
    parse_unified_diff,
    recent_commits,
    working_diff,
)
from tests.helpers import commit_all, git, make_repo, write_files

TEN = "".join(f"line {i}\n" for i in range(1, 11))
TWENTY = "".join(f"line {i}\n" for i in range(1, 21))


def _by_path(diffs: tuple[FileDiff, ...]) -> dict[str, FileDiff]:
    return {d.path: d for d in diffs}


# ---------------------------------------------------------------- basics


def test_is_git_repo_and_head(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not is_git_repo(plain)
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"}, commit=False)
    assert is_git_repo(repo)
    assert head_commit(repo) is None
    sha = commit_all(repo, "first")
    assert head_commit(repo) == sha
    assert len(sha) == 40


def test_not_a_repository_error_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NotARepository) as info:
        working_diff(tmp_path)
    assert "git init" in str(info.value)
    with pytest.raises(NotARepository):
        head_commit(tmp_path)
    with pytest.raises(NotARepository):
        recent_commits(tmp_path)


def test_git_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert not is_git_repo(repo)
    with pytest.raises(GitUnavailable) as info:
        working_diff(repo)
    assert "Install git" in str(info.value)


# ---------------------------------------------------------------- working diff


def test_working_diff_combines_staged_and_unstaged(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "r", {"a.py": TWENTY, "gone.py": "bye\n", "old_name.py": "stay\n" * 5}
    )
    # staged edit of line 2, unstaged deletion of line 18: both appear, against HEAD
    write_files(repo, {"a.py": TWENTY.replace("line 2\n", "line two\n")})
    git(repo, "add", "a.py")
    write_files(repo, {"a.py": TWENTY.replace("line 2\n", "line two\n").replace("line 18\n", "")})
    write_files(repo, {"new.py": "fresh\n"})
    git(repo, "add", "new.py")
    (repo / "gone.py").unlink()
    git(repo, "mv", "old_name.py", "new_name.py")
    write_files(repo, {"untracked.py": "not in the diff\n"})

    diffs = working_diff(repo)

    assert [d.path for d in diffs] == ["a.py", "gone.py", "new.py", "new_name.py"]
    by = _by_path(diffs)
    a = by["a.py"]
    assert a.status == "modified"
    assert a.old_path is None
    assert [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in a.hunks] == [
        (1, 5, 1, 5),
        (15, 6, 15, 5),
    ]
    assert "-line 2" in a.hunks[0].lines
    assert "+line two" in a.hunks[0].lines
    assert "-line 18" in a.hunks[1].lines
    assert a.hunks[0].added() == (2,)
    assert by["gone.py"].status == "deleted"
    assert by["gone.py"].hunks[0].lines == ("-bye",)
    assert by["new.py"].status == "added"
    assert by["new.py"].hunks[0].lines == ("+fresh",)
    assert by["new_name.py"].status == "renamed"
    assert by["new_name.py"].old_path == "old_name.py"
    assert by["new_name.py"].hunks == ()


def test_working_diff_in_repo_without_commits_is_against_empty_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "one\ntwo\n", "b.py": "b\n"}, commit=False)
    git(repo, "add", "a.py")
    diffs = working_diff(repo)
    assert [(d.path, d.status) for d in diffs] == [("a.py", "added")]
    assert diffs[0].hunks[0].lines == ("+one", "+two")


def test_working_diff_clean_repo_is_empty(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"})
    assert working_diff(repo) == ()


def test_working_diff_ignores_user_diff_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"})
    for key, value in [
        ("diff.noprefix", "true"),
        ("diff.mnemonicPrefix", "true"),
        ("color.ui", "always"),
        ("diff.renames", "false"),
        ("core.quotePath", "true"),
    ]:
        git(repo, "config", key, value)
    write_files(repo, {"a.py": "b\n", "ünï.py": "u\n"})
    git(repo, "add", "ünï.py")
    diffs = working_diff(repo)
    assert [(d.path, d.status) for d in diffs] == [("a.py", "modified"), ("ünï.py", "added")]


def test_binary_change_is_flagged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"img.bin": b"\x00\x01\x02"})
    write_files(repo, {"img.bin": b"\x00\x01\x03"})
    (diff,) = working_diff(repo)
    assert diff.binary
    assert diff.hunks == ()
    assert diff.status == "modified"


def test_diff_text_round_trips_and_applies(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": TEN, "b.py": "x\n"})
    write_files(repo, {"a.py": TEN.replace("line 5\n", "five\n"), "c.py": "new\n"})
    git(repo, "add", "c.py")
    diffs = working_diff(repo)
    for d in diffs:
        assert parse_unified_diff(d.text()) == (d,)
    patch = "".join(d.text() for d in diffs)
    git(repo, "stash", "-u")  # back to HEAD, then the reconstructed patch must apply
    (repo / "p.diff").write_text(patch, encoding="utf-8")
    git(repo, "apply", "--check", "p.diff")


# ---------------------------------------------------------------- diff against a base


def test_diff_against_uses_the_merge_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n", "b.py": "b\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write_files(repo, {"a.py": "a changed on feature\n"})
    commit_all(repo, "feature work")
    write_files(repo, {"wip.py": "uncommitted\n"})
    git(repo, "add", "wip.py")
    # main moves on after the branch point; its change must not show up
    git(repo, "checkout", "-q", "main")
    git(repo, "stash", "-q")
    write_files(repo, {"b.py": "b changed on main\n"})
    commit_all(repo, "main work", date="2026-01-03T00:00:00+00:00")
    git(repo, "checkout", "-q", "feature")
    git(repo, "stash", "pop", "-q")

    diffs = diff_against(repo, "main")
    assert [(d.path, d.status) for d in diffs] == [("a.py", "modified"), ("wip.py", "added")]


def test_diff_against_unknown_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"})
    with pytest.raises(UsageError, match="unknown revision"):
        diff_against(repo, "no-such-branch")
    with pytest.raises(UsageError, match="invalid base"):
        diff_against(repo, "--output=/tmp/x")


def test_diff_against_rename(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"src/module.py": "content\n" * 10})
    base = head_commit(repo)
    assert base is not None
    git(repo, "mv", "src/module.py", "src/renamed.py")
    commit_all(repo, "rename")
    (diff,) = diff_against(repo, base)
    assert (diff.path, diff.old_path, diff.status) == ("src/renamed.py", "src/module.py", "renamed")


# ---------------------------------------------------------------- parse_unified_diff

PLAIN = """\
--- old/calc.py\t2026-01-01 10:00:00.000000000 +0000
+++ new/calc.py\t2026-01-02 10:00:00.000000000 +0000
@@ -1,4 +1,4 @@
 def add(a, b):
-    return a - b
+    return a + b

 # end
@@ -10 +10 @@ class X:
-x = 1
\\ No newline at end of file
+x = 2
\\ No newline at end of file
"""

SQL_DASHES = """\
diff --git a/q.sql b/q.sql
index 1111111..2222222 100644
--- a/q.sql
+++ b/q.sql
@@ -1,3 +1,2 @@
--- a comment that starts with two dashes
-++ odd but legal
 SELECT 1;
+SELECT 2;
diff --git a/z.txt b/z.txt
deleted file mode 100644
index 3333333..0000000
--- a/z.txt
+++ /dev/null
@@ -1 +0,0 @@
-z
"""

QUOTED = """\
diff --git "a/we\\"ird\\tname.py" "b/we\\"ird\\tname.py"
index 1111111..2222222 100644
--- "a/we\\"ird\\tname.py"
+++ "b/we\\"ird\\tname.py"
@@ -1 +1 @@
-a
+b
diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"
new file mode 100644
index 0000000..e69de29
diff --git a/pic.png b/pic.png
index 1111111..2222222 100644
Binary files a/pic.png and b/pic.png differ
diff --git a/space name.py b/space name.py
old mode 100644
new mode 100755
"""


def test_parse_plain_diff_u() -> None:
    (diff,) = parse_unified_diff(PLAIN)
    assert diff.path == "new/calc.py"
    assert diff.old_path == "old/calc.py"
    assert diff.status == "renamed"
    first, second = diff.hunks
    assert (first.old_start, first.old_lines, first.new_start, first.new_lines) == (1, 4, 1, 4)
    assert first.lines[2] == "+    return a + b"
    assert first.lines[3] == " "  # a blank context line whose space was stripped
    assert (second.old_start, second.old_lines, second.new_lines) == (10, 1, 1)
    assert second.header == "@@ -10 +10 @@ class X:"
    assert second.lines == (
        "-x = 1",
        "\\ No newline at end of file",
        "+x = 2",
        "\\ No newline at end of file",
    )


def test_parse_counts_hunk_lines_so_dashes_in_content_are_not_headers() -> None:
    q, z = parse_unified_diff(SQL_DASHES)
    assert (q.path, q.status) == ("q.sql", "modified")
    assert q.hunks[0].lines == (
        "--- a comment that starts with two dashes",
        "-++ odd but legal",
        " SELECT 1;",
        "+SELECT 2;",
    )
    assert (z.path, z.status, z.hunks[0].lines) == ("z.txt", "deleted", ("-z",))


def test_parse_quoted_paths_binary_and_mode_only() -> None:
    weird, cafe, pic, space = parse_unified_diff(QUOTED)
    assert weird.path == 'we"ird\tname.py'
    assert weird.status == "modified"
    assert (cafe.path, cafe.status, cafe.hunks) == ("café.py", "added", ())
    assert (pic.path, pic.binary, pic.status) == ("pic.png", True, "modified")
    assert (space.path, space.status) == ("space name.py", "modified")


def test_parse_format_patch_email_and_garbage() -> None:
    email = (
        "From 0000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n\n---\n a.py | 2 +-\n\n"
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n-- \n2.39.5\n"
    )
    (diff,) = parse_unified_diff(email)
    assert diff.path == "a.py"
    assert diff.hunks[0].lines == ("-a", "+b")
    assert parse_unified_diff("not a diff at all\n") == ()
    assert parse_unified_diff("") == ()


def test_hunk_added_lines() -> None:
    hunk = Hunk(5, 3, 5, 4, "@@ -5,3 +5,4 @@", (" a", "+b", "-c", "+d", " e"))
    assert hunk.added() == (6, 7)


def test_parse_matches_git_apply_numstat(tmp_path: Path) -> None:
    """Added/removed counts from our parse agree with git's own numstat."""
    repo = make_repo(tmp_path / "r", {"a.py": TEN * 3, "b.py": "b\n"})
    write_files(repo, {"a.py": (TEN * 3).replace("line 3\n", "x\ny\n"), "b.py": "c\nd\n"})
    patch = git(repo, "diff")
    numstat = git(repo, "diff", "--numstat").splitlines()
    expected = {
        line.split("\t")[2]: (int(line.split("\t")[0]), int(line.split("\t")[1]))
        for line in numstat
    }
    got = {
        d.path: (
            sum(1 for h in d.hunks for ln in h.lines if ln.startswith("+")),
            sum(1 for h in d.hunks for ln in h.lines if ln.startswith("-")),
        )
        for d in parse_unified_diff(patch)
    }
    assert got == expected


# ---------------------------------------------------------------- recent commits


def test_recent_commits_renames_merges_and_odd_paths(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "r", {"a.py": "a\n", "b.py": "b\n"}, date="2026-01-01T00:00:00+00:00"
    )
    git(repo, "mv", "a.py", "moved.py")
    commit_all(repo, "rename a", date="2026-01-02T00:00:00+00:00")
    git(repo, "checkout", "-q", "-b", "side")
    odd = 'odd "name"\twith\nnewline.py'
    write_files(repo, {odd: "o\n"})
    commit_all(repo, "odd path", date="2026-01-03T00:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"b.py": "b2\n"})
    commit_all(repo, "edit b", date="2026-01-04T00:00:00+00:00")
    git(
        repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", date="2026-01-05T00:00:00+00:00"
    )

    commits = recent_commits(repo)

    assert [(c.subject, c.files) for c in commits] == [
        ("merge side", ()),
        ("edit b", ("b.py",)),
        ("odd path", (odd,)),
        ("rename a", ("moved.py",)),
        ("initial", ("a.py", "b.py")),
    ]
    assert commits[-1].timestamp == 1767225600  # 2026-01-01T00:00:00Z
    assert all(len(c.sha) == 40 for c in commits)
    assert isinstance(commits[0], Commit)

    assert [c.subject for c in recent_commits(repo, path="b.py")] == ["edit b", "initial"]
    assert [c.subject for c in recent_commits(repo, limit=2)] == ["merge side", "edit b"]
    assert recent_commits(repo, limit=0) == ()


def test_recent_commits_empty_repo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"}, commit=False)
    assert recent_commits(repo) == ()


def test_subject_with_separators(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a\n"}, message="fix: a | b ; c — ünïcode")
    (commit,) = recent_commits(repo)
    assert commit.subject == "fix: a | b ; c — ünïcode"
    assert (
        commit.sha
        == subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )


def test_recent_commits_path_is_literal_not_a_glob(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a[1].py": "a\n", "b.py": "b\n"})
    write_files(repo, {"b.py": "b2\n"})
    commit_all(repo, "edit b")
    assert [c.subject for c in recent_commits(repo, path="a[1].py")] == ["initial"]
    assert recent_commits(repo, path="*.py") == ()
