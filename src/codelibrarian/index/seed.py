"""Start a fresh checkout's index from a sibling's: a second clone costs its changes.

Parsing is not the only cost of a cold index: writing ~70k chunks into full-text
search takes seconds even when every parse comes from the cache. A second clone,
a ``git worktree add`` or a CI job restoring a cache holds mostly the same files
as an index the user already has. So when a repository's index is empty, the
indexer looks in the per-user cache for indexes of the *same repository*
(identified by its root commits) and copies the most recently updated one as
a consistent snapshot (the file itself when its write-ahead log is empty, else
SQLite's online backup, which holds even while its owner writes),
checks it, and then indexes incrementally: files whose content differs (by blob
id) are re-parsed, usually from the parse cache; the rest only get new mtimes.
The indexer runs the copy's ``quick_check`` in a thread while it lists the
workspace's files (which only reads the copy), and waits for it before writing.

A copied index that fails its check, or cannot be opened, is discarded: the run
then builds from scratch (and says so in its notes).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

from ..errors import LibrarianError
from ..workspace import git
from ..workspace.private import private_touch
from .blobcache import BlobCache
from .health import discard, quick_check

__all__ = ["repo_key", "seed_from_sibling"]


def repo_key(root: Path) -> str:
    """The root commits of HEAD, sorted and joined ("" outside git or without commits)."""
    try:
        if not git.is_git_repo(root):
            return ""
        out = git._run(root, "rev-list", "--max-parents=0", "HEAD", ok_codes=(0, 128))
    except (LibrarianError, OSError):
        return ""
    roots = sorted(out.decode("ascii", "replace").split())
    return ",".join(roots)


def _copy(source: Path, target: Path, *, check: bool) -> bool:
    tmp = target.with_name(f".{target.name}.seed.{os.getpid()}")
    discard(tmp)
    try:
        private_touch(tmp)  # 0600 from the start, like the index it becomes
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=5.0)
        try:
            copied = _file_copy(src, source, tmp)
            dst = sqlite3.connect(str(tmp))
            try:
                # no fsync of the copy: it becomes the index only by the rename below,
                # after its check, and a power loss that damages an index is caught by
                # quick_check like any other (half the copy's wall time on a 150 MB index)
                dst.execute("PRAGMA synchronous = OFF")
                if not copied:
                    src.backup(dst)
                # a rollback journal while it is a copy: the check below then leaves no
                # -wal/-shm files behind (the store turns WAL back on when it opens it)
                dst.execute("PRAGMA journal_mode = DELETE")
            finally:
                dst.close()
        finally:
            src.close()
        if check and quick_check(tmp):
            discard(tmp)
            return False
        discard(target)
        tmp.replace(target)
        with contextlib.suppress(OSError):
            target.chmod(0o600)
        return True
    except (sqlite3.Error, OSError):
        discard(tmp)
        return False


def _file_copy(src: sqlite3.Connection, source: Path, tmp: Path) -> bool:
    """Copy ``source``'s file to ``tmp`` as the bytes of one consistent snapshot, when
    that is safe; False leaves the copy to SQLite's online backup.

    Safe when the write-ahead log is empty once a read transaction has begun: the
    snapshot is then the database file alone, and no checkpoint writes into that
    file while the transaction lasts (a checkpoint never passes a reader's end
    mark, here frame 0). A sibling at rest has an empty log (its last connection
    checkpointed it), so a second checkout copies its index at the speed of the
    file system instead of page by page.
    """
    wal = source.with_name(source.name + "-wal")
    src.execute("BEGIN")
    try:
        src.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # the snapshot
        try:
            if wal.stat().st_size > 0:
                return False
        except FileNotFoundError:
            pass
        shutil.copyfile(source, tmp)
        return True
    finally:
        src.execute("ROLLBACK")


def seed_from_sibling(
    root: Path, db_path: Path, cache: BlobCache | None, key: str, *, check: bool = True
) -> Path | None:
    """Copy the newest sound sibling index of the repository ``key`` to ``db_path``.

    Returns the index copied from, or None. Callers hold ``db_path``'s writer lock
    and call this only while the index is empty. ``check=False`` leaves the copy's
    ``quick_check`` to the caller (the indexer runs it while it lists the files, and
    discards the copy before writing to it if the check fails).
    """
    if cache is None or not key:
        return None
    here = db_path.resolve()
    for candidate in cache.indexes_of(key):
        if candidate.resolve() == here:
            continue
        if not candidate.is_file():
            cache.forget_index(candidate)
            continue
        if _copy(candidate, db_path, check=check):
            return candidate
    return None
