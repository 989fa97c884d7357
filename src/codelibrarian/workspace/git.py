"""Git helpers, through the ``git`` executable.

Everything here shells out to ``git`` with options that neutralise user
configuration that would change the output's shape (colour, external diff
drivers, prefixes, path quoting). When git is missing the error is
``GitUnavailable``; when the folder is not a work tree it is ``NotARepository``.
Both messages say what to do next.

Diffs are parsed by :func:`parse_unified_diff`, which also reads plain
``diff -u`` output and git patches handed in by users (``--diff FILE``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import GitUnavailable, NotARepository, UsageError, WorkspaceError

__all__ = [
    "Commit",
    "FileDiff",
    "Hunk",
    "diff_against",
    "head_commit",
    "is_git_repo",
    "parse_unified_diff",
    "recent_commits",
    "working_diff",
]

DiffStatus = Literal["added", "modified", "deleted", "renamed"]

# Options that make `git diff` output independent of the user's git config.
_DIFF_OPTS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
)
_TIMEOUT_S = 120


@dataclass(frozen=True, slots=True)
class Hunk:
    """One ``@@`` hunk. ``header`` is the whole ``@@ -a,b +c,d @@ ...`` line."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    header: str
    #: body lines without newlines, each starting with "+", "-", " " or "\\"
    lines: tuple[str, ...]

    def added(self) -> tuple[int, ...]:
        """New-side line numbers this hunk adds."""
        out: list[int] = []
        line = self.new_start
        for text in self.lines:
            if text.startswith("+"):
                out.append(line)
                line += 1
            elif text.startswith(" "):
                line += 1
        return tuple(out)


@dataclass(frozen=True, slots=True)
class FileDiff:
    """The change to one file. ``path`` is the new path (the old one for deletions)."""

    path: str
    old_path: str | None
    status: DiffStatus
    hunks: tuple[Hunk, ...]
    binary: bool = False

    def text(self) -> str:
        """This file's change as unified diff text (git style)."""
        old = self.old_path if self.old_path is not None else self.path
        out = [f"diff --git {_quote('a/' + old)} {_quote('b/' + self.path)}"]
        if self.status == "added":
            out.append("new file mode 100644")
        elif self.status == "deleted":
            out.append("deleted file mode 100644")
        elif self.status == "renamed":
            out += [f"rename from {_quote(old)}", f"rename to {_quote(self.path)}"]
        src = "/dev/null" if self.status == "added" else _quote("a/" + old)
        dst = "/dev/null" if self.status == "deleted" else _quote("b/" + self.path)
        if self.binary:
            out.append(f"Binary files {src} and {dst} differ")
        elif self.hunks:
            out += [f"--- {src}", f"+++ {dst}"]
            for hunk in self.hunks:
                out.append(hunk.header)
                out.extend(hunk.lines)
        return "\n".join(out) + "\n"


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    #: committer time, seconds since the epoch
    timestamp: int
    subject: str
    #: paths the commit touched (new names for renames; empty for merges)
    files: tuple[str, ...]


# ---------------------------------------------------------------- running git


def _git_exe() -> str:
    exe = shutil.which("git")
    if exe is None:
        raise GitUnavailable(
            "the git executable was not found on PATH.",
            hint="Install git (https://git-scm.com) or add it to PATH, then retry.",
        )
    return exe


def _run(root: Path, *args: str, ok_codes: tuple[int, ...] = (0,)) -> bytes:
    env = {
        **os.environ,
        "LC_ALL": "C",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",  # read-only helpers must not take index.lock
    }
    cmd = [_git_exe(), "-C", str(root), "-c", "core.quotepath=off", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise GitUnavailable(
            "the git executable could not be started.",
            hint="Install git or fix PATH, then retry.",
        ) from None
    except subprocess.TimeoutExpired:
        raise WorkspaceError(
            f"git {args[0]} took longer than {_TIMEOUT_S}s in {root}.",
            hint="Check the repository with `git status`; a huge or locked repo may be the cause.",
        ) from None
    if proc.returncode not in ok_codes:
        err = proc.stderr.decode("utf-8", "replace").strip()
        if "not a git repository" in err.lower():
            raise NotARepository(
                f"{root} is not inside a git repository.",
                hint="Run `git init` there, or pass --repo pointing at a git work tree.",
            )
        raise WorkspaceError(
            f"git {' '.join(args[:2])} failed in {root}: {err or f'exit {proc.returncode}'}",
            hint="Run the same git command by hand to see what is wrong.",
        )
    return proc.stdout


def is_git_repo(root: Path) -> bool:
    """True when git is installed and ``root`` is inside a git work tree."""
    try:
        out = _run(root, "rev-parse", "--is-inside-work-tree", ok_codes=(0, 128))
    except GitUnavailable:
        return False
    return out.strip() == b"true"


def _require_repo(root: Path) -> None:
    _git_exe()
    if not is_git_repo(root):
        raise NotARepository(
            f"{root} is not inside a git work tree.",
            hint="Run `git init` there, or pass --repo pointing at a git work tree.",
        )


def head_commit(root: Path) -> str | None:
    """SHA of HEAD, or None in a repository with no commits yet."""
    _require_repo(root)
    out = _run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1))
    sha = out.decode("ascii", "replace").strip()
    return sha or None


