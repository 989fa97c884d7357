"""What the recent commits edited, read from git history.

A task often reads like a commit message, and the files that past commits with
similar messages edited are where such a change tends to land. This module reads the
newest commits reachable from a revision: their messages and the code files they
edited, which the index keeps (:func:`refresh_past_edits`) and compose matches a task
against (:func:`past_edit_weights`). With ``definitions`` it also reads each commit's
patch (no context lines) and names, per file, the definitions its hunks were in: git
prints the enclosing definition's first line after each hunk's ``@@`` (its "function
context", found by the built-in per-language patterns: ``python``, ``golang``,
``rust``... chosen here by a private attributes file, so a repository's own settings
do not change the answer), and the name is read off that line. That finer answer is
for the span-level probe (``benchmarks/probe_history_spans.py``): measured, it did not
rank a file's edited definition better than the task's words do.

Bounded: at most ``limit`` commits, merges skipped, a commit touching more than
``max_files`` code files skipped (a bulk reformat or a vendored update says nothing
about where a change lands), and at most ``max_names`` names per file of a commit.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..workspace import git

if TYPE_CHECKING:
    from ..config import Config
    from .storage import IndexStore, Storage

__all__ = [
    "HISTORY_COMMITS",
    "SIMILAR_COMMITS",
    "PastCommit",
    "definition_name",
    "message_words",
    "parse_log",
    "past_edit_weights",
    "read_history",
    "refresh_past_edits",
]

#: extensions -> git's built-in function-context pattern (``userdiff``), or ``jsfn``
#: (defined below: git has no built-in one for JavaScript and TypeScript)
_DRIVERS = {
    "py": "python",
    "pyi": "python",
    "go": "golang",
    "rs": "rust",
    "rb": "ruby",
    "java": "java",
    "kt": "kotlin",
    "cs": "csharp",
    "c": "cpp",
    "h": "cpp",
    "cc": "cpp",
    "cpp": "cpp",
    "hpp": "cpp",
    "php": "php",
    "js": "jsfn",
    "mjs": "jsfn",
    "cjs": "jsfn",
    "jsx": "jsfn",
    "ts": "jsfn",
    "tsx": "jsfn",
}
#: a JavaScript/TypeScript definition's first line: a function, a class, a method, or a
#: function assigned to a name or a property
_JS_FUNCNAME = (
    r"^[\t ]*((export[\t ]+)?(default[\t ]+)?(async[\t ]+)?(function|class)[\t *].*"
    r"|.*[=:][\t ]*(async[\t ]+)?function\b.*"
    r"|[\t ]*(static[\t ]+|async[\t ]+|public[\t ]+|private[\t ]+|protected[\t ]+)*"
    r"[A-Za-z_$][A-Za-z0-9_$]*[\t ]*\([^;]*\)[\t ]*(:[^{;]*)?\{[\t ]*)$"
)
_KEYWORD_DEF = re.compile(
    r"\b(?:def|class|fn|func|function|struct|enum|trait|interface|type|module)\b[\s*]*"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
_CALL_DEF = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:[=:]\s*(?:async\s+)?function\b|\()")
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "return", "function", "new"})
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: message words too common in commit messages to tell commits apart
_STOP = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "from",
        "that",
        "this",
        "into",
        "when",
        "not",
        "are",
        "was",
        "were",
        "but",
        "all",
        "any",
        "use",
        "used",
        "add",
        "adds",
        "added",
        "fix",
        "fixes",
        "fixed",
        "remove",
        "removes",
        "removed",
        "update",
        "updates",
        "updated",
        "make",
        "makes",
        "change",
        "changes",
        "changed",
        "merge",
        "pull",
        "request",
        "branch",
        "signed",
        "off",
        "co",
        "authored",
    }
)


@dataclass(frozen=True, slots=True)
class PastCommit:
    """One commit: its position (0 = the newest read), time, message and, per file it
    edited (post-image path), the names of the definitions its hunks were in."""

    order: int
    sha: str
    timestamp: int
    message: str
    edits: tuple[tuple[str, tuple[str, ...]], ...]

    def files(self) -> tuple[str, ...]:
        return tuple(path for path, _ in self.edits)


def definition_name(context: str) -> str | None:
    """The name a hunk header's function-context line defines (``None`` if none)."""
    m = _KEYWORD_DEF.search(context)
    if m is not None:
        return m.group(1)
    for m in _CALL_DEF.finditer(context):
        if m.group(1) not in _NOT_NAMES:
            return m.group(1)
    return None


