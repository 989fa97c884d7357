"""Blob ids of clean files from git's own index: a fresh clone is listed without reading it.

A clone or a ``git worktree add`` writes every file anew, so no mtime matches the
index it was seeded from, and the listing stage would read and hash every file
to learn that almost all are unchanged. Git already knows: ``git ls-files -s``
holds each tracked file's blob id, and with ``--debug`` the stat data git recorded
when it last knew the work-tree file to hold that blob. A file whose stat data
(mtime and ctime to the nanosecond, inode, size) still equal that record holds the
blob's bytes, by git's own rule, unless the record is *racily clean*: taken in the
same instant as git's index file was written (its mtime not older than the index
file's), when a later write in that instant would leave the stat data unchanged.
Those are left out; so git's ids cover what ``git diff-files`` would call clean
without git re-reading the racily clean files of a fresh clone (most of them: a
clone writes its files and its index within the same second), and a file left out
is read and hashed by the caller like any other.

That holds only when checkout writes the blob's bytes unchanged. A path with a
conversion attribute (``filter``, ``text``, ``eol``, ``crlf``, ``ident``,
``working-tree-encoding``) is left out, and so is the whole repository when
``core.autocrlf`` converts line endings; so are files marked assume-unchanged or
skip-worktree (git stops checking them), symlinks, submodules and conflicted
entries. Any git trouble, or an index rewritten while it is read, gives no ids.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import LibrarianError
from ..workspace import git

__all__ = ["CONVERTING_ATTRIBUTES", "GitEntry", "clean_blob_ids", "git_entries"]

#: attributes under which a work-tree file's bytes may differ from its blob's
CONVERTING_ATTRIBUTES = frozenset(
    {"filter", "text", "eol", "crlf", "ident", "working-tree-encoding", "binary"}
)
_REGULAR = frozenset({b"100644", b"100755"})


@dataclass(frozen=True, slots=True)
class GitEntry:
    """One tracked file's blob id and the stat data git recorded for its work-tree copy."""

    blob: str
    mtime_ns: int
    ctime_ns: int
    #: the inode number's low 32 bits, as git's index keeps them
    ino: int
    size: int

    def holds(self, st: os.stat_result) -> bool:
        """The file with stat data ``st`` holds this blob's bytes (git's stat check)."""
        return (
            st.st_mtime_ns == self.mtime_ns
            and st.st_ctime_ns == self.ctime_ns
            and st.st_ino & 0xFFFFFFFF == self.ino  # git keeps the inode's low 32 bits
            and st.st_size == self.size
        )


def clean_blob_ids(root: Path) -> dict[str, str]:
    """``path -> blob id`` of the tracked files whose work-tree bytes are that blob.

    Each file under ``root`` is stat'ed here; ``git_entries`` leaves that to a
    caller that stats the files anyway. Empty outside git, when ``core.autocrlf``
    converts, or when git fails.
    """
    ids: dict[str, str] = {}
    for path, entry in git_entries(root).items():
        try:
            st = os.lstat(os.path.join(root, path))  # noqa: PTH118 - once per file
        except OSError:
            continue
        if entry.holds(st):
            ids[path] = entry.blob
    return ids


def git_entries(root: Path) -> dict[str, GitEntry]:
    """``path -> GitEntry`` of the tracked files under ``root`` git's stat check may trust.

    A work-tree file holds its entry's blob when ``GitEntry.holds`` its current
    stat data. Racily clean records, converting paths and special entries are left
    out (the module docstring); empty outside git, when ``core.autocrlf``
    converts, when git fails or when the index file changes while it is read.
    """
    try:
        head = git._run(root, "rev-parse", "--is-inside-work-tree", "--git-path", "index")
        inside, _, index_path = head.decode("utf-8", "surrogateescape").partition("\n")
        if inside.strip() != "true":
            return {}
        index_file = root / index_path.strip()
        autocrlf = git._run(root, "config", "--get", "core.autocrlf", ok_codes=(0, 1))
        if autocrlf.strip().lower() in {b"true", b"input"}:
            return {}
        before = os.stat(index_file)  # noqa: PTH116 - the stat record itself is compared
        staged = git._run(root, "ls-files", "-s", "-v", "-z", "--debug")
        after = os.stat(index_file)  # noqa: PTH116
    except (LibrarianError, OSError):
        return {}
    if (before.st_mtime_ns, before.st_ino, before.st_size) != (
        after.st_mtime_ns,
        after.st_ino,
        after.st_size,
    ):
        return {}  # rewritten while read: the records and the index's mtime may disagree
    entries = _parse(staged, written=after.st_mtime_ns)
    for path in _converted(root, sorted(entries)):
        entries.pop(path, None)
    return entries


#: one entry of ``ls-files -s -v -z --debug``: ``TAG MODE ID STAGE\tPATH\0`` and five
#: lines of the stat data git recorded (seconds:nanoseconds for the times)
_ENTRY = re.compile(
    rb"(\S+) (\d+) ([0-9a-f]+) (\d+)\t([^\0]*)\0"
    rb"  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: \d+\tino: (\d+)\n"
    rb"  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n"
)


def _parse(out: bytes, *, written: int) -> dict[str, GitEntry]:
    """The trusted entries of ``ls-files -s -v -z --debug`` output (``_ENTRY``).

    Output that does not read that way from end to end gives no entries; ``written``
    is the index file's mtime (racily clean records go).
    """
    entries: dict[str, GitEntry] = {}
    end = 0
    for m in _ENTRY.finditer(out):
        if m.start() != end:
            return {}
        end = m.end()
        tag, mode, blob, stage, raw, cs, cn, ms, mn, ino, size = m.groups()
        # H is a plain cached entry (lower case: assume-unchanged; S: skip-worktree)
        if tag != b"H" or stage != b"0" or mode not in _REGULAR:
            continue
        mtime_ns = int(ms) * 1_000_000_000 + int(mn)
        if mtime_ns >= written:
            continue  # racily clean: a write in the same instant keeps this record
        try:
            path = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        entries[path] = GitEntry(
            blob.decode("ascii"),
            mtime_ns,
            int(cs) * 1_000_000_000 + int(cn),
            int(ino),
            int(size),
        )
    return entries if end == len(out) else {}


def _converted(root: Path, paths: list[str]) -> set[str]:
    """Those of ``paths`` with an attribute that may convert their bytes on checkout."""
    if not paths:
        return set()
    cmd = [git._git_exe(), "-C", str(root), "check-attr", "-a", "--stdin", "-z"]
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        proc = subprocess.run(
            cmd,
            input="\0".join(paths).encode("utf-8"),
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
    except (LibrarianError, OSError, subprocess.TimeoutExpired):
        return set(paths)
    if proc.returncode != 0:
        return set(paths)
    out = proc.stdout
    fields = out.split(b"\0")
    hit: set[str] = set()
    for i in range(0, len(fields) - 2, 3):
        path, attr, value = fields[i], fields[i + 1], fields[i + 2]
        if attr.decode("ascii", "replace") in CONVERTING_ATTRIBUTES and value != b"unspecified":
            hit.add(path.decode("utf-8", "surrogateescape"))
    return hit
