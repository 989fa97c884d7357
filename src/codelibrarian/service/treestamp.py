"""Tell, without reading every folder, that a tree's untracked files are the same.

A long-lived session (the resident server, the MCP server, a kept ``Librarian``)
checks on every call whether the workspace changed: ``git status
--untracked-files=all``. Most of its time on a large tree is the untracked-file
walk (it lists every folder and matches every name against the ignore rules): on
a 20,000-file repository about 0.3 s of 0.45 s per call. A :class:`TreeStamp`
records, while such a call runs (from the moment it started), the ``lstat`` (mode,
size, mtime, inode) of
every folder of the tree, every ``.gitignore`` and the git files the untracked
set depends on (``HEAD``, ``index``, ``config``, ``info/exclude``). While
``unchanged()`` (those ``lstat``s only: no listing, no ignore rules) holds, no
file was added, removed or renamed anywhere, and no ignore rule or index entry
changed, so the untracked files are the ones that call listed; the caller asks
git about tracked files only (``--untracked-files=no``, which only compares the
index with the files' ``lstat``s) and re-reads the listed untracked files' sizes
and mtimes itself. The signature is the same as a full call's.

* Racy entries: a folder or ``.gitignore`` modified within :data:`RACY_NS` of
  the stamp's start (when git started) could change again within the same mtime
  tick without showing, or after git looked at it; a stamp with such an entry is
  not kept (full calls until the tree has been still that long). Git replaces
  its own files (a lock file renamed into place), so a change gives them a new
  inode.
* Not used: a ``.git`` that is a file (worktrees, submodules), a nested
  repository, more than :data:`MAX_ENTRIES` folders. A user-wide excludes file
  (``core.excludesFile``) edited between calls is not seen until the tree
  changes.

``.librarian/`` (written by every call) is left out.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_ENTRIES", "RACY_NS", "TreeStamp", "git_stats"]

#: more folders than this: a stamp would cost a large part of what it saves
MAX_ENTRIES = 30_000
#: folders modified this close to the stamp make it untrustworthy (3 s)
RACY_NS = 3_000_000_000
_SKIP_TOP = frozenset({".git", ".librarian"})
_GIT_FILES = ("HEAD", "index", "config", "info/exclude")

_Stat = tuple[int, int, int, int]


def _stat(path: str) -> _Stat | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)


def git_stats(root: Path) -> tuple[_Stat | None, ...]:
    """The ``lstat`` of git's own files of ``root`` now (what the untracked set and a
    branch depend on besides the tree)."""
    git = root / ".git"
    return tuple(_stat(str(git / rel)) for rel in _GIT_FILES)


@dataclass(frozen=True, slots=True)
class TreeStamp:
    """``lstat`` of a tree's folders, ignore files and git files (see the module docstring)."""

    paths: tuple[str, ...]
    stats: tuple[_Stat | None, ...]
    #: False: this tree cannot be stamped (a worktree, a nested repository, too many
    #: folders); the caller stops trying rather than walk it again on every call
    usable: bool = True

    @classmethod
    def take(
        cls,
        root: Path,
        *,
        since: int | None = None,
        on_folder: Callable[[str], object] | None = None,
    ) -> TreeStamp | None:
        """The stamp of ``root`` now; None when it cannot be trusted now (a recent
        change), an unusable stamp when this tree cannot be stamped at all.

        ``since`` (``time.time_ns()``, by default when the walk starts): an entry
        modified less than :data:`RACY_NS` before it makes the stamp untrusted. A
        caller that starts git before the walk and walks while git looks passes the
        moment it started git, so anything changed while the two looked makes the
        stamp untrusted. ``on_folder`` hears each folder before it is read (to watch
        it: a change after that shows in the watch, one before it in the stamp).
        """
        git = root / ".git"
        never = cls((), (), usable=False)
        if not git.is_dir():
            return never
        start = time.time_ns() if since is None else since
        paths = [str(git / rel) for rel in _GIT_FILES]
        stats = [_stat(p) for p in paths]
        own = len(paths)
        top = str(root)
        folders = [top]
        while folders:
            folder = folders.pop()
            if on_folder is not None:
                on_folder(folder)
            here = _stat(folder)
            if here is None or not stat.S_ISDIR(here[0]):
                return None  # vanished while read: let git look
            paths.append(folder)
            stats.append(here)
            try:
                entries = list(os.scandir(folder))
            except OSError:
                return None
            for entry in entries:
                if folder == top and entry.name in _SKIP_TOP:
                    continue
                if entry.name == ".git":
                    return never  # a nested repository: its own status rules apply
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    return None
                if is_dir:
                    folders.append(entry.path)
                elif entry.name == ".gitignore":
                    paths.append(entry.path)
                    stats.append(_stat(entry.path))
            if len(paths) > MAX_ENTRIES:
                return never
        racy = start - RACY_NS
        if any(st is not None and st[2] >= racy for st in stats[own:]):
            return None
        return cls(tuple(paths), tuple(stats))

    def folders(self) -> list[str]:
        """The folders this stamp covers (its other entries are files)."""
        return [
            p for p, st in zip(self.paths, self.stats, strict=True)
            if st is not None and stat.S_ISDIR(st[0])
        ]  # fmt: skip

    def git_files(self) -> tuple[_Stat | None, ...]:
        """The ``lstat`` of git's own files (``HEAD``, the index, config, excludes) as
        this stamp recorded them, to compare with :func:`git_stats`."""
        return self.stats[: len(_GIT_FILES)] if self.usable else ()

    def unchanged(self) -> bool:
        """Whether every recorded entry still has the same ``lstat``."""
        return self.usable and all(
            _stat(p) == s for p, s in zip(self.paths, self.stats, strict=True)
        )
