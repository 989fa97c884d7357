"""What the recent commits edited, read from git history.

A task often reads like a commit message, and the files that past commits with
similar messages edited are where such a change tends to land. This module reads the
newest commits reachable from a revision: their messages and the code files they
edited, which the index keeps (:func:`refresh_past_edits`) and compose matches a task
against (:func:`past_edit_weights`).

Bounded: at most ``limit`` commits, merges skipped, and a commit touching more than
``max_files`` code files skipped (a bulk reformat or a vendored update says nothing
about where a change lands).
"""

from __future__ import annotations

import re
import subprocess
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
    "message_words",
    "parse_log",
    "past_edit_weights",
    "read_history",
    "refresh_past_edits",
]

#: the extensions of the code files whose edits are read
_CODE: tuple[str, ...] = (
    "c",
    "cc",
    "cjs",
    "cpp",
    "cs",
    "go",
    "h",
    "hpp",
    "java",
    "js",
    "jsx",
    "kt",
    "mjs",
)
_CODE += ("php", "py", "pyi", "rb", "rs", "ts", "tsx")
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
    """One commit: its position (0 = the newest read), time, message and the code files
    it edited (post-image paths, sorted)."""

    order: int
    sha: str
    timestamp: int
    message: str
    paths: tuple[str, ...]

    def files(self) -> tuple[str, ...]:
        return self.paths


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
    records: Iterable[str], *, max_files: int = 30
) -> Iterator[tuple[str, int, str, tuple[str, ...]]]:
    """``(sha, timestamp, message, files)`` per commit of :func:`read_history`'s log
    (each record the text of one commit: its header, message and file names)."""
    for text in records:
        record = text.lstrip("\x1e")
        if not record.strip():
            continue
        head, sep, names = record.partition("\x1d")
        if not sep:
            continue
        sha, _, rest = head.partition("\x1f")
        ts, _, message = rest.partition("\x1f")
        files = sorted({name for name in (line.strip() for line in names.split("\n")) if name})
        if not files or len(files) > max_files:
            continue
        yield sha.strip(), int(ts.strip() or 0), message.strip(), tuple(files)


def read_history(
    root: Path, *, rev: str = "HEAD", limit: int = 1000, max_files: int = 30, timeout: float = 120.0
) -> list[PastCommit]:
    """The newest ``limit`` non-merge commits reachable from ``rev`` that edited code,
    newest first, each with the code files it edited (not deleted)."""
    if limit <= 0:
        return []
    args = [
        "git",
        "-c",
        "core.quotePath=false",
        "log",
        "--no-merges",
        f"--max-count={limit}",
        "--format=%x1e%H%x1f%ct%x1f%B%x1d",
        "--name-only",
        "--diff-filter=d",
        "--no-color",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        rev,
        "--",
        *(f"*.{ext}" for ext in _CODE),
    ]
    with subprocess.Popen(
        args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout is not None
        parsed = parse_log(_records(proc.stdout), max_files=max_files)
        commits = [PastCommit(i, *item) for i, item in enumerate(parsed)]
        code = proc.wait(timeout=timeout)
    if code != 0:
        raise subprocess.CalledProcessError(code, args[:4])
    return commits


def _records(stream: IO[bytes]) -> Iterator[str]:
    """The log's text one commit at a time."""
    lines: list[str] = []
    for raw in stream:
        if raw.startswith(b"\x1e") and lines:
            yield "".join(lines)
            lines = []
        lines.append(raw.decode("utf-8", "replace"))
    if lines:
        yield "".join(lines)


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