def _empty_tree(root: Path) -> str:
    # computed rather than hard-coded so SHA-256 repositories work too
    return _run(root, "hash-object", "-t", "tree", os.devnull).decode("ascii").strip()


def working_diff(root: Path) -> tuple[FileDiff, ...]:
    """Staged and unstaged changes of tracked files against HEAD.

    In a repository without commits the base is the empty tree, so every
    staged file shows as added. Untracked files are not part of the diff
    (they are listed by ``scan_workspace``).
    """
    base = head_commit(root) or _empty_tree(root)
    out = _run(root, "diff", *_DIFF_OPTS, base, "--")
    return parse_unified_diff(out.decode("utf-8", "replace"))


def diff_against(root: Path, base: str) -> tuple[FileDiff, ...]:
    """Changes from the merge base of ``base`` and HEAD to the working tree.

    This is what a pull request against ``base`` would show, plus uncommitted
    work. ``base`` is any revision git understands (branch, tag, sha).
    """
    _require_repo(root)
    if not base or base.startswith("-"):
        raise UsageError(f"invalid base revision {base!r}.", hint="Pass a branch, tag or sha.")
    verify = _run(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", ok_codes=(0, 1))
    if not verify.strip():
        raise UsageError(
            f"unknown revision {base!r} in {root}.",
            hint="Check the name with `git branch -a` or `git log --oneline`.",
        )
    if head_commit(root) is None:
        raise UsageError(
            "the repository has no commits yet, so there is no merge base.",
            hint="Commit once, or use the working diff instead.",
        )
    merge_base = _run(root, "merge-base", base, "HEAD", ok_codes=(0, 1)).decode().strip()
    start = merge_base or verify.decode().strip()
    out = _run(root, "diff", *_DIFF_OPTS, start, "--")
    return parse_unified_diff(out.decode("utf-8", "replace"))


def recent_commits(root: Path, *, path: str | None = None, limit: int = 50) -> tuple[Commit, ...]:
    """The newest ``limit`` commits reachable from HEAD (touching ``path`` if given).

    Newest first. Merge commits are included with no files (their changes are
    counted on the commits that made them).
    """
    _require_repo(root)
    if limit <= 0:
        return ()
    if head_commit(root) is None:
        return ()
    args = [
        "log",
        "-z",
        "--no-color",
        "--find-renames",
        "--format=%x1e%H%x1f%ct%x1f%s",
        "--name-only",
        f"--max-count={limit}",
        "HEAD",
        "--",
    ]
    if path:
        args.append(f":(literal){path}")  # a path, not a glob pathspec
    out = _run(root, *args).decode("utf-8", "replace")
    return _parse_log(out)


def _parse_log(out: str) -> tuple[Commit, ...]:
    commits: list[Commit] = []
    for record in out.split("\x1e"):
        if not record.strip("\0\n"):
            continue
        header, _, rest = record.partition("\0")
        sha, ts, subject = [*header.split("\x1f", 2), "", ""][:3]
        files = [f for f in rest.lstrip("\n").split("\0") if f]
        commits.append(
            Commit(sha=sha.strip(), timestamp=int(ts or 0), subject=subject, files=tuple(files))
        )
    return tuple(commits)


# ---------------------------------------------------------------- diff parsing

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(token: str) -> str:
    """Undo git's C-style path quoting ("a/tab\\there", octal UTF-8 bytes)."""
    if len(token) < 2 or not (token.startswith('"') and token.endswith('"')):
        return token
    body = token[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            octal = body[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            else:
                out += nxt.encode("utf-8")
            i += 2
            continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", "replace")


def _quote(path: str) -> str:
    if not any(c in path for c in '"\\\t\n\r') and path.isprintable():
        return path
    inner = path.replace("\\", "\\\\").replace('"', '\\"')
    inner = inner.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return f'"{inner}"'


def _header_path(rest: str) -> str | None:
    """Path from a ``---``/``+++`` line's remainder; None for /dev/null."""
    rest = rest.rstrip("\n")
    if rest.startswith('"'):
        end = 1
        while end < len(rest):
            if rest[end] == "\\":
                end += 2
                continue
            if rest[end] == '"':
                break
            end += 1
        name = _unquote(rest[: end + 1])
    else:
        name = rest.split("\t", 1)[0]  # plain diff -u appends a tab and a timestamp
        name = name.rstrip()
    if name == "/dev/null":
        return None
    return name


def _strip_prefix(path: str, prefix: str, git_style: bool) -> str:
    if git_style and path.startswith(prefix):
        return path[len(prefix) :]
    return path


def _split_git_header(rest: str) -> tuple[str, str] | None:
    """``a/X b/Y`` from a ``diff --git`` line; None when ambiguous."""
    if rest.startswith('"'):
        first = _header_path(rest)
        idx = rest.find('" ', 1)
        while idx >= 0 and rest[idx - 1] == "\\":
            idx = rest.find('" ', idx + 1)
        if first is None or idx < 0:
            return None
        second = _header_path(rest[idx + 2 :])
        return (first, second) if second is not None else None
    # unquoted: the two halves are "a/<p>" and "b/<p>" with the same <p> unless renamed
    half = len(rest) // 2
    if rest[half : half + 1] == " " and rest[:half][2:] == rest[half + 1 :][2:]:
        return rest[:half], rest[half + 1 :]
    parts = rest.split(" b/", 1)
    if len(parts) == 2:
        return parts[0], "b/" + parts[1]
    return None


@dataclass(slots=True)
class _Building:
    old: str | None = None
    new: str | None = None
    added: bool = False
    deleted: bool = False
    renamed: bool = False
    binary: bool = False
    git_style: bool = False
    hunks: list[Hunk] | None = None

    def finish(self) -> FileDiff | None:
        old = _strip_prefix(self.old, "a/", self.git_style) if self.old else None
        new = _strip_prefix(self.new, "b/", self.git_style) if self.new else None
        if old is None and new is None:
            return None
        if self.added or (old is None and not self.deleted):
            status: DiffStatus = "added"
        elif self.deleted or new is None:
            status = "deleted"
        elif self.renamed or (old is not None and new is not None and old != new):
            status = "renamed"
        else:
            status = "modified"
        path = new if new is not None else old
        assert path is not None
        return FileDiff(
            path=path,
            old_path=old if status == "renamed" else None,
            status=status,
            hunks=tuple(self.hunks or ()),
            binary=self.binary,
        )


def parse_unified_diff(text: str) -> tuple[FileDiff, ...]:
    """Parse git or plain unified diff text into per-file changes.

    Reads ``git diff`` / ``git format-patch`` output (renames, mode lines,
    binary markers, quoted paths) and ``diff -u`` output. Lines outside any
    file section (commit messages, ``index`` lines) are ignored.
    """
    lines = text.splitlines()
    result: list[FileDiff] = []
    cur: _Building | None = None

    def flush() -> None:
        nonlocal cur
        if cur is not None:
            done = cur.finish()
            if done is not None:
                result.append(done)
        cur = None

    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("diff --git "):
            flush()
            cur = _Building(git_style=True, hunks=[])
            pair = _split_git_header(line[len("diff --git ") :])
            if pair:
                cur.old, cur.new = pair
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            if cur is None or cur.hunks:
                flush()
                cur = _Building(hunks=[])
            cur.old = _header_path(line[4:])
            cur.new = _header_path(lines[i + 1][4:])
            if cur.old is None:
                cur.added = True
            if cur.new is None:
                cur.deleted = True
            if cur.old and cur.new and not cur.git_style:
                cur.git_style = cur.old.startswith("a/") and cur.new.startswith("b/")
            i += 2
            continue
        match = _HUNK_RE.match(line)
        if match and cur is not None:
            old_start = int(match.group(1))
            old_count = int(match.group(2)) if match.group(2) is not None else 1
            new_start = int(match.group(3))
            new_count = int(match.group(4)) if match.group(4) is not None else 1
            body: list[str] = []
            i += 1
            left_old, left_new = old_count, new_count
            while i < n and (left_old > 0 or left_new > 0 or lines[i].startswith("\\")):
                row = lines[i]
                if row.startswith("\\"):
                    body.append(row)
                elif row.startswith("+"):
                    body.append(row)
                    left_new -= 1
                elif row.startswith("-"):
                    body.append(row)
                    left_old -= 1
                elif row.startswith(" ") or row == "":
                    body.append(row or " ")  # some tools strip the blank context line's space
                    left_old -= 1
                    left_new -= 1
                else:
                    break
                i += 1
            assert cur.hunks is not None
            cur.hunks.append(Hunk(old_start, old_count, new_start, new_count, line, tuple(body)))
            continue
        if cur is not None and cur.git_style:
            if line.startswith("new file mode"):
                cur.added = True
            elif line.startswith("deleted file mode"):
                cur.deleted = True
            elif line.startswith("rename from "):
                cur.renamed = True
                cur.old = "a/" + _unquote(line[len("rename from ") :])
            elif line.startswith("rename to "):
                cur.renamed = True
                cur.new = "b/" + _unquote(line[len("rename to ") :])
            elif line.startswith("copy from "):
                cur.old = "a/" + _unquote(line[len("copy from ") :])
            elif line.startswith("copy to "):
                cur.new = "b/" + _unquote(line[len("copy to ") :])
            elif line.startswith("Binary files ") or line == "GIT binary patch":
                cur.binary = True
        i += 1
    flush()
    return tuple(result)