def message_words(text: str) -> list[str]:
    """A message's words for matching: lower-cased words and identifier parts of three
    letters or more (``FlaskClient`` gives ``flaskclient``, ``flask`` and ``client``),
    common commit-message words left out; in order, repeats kept."""
    out: list[str] = []
    for raw in _WORD.findall(text):
        word = raw.lower()
        pieces = [p.lower() for p in _CAMEL.split(raw)]
        for w in [word, *(pieces if len(pieces) > 1 else [])]:
            if len(w) >= 3 and w not in _STOP:
                out.append(w)
    return out


def parse_log(
    records: Iterable[str], *, max_files: int = 30, max_names: int = 12, patches: bool = True
) -> Iterator[tuple[str, int, str, tuple[tuple[str, tuple[str, ...]], ...]]]:
    """``(sha, timestamp, message, edits)`` per commit of :func:`read_history`'s log
    (each record the text of one commit: its patches, or its file names only)."""
    for text in records:
        record = text.lstrip("\x1e")
        if not record.strip():
            continue
        head, sep, patch = record.partition("\x1d")
        if not sep:
            continue
        sha, _, rest = head.partition("\x1f")
        ts, _, message = rest.partition("\x1f")
        files: dict[str, list[str]] = {}
        if not patches:
            files = {name: [] for name in (line.strip() for line in patch.split("\n")) if name}
        path: str | None = None
        after_old = False
        for line in patch.split("\n") if patches else ():
            if after_old and line.startswith("+++ "):
                target = line[4:]
                path = target[2:] if target.startswith("b/") else None
                if path is not None:
                    files.setdefault(path, [])
            elif line.startswith("@@") and path is not None:
                context = line.split("@@", 2)[-1]
                name = definition_name(context) if context.strip() else None
                names = files[path]
                if name is not None and name not in names and len(names) < max_names:
                    names.append(name)
            after_old = line.startswith("--- ")
        if not files or len(files) > max_files:
            continue
        edits = tuple((p, tuple(names)) for p, names in sorted(files.items()))
        yield sha.strip(), int(ts.strip() or 0), message.strip(), edits


