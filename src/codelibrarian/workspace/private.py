"""Private files: everything under ``.librarian/`` is mode 0600, folders 0700.

The state folder holds decision sidecars, Local Context Packs, run journals and
an index of the workspace: nothing another user of the machine should read. Every
writer goes through these helpers, which create files and folders private
whatever the umask, and :func:`harden` repairs a tree written before (or by
another tool): it is what ``State.ensure`` runs when it finds the folder open,
and what ``doctor`` reports.

Writes are atomic (a private temporary file renamed into place) except
:func:`private_append`, which appends one record to a log.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "harden",
    "loose_modes",
    "private_append",
    "private_dir",
    "private_touch",
    "private_write",
]

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) mode 0700; tighten it if it exists."""
    missing: list[Path] = []
    p = Path(path)
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=DIR_MODE)
    _tighten(Path(path), DIR_MODE)
    return Path(path)


def _tighten(path: Path, mode: int) -> None:
    try:
        st = path.lstat()
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        return
    if stat.S_IMODE(st.st_mode) & ~mode:
        with contextlib.suppress(OSError):
            path.chmod(stat.S_IMODE(st.st_mode) & mode)


def private_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically, mode 0600 (parents created 0700)."""
    path = Path(path)
    private_dir(path.parent)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(raw)
        tmp.replace(path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def private_append(path: Path, text: str, *, sync: bool = False) -> None:
    """Append ``text`` to ``path`` (created mode 0600; an existing file is tightened);
    ``sync`` waits until it is on disk."""
    path = Path(path)
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        if stat.S_IMODE(os.fstat(fh.fileno()).st_mode) & ~FILE_MODE:
            os.fchmod(fh.fileno(), FILE_MODE)
        fh.write(text)
        if sync:
            fh.flush()
            os.fsync(fh.fileno())


def private_touch(path: Path) -> None:
    """Create ``path`` empty and private when it does not exist (SQLite then gives its
    journal, WAL and shared-memory files the same mode). An existing parent folder is
    left as it is: ``State.ensure`` tightens a loose state folder with all it holds."""
    path = Path(path)
    if not path.parent.is_dir():
        private_dir(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    _tighten(path, FILE_MODE)


def loose_modes(root: Path) -> list[Path]:
    """Files (not 0600-or-tighter) and folders (not 0700-or-tighter) under ``root``."""
    out: list[Path] = []
    if not root.is_dir():
        return out
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if _loose(here, DIR_MODE):
            out.append(here)
        for name in files:
            if _loose(here / name, FILE_MODE):
                out.append(here / name)
        dirs.sort()
    return sorted(out)


def _loose(path: Path, mode: int) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return not stat.S_ISLNK(st.st_mode) and bool(stat.S_IMODE(st.st_mode) & ~mode)


def harden(root: Path) -> int:
    """Tighten every file (0600) and folder (0700) under ``root``; how many were changed."""
    fixed = 0
    for path in loose_modes(root):
        _tighten(path, DIR_MODE if path.is_dir() else FILE_MODE)
        fixed += 1
    return fixed
