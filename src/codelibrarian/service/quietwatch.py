"""Tell, with one system call, that nothing in a tree changed since a moment.

A long-lived session (the resident server, the MCP server, a kept ``Librarian``)
asks on every call whether the workspace changed. ``treestamp.py`` already spares
git's walk of untracked folders, but ``git status --untracked-files=no`` still
``lstat``s every tracked file: on a 20,000-file tree about 60 ms idle and several
times that under load, every call, although between two calls of an agent's loop
usually nothing changed at all.

A :class:`QuietWatch` is a Linux inotify instance with a watch on every folder of
the tree (the folders a :class:`~.treestamp.TreeStamp` walked), on ``.git`` and on
the folders under ``.git/refs``. The kernel queues an event when any file in a
watched folder is created, written, has its attributes (mtime) changed, is moved or
deleted, and when a branch or ``HEAD`` moves or the git index is rewritten. It is
armed *before* the ``git status`` whose answer it will stand for; while its queue
is empty (``FIONREAD`` reads 0: one ``ioctl``, no read, no walk), no such change
happened since, so that answer still holds. The first event spoils it for good: the
caller asks git again and arms a new one.

The queue is filled by the system call that changed the file, before that call
returns, so a save that finished before a compose started is always seen: there is
no thread and no delivery delay to race with.

Not used (``arm`` returns None and the caller keeps asking git): other systems than
Linux, a tree the stamp cannot cover (see ``treestamp.py``), and when the kernel
refuses a watch (the per-user limit, ``fs.inotify.max_user_watches``). Changes in
``.librarian/`` (written by every call) are not watched.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import struct
import sys
import termios
from collections.abc import Iterable
from pathlib import Path

__all__ = ["QuietWatch"]

_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
# what changes a signature: contents, mtimes, names, and the watched folder itself
_MASK = (
    0x00000002  # IN_MODIFY
    | 0x00000004  # IN_ATTRIB
    | 0x00000008  # IN_CLOSE_WRITE
    | 0x00000040  # IN_MOVED_FROM
    | 0x00000080  # IN_MOVED_TO
    | 0x00000100  # IN_CREATE
    | 0x00000200  # IN_DELETE
    | 0x00000400  # IN_DELETE_SELF
    | 0x00000800  # IN_MOVE_SELF
    | 0x01000000  # IN_DONT_FOLLOW
    | 0x04000000  # IN_EXCL_UNLINK
)
_MOVED = 0x00000040 | 0x00000080
#: struct inotify_event: wd, mask, cookie, len, then len bytes of name
_EVENT = struct.Struct("iIII")


@functools.cache
def _lib() -> ctypes.CDLL | None:
    """libc with its inotify calls typed; None off Linux or where it cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: its libc
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_init1.restype = ctypes.c_int
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_add_watch.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return lib


def _git_folders(git: Path) -> list[str]:
    """``.git``, ``.git/info`` and every folder under ``.git/refs``."""
    out = [str(git), str(git / "info")]
    for top, dirs, _files in os.walk(git / "refs"):
        out.append(top)
        dirs.sort()
    return out


class QuietWatch:
    """An inotify instance over a tree's folders (see the module docstring)."""

    __slots__ = ("_fd", "_git_wds")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        #: the watches on git's own folders, where a lock file alone changes nothing
        self._git_wds: set[int] = set()

    @classmethod
    def open(cls) -> QuietWatch | None:
        """An inotify instance with no watch yet; None where there is none (not Linux)."""
        lib = _lib()
        if lib is None:
            return None
        fd = lib.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        return cls(fd) if fd >= 0 else None

    def add(self, folder: str) -> bool:
        """Watch one more folder of the tree; False (and the watch closed) when the
        kernel refuses it."""
        lib = _lib()
        if lib is None or self._fd < 0:
            return False
        if lib.inotify_add_watch(self._fd, os.fsencode(folder), _MASK) < 0:
            self.close()
            return False
        return True

    def add_git(self, root: Path) -> bool:
        """Watch ``root/.git`` and its ``info`` and ``refs`` folders (HEAD, the index,
        branches, excludes); False (and the watch closed) when one is refused."""
        lib = _lib()
        git = root / ".git"
        if lib is None or self._fd < 0 or not git.is_dir():
            self.close()
            return False
        for folder in _git_folders(git):
            wd = lib.inotify_add_watch(self._fd, os.fsencode(folder), _MASK)
            if wd < 0:
                if ctypes.get_errno() == errno.ENOENT and folder == str(git / "info"):
                    continue  # no .git/info: nothing to exclude, nothing to watch
                self.close()
                return False
            self._git_wds.add(wd)
        return True

    @classmethod
    def arm(cls, root: Path, folders: Iterable[str]) -> QuietWatch | None:
        """Watch ``folders`` (the tree's, ``.librarian`` left out) and ``root/.git``;
        None where it cannot be done (not Linux, a watch refused)."""
        if not (root / ".git").is_dir():
            return None
        watch = cls.open()
        if watch is None or not watch.add_git(root):
            return None
        if not all(watch.add(folder) for folder in folders):
            return None
        return watch

    def quiet(self) -> bool:
        """Whether no watched change happened since :meth:`arm` (a closed watch never
        is). Git takes a lock file to look (``git status`` may refresh its index and
        then drop the lock): a lock file made and dropped in git's folders changes
        nothing, and is read off the queue; anything else spoils the watch for good."""
        if self._fd < 0:
            return False
        pending = array.array("i", [0])
        try:
            fcntl.ioctl(self._fd, termios.FIONREAD, pending, True)
            if pending[0] == 0:
                return True
            data = os.read(self._fd, max(pending[0], 4096))
        except OSError:
            self.close()
            return False
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
            at += _EVENT.size + size
            if wd in self._git_wds and name.endswith(b".lock") and not mask & _MOVED:
                continue
            self.close()  # a change, or the queue overflowed (wd -1): spoiled for good
            return False
        return self.quiet()  # more may have come while reading

    def alive(self) -> bool:
        """Whether this watch is still open (a refused folder or a change closes it)."""
        return self._fd >= 0

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()