def read_history(
    root: Path,
    *,
    rev: str = "HEAD",
    limit: int = 1000,
    max_files: int = 30,
    definitions: bool = False,
    timeout: float = 120.0,
) -> list[PastCommit]:
    """The newest ``limit`` non-merge commits reachable from ``rev`` that edited code,
    newest first, each with the code files it edited (not deleted) and, with
    ``definitions``, the names of the definitions its hunks were in (a patch per commit:
    five times the git time of the file names alone)."""
    if limit <= 0:
        return []
    with tempfile.TemporaryDirectory(prefix="librarian-history-") as tmp:
        attributes = Path(tmp) / "attributes"
        attributes.write_text(
            "".join(f"*.{ext} diff={driver}\n" for ext, driver in sorted(_DRIVERS.items())),
            encoding="utf-8",
        )
        args = [
            "git",
            "-c",
            f"core.attributesFile={attributes}",
            "-c",
            f"diff.jsfn.xfuncname={_JS_FUNCNAME}",
            "-c",
            "core.quotePath=false",
            "log",
            "--no-merges",
            f"--max-count={limit}",
            "--format=%x1e%H%x1f%ct%x1f%B%x1d",
            *(("-p", "-U0") if definitions else ("--name-only", "--diff-filter=d")),
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            rev,
            "--",
            *(f"*.{ext}" for ext in sorted(_DRIVERS)),
        ]
        with subprocess.Popen(
            args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as proc:
            assert proc.stdout is not None
            records = _records(proc.stdout, patches=definitions)
            commits = _numbered(parse_log(records, max_files=max_files, patches=definitions))
            code = proc.wait(timeout=timeout)
    if code != 0:
        raise subprocess.CalledProcessError(code, args[:6])
    return commits


def _records(stream: IO[bytes], *, patches: bool) -> Iterator[str]:
    """The log's text one commit at a time, only the lines :func:`parse_log` reads
    (the header, the message, and the file names or the patches' file and hunk headers)."""
    lines: list[str] = []
    in_message = False
    for raw in stream:
        if raw.startswith(b"\x1e"):
            if lines:
                yield "".join(lines)
            lines = []
            in_message = True
        if in_message:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if "\x1d" in line:
                in_message = False
        elif not patches or raw.startswith((b"@@", b"--- ", b"+++ ")):
            lines.append(raw.decode("utf-8", "replace"))
    if lines:
        yield "".join(lines)


def _numbered(
    items: Iterable[tuple[str, int, str, tuple[tuple[str, tuple[str, ...]], ...]]],
) -> list[PastCommit]:
    return [PastCommit(i, sha, ts, msg, edits) for i, (sha, ts, msg, edits) in enumerate(items)]


# ------------------------------------------------------------------ the index's copy

#: commits read (newest first) and the most files a commit may touch to be kept
HISTORY_COMMITS = 1000
HISTORY_MAX_FILES = 30


def refresh_past_edits(root: Path, store: IndexStore, cfg: Config) -> list[str]:
    """Store the recent commits' messages and edited code files when HEAD or the
    settings changed (the index's derived stage, next to the co-change graph, and off
    with it: ``index.cochange_commits = 0``); empty without git history."""
    on = cfg.index.cochange_commits > 0 and git.is_git_repo(root)
    head = (git.head_commit(root) or "") if on else ""
    key = f"{head}:{HISTORY_COMMITS}:{HISTORY_MAX_FILES}" if head else ""
    if (store.meta("past_edits_key") or "") == key:
        return []
    commits: list[PastCommit] = []
    if head:
        try:
            commits = read_history(root, limit=HISTORY_COMMITS, max_files=HISTORY_MAX_FILES)
        except (OSError, subprocess.SubprocessError) as exc:  # must not fail the index
            return [f"past edits not refreshed: {type(exc).__name__}"]
    rows = [(c.order, " ".join(message_words(c.message)), c.files()) for c in commits]
    store.history.set_past_edits(rows, key)
    return []


# ------------------------------------------------------------------ compose time

#: the past commits a task is matched with (the best by BM25 over message words)
SIMILAR_COMMITS = 20
_MEMO_MAX = 64


def past_edit_weights(
    store: Storage, task: str, shared: dict[str, Any]
) -> dict[str, tuple[int, int]]:
    """What the past commits most like ``task`` edited: per file, the sum of those
    commits' weights (each its BM25 score per mille of the best one's, at least 1) and
    how many of them edited it. Two queries, memoized per task in ``shared``."""
    memo: dict[str, dict[str, tuple[int, int]]] = shared.setdefault("history_edits.past", {})
    got = memo.get(task)
    if got is not None:
        return got
    if len(memo) >= _MEMO_MAX:
        memo.clear()
    similar = store.history.similar_commits(message_words(task), SIMILAR_COMMITS)
    best = similar[0][1] if similar else 0
    weight = {order: max(1, score * 1000 // best) for order, score in similar}
    files: dict[str, tuple[int, int]] = {}
    for order, path in store.history.past_edits(weight):
        w, n = files.get(path, (0, 0))
        files[path] = (w + weight[order], n + 1)
    memo[task] = files
    return files
