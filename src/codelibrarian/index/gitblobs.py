"""Blob ids of clean files from git's own index: a fresh clone is listed without reading it.

A clone or a ``git worktree add`` writes every file anew, so no mtime matches the
index it was seeded from, and the listing stage would read and hash every file
to learn that almost all are unchanged. Git already knows: ``git ls-files -s``
holds each tracked file's blob id, and ``git diff-files`` names the files whose
work-tree copy may differ from it (it compares stat data and re-reads racily
clean files). For any other tracked regular file, git's id *is* the id of the
bytes on disk, the one ``workspace.files.blob_id`` would compute.

That holds only when checkout writes the blob's bytes unchanged. A path with a
conversion attribute (``filter``, ``text``, ``eol``, ``crlf``, ``ident``,
``working-tree-encoding``) is left out, and so is the whole repository when
``core.autocrlf`` converts line endings; so are files marked assume-unchanged or
skip-worktree (git stops checking them), symlinks, submodules and conflicted
entries. Those are read and hashed as before. Any git trouble gives no ids.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import LibrarianError
from ..workspace import git

__all__ = ["CONVERTING_ATTRIBUTES", "clean_blob_ids"]

#: attributes under which a work-tree file's bytes may differ from its blob's
CONVERTING_ATTRIBUTES = frozenset(
    {"filter", "text", "eol", "crlf", "ident", "working-tree-encoding", "binary"}
)
_REGULAR = frozenset({"100644", "100755"})


def clean_blob_ids(root: Path) -> dict[str, str]:
    """``path -> blob id`` of the tracked files whose work-tree bytes are that blob.

    Empty outside git, when ``core.autocrlf`` converts, or when git fails.
    """
    try:
        if not git.is_git_repo(root):
            return {}
        autocrlf = git._run(root, "config", "--get", "core.autocrlf", ok_codes=(0, 1))
        if autocrlf.strip().lower() in {b"true", b"input"}:
            return {}
        staged = git._run(root, "ls-files", "-s", "-v", "-z")
        # paths relative to ``root`` (which may be a folder inside the work tree)
        dirty = git._run(root, "diff-files", "--name-only", "--relative", "-z")
    except (LibrarianError, OSError):
        return {}
    ids: dict[str, str] = {}
    for entry in staged.split(b"\0"):
        # "H 100644 <id> 0\tpath": H is a plain cached entry (lower case: assume-unchanged)
        head, sep, raw = entry.partition(b"\t")
        fields = head.split()
        if not sep or len(fields) != 4 or fields[0] != b"H" or fields[3] != b"0":
            continue
        if fields[1].decode("ascii", "replace") not in _REGULAR:
            continue
        try:
            ids[raw.decode("utf-8")] = fields[2].decode("ascii")
        except UnicodeDecodeError:
            continue
    for raw in dirty.split(b"\0"):
        ids.pop(raw.decode("utf-8", "surrogateescape"), None)
    for path in _converted(root, sorted(ids)):
        ids.pop(path, None)
    return ids


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
