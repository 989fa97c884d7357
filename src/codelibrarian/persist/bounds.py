"""Caps on the state folder: the decision log and the composition cache stay bounded.

Every composition appends a decision record and writes a private sidecar and a
cache entry; without a cap ``.librarian/`` grows by tens of megabytes a day of
heavy use. The caps are ``[state]`` in ``librarian.toml`` (docs/configuration.md):

* **decisions** (``decisions/*.jsonl`` day logs and ``decisions/private/*.json``
  sidecars): files older than ``decisions_max_age_days`` are removed, then the
  oldest files until the folder is under ``decisions_max_mb``. When the newest
  day log alone is over the cap, its oldest records are dropped (the file is
  rewritten keeping the newest records that fit half the cap). ``explain`` and
  ``replay`` of an evicted decision answer ``not_found``.
* **cache** (``cache/*.json``): entries past their time-to-live, then the least
  recently used until under ``cache_max_entries`` and ``cache_max_mb``
  (:class:`~codelibrarian.persist.cache.DiskCache` does this on every write).

Eviction reads the wall clock (it is the shell's housekeeping; nothing it does
reaches an output). ``usage`` reports a folder's files and bytes for ``doctor``.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from ..workspace.private import private_write

__all__ = ["Usage", "prune_decisions", "usage"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Files and bytes under a folder, and the oldest file's modification time."""

    files: int
    bytes: int
    oldest: int | None

    def to_dict(self) -> dict[str, int | None]:
        return {"files": self.files, "bytes": self.bytes, "oldest": self.oldest}


def _files(directory: Path) -> list[tuple[int, str, int, str]]:
    """(mtime, name, size, path) of every file under ``directory``, oldest first; files
    whose name starts with a dot (temporary files being written, locks) are not listed.

    Plain strings: this runs twice per composition over every decision file kept,
    so it stays clear of ``Path`` arithmetic per file."""
    out: list[tuple[int, str, int, str]] = []
    if not directory.is_dir():
        return out
    top = str(directory)
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        rel_folder = os.path.relpath(folder, top)
        prefix = "" if rel_folder == "." else rel_folder + os.sep
        for name in names:
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)  # noqa: PTH118 - per file, see the docstring
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out.append((int(st.st_mtime), prefix + name, st.st_size, path))
    out.sort(key=lambda row: (row[0], row[1]))
    return out


def usage(directory: Path) -> Usage:
    """How much ``directory`` holds."""
    rows = _files(directory)
    return Usage(len(rows), sum(r[2] for r in rows), rows[0][0] if rows else None)


def prune_decisions(directory: Path, *, max_bytes: int, max_age_seconds: int, now: int) -> int:
    """Evict decision logs and sidecars (see the module docstring); how many files went."""
    rows = _files(directory)
    removed = 0
    kept: list[tuple[int, str, int, str]] = []
    for row in rows:
        if now - row[0] > max_age_seconds:
            with contextlib.suppress(OSError):
                Path(row[3]).unlink()
                removed += 1
        else:
            kept.append(row)
    total = sum(r[2] for r in kept)
    logs = [r for r in kept if r[3].endswith(".jsonl")]
    newest_log = logs[-1][3] if logs else None
    for _, _, size, path in kept:
        if total <= max_bytes:
            break
        if path == newest_log:
            continue  # today's records go last: trimmed below, not deleted
        with contextlib.suppress(OSError):
            Path(path).unlink()
            removed += 1
        total -= size
    if total > max_bytes and newest_log is not None:
        _trim_log(Path(newest_log), max_bytes // 2)
    return removed


def _trim_log(path: Path, keep_bytes: int) -> None:
    """Rewrite a JSON-lines log keeping its newest records within ``keep_bytes``."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except OSError:
        return
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line.encode("utf-8"))
        if size > keep_bytes:
            break
        kept.append(line)
    with contextlib.suppress(OSError):
        private_write(path, "".join(reversed(kept)))
