"""The per-user parse cache: never parse the same content twice.

One SQLite file, ``parse-v1.sqlite``, in the user's cache folder
(``$LIBRARIAN_CACHE_DIR``, else ``[cache].dir``, else
``$XDG_CACHE_HOME/codelibrarian``, else ``~/.cache/codelibrarian``; folder mode
0700, file 0600). Every checkout, clone and worktree of the user shares it.

* ``entries``: a parse result keyed by ``<blob id>:<language>:<parser
  version>:<chunk cap>``: the git object id of the file's bytes, so switching
  branches, a second clone, a CI cache restore or ``git worktree add`` parse
  only blobs never seen before. Values are compressed ``marshal`` data written
  by the parse workers (``parse.encode_result``), path-free: the same bytes at
  another path reuse them.
* ``indexes``: where indexes of a repository live (keyed by the repository's
  root commits), so a fresh checkout can start from a sibling's index
  (``seed.py``) instead of writing every row again.

The cache is bounded: after a run that stored entries, the least recently used
ones are evicted until the file is under ``[cache].max_mb`` (90% of it, so
eviction does not run on every store). It is an optimisation only: any SQLite
error turns it off for the rest of the run (``broken`` says why) and the index
is built as if it were absent.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..config import CacheConfig

__all__ = ["BlobCache", "cache_dir"]

_FILE = "parse-v1.sqlite"
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries(
        key TEXT PRIMARY KEY,
        data BLOB NOT NULL,
        size INTEGER NOT NULL,
        used INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS entries_used ON entries(used)",
    """CREATE TABLE IF NOT EXISTS indexes(
        path TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        updated INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS indexes_repo ON indexes(repo)",
)
#: ``used`` is refreshed on a hit only when older than this (seconds): LRU at a day's grain
_TOUCH_AFTER = 86_400
_CHUNK = 500


def cache_dir(config: CacheConfig | None = None) -> Path:
    """The folder of the per-user cache (see the module docstring for the order)."""
    env = os.environ.get("LIBRARIAN_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    if config is not None and config.dir:
        return Path(config.dir).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "codelibrarian"


class BlobCache:
    """Parse results by content; see the module docstring. Never raises on cache trouble."""

    def __init__(self, folder: Path, *, max_bytes: int, clock: float | None = None) -> None:
        self.folder = folder
        self.path = folder / _FILE
        self.max_bytes = max_bytes
        self.broken: str | None = None
        self.hits = 0
        self.stored = 0
        self.evicted = 0
        self._now = int(clock if clock is not None else time.time())
        self._seen: list[str] = []
        self._conn: sqlite3.Connection | None = None
        for attempt in (1, 2):
            try:
                self._conn = self._connect()
                break
            except sqlite3.DatabaseError as exc:
                # a damaged cache file (say, after a power loss) is only lost work
                if attempt == 1 and getattr(exc, "sqlite_errorcode", None) in (11, 26):
                    for suffix in ("", "-wal", "-shm"):
                        with contextlib.suppress(OSError):
                            Path(str(self.path) + suffix).unlink()
                    continue
                self._fail(exc)
            except OSError as exc:
                self._fail(exc)
                break

    def _connect(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=5.0)
        try:
            if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
                # incremental vacuum gives evicted pages back to the file system
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                conn.execute("VACUUM")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = OFF")  # a cache: losing entries costs a parse
            for stmt in _SCHEMA:
                conn.execute(stmt)
        except BaseException:
            conn.close()
            raise
        return conn

    @classmethod
    def open(cls, config: CacheConfig | None = None) -> BlobCache | None:
        """The user's cache, or None when ``[cache].max_mb`` is 0."""
        cfg = config or CacheConfig()
        if cfg.max_mb <= 0:
            return None
        return cls(cache_dir(cfg), max_bytes=cfg.max_mb * 1024 * 1024)

    def _fail(self, exc: BaseException) -> None:
        self.broken = f"{type(exc).__name__}: {exc}"[:200]
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None

    @property
    def usable(self) -> bool:
        return self._conn is not None

    # -- parse results -------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        """The stored values of those ``keys`` that are present."""
        conn = self._conn
        if conn is None or not keys:
            return {}
        out: dict[str, bytes] = {}
        stale: list[str] = []
        try:
            for i in range(0, len(keys), _CHUNK):
                part = list(keys[i : i + _CHUNK])
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT key, data, used FROM entries WHERE key IN ({marks})", part
                )
                for key, data, used in rows:
                    out[key] = bytes(data)
                    if self._now - int(used) > _TOUCH_AFTER:
                        stale.append(key)
        except sqlite3.Error as exc:
            self._fail(exc)
            return {}
        self.hits += len(out)
        self._seen.extend(stale)
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store ``(key, value)`` pairs (replacing equal keys)."""
        conn = self._conn
        rows = [(k, v, len(v) + len(k), self._now) for k, v in items]
        if conn is None or not rows:
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO entries(key, data, size, used) VALUES (?, ?, ?, ?)",
                    rows,
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._fail(exc)
            return
        self.stored += len(rows)

    def finish(self) -> None:
        """Record this run's hits as recent use, then evict down to the cap."""
        conn = self._conn
        if conn is None:
            return
        try:
            seen, self._seen = self._seen, []
            for i in range(0, len(seen), _CHUNK):
                part = seen[i : i + _CHUNK]
                marks = ",".join("?" * len(part))
                conn.execute(
                    f"UPDATE entries SET used = ? WHERE key IN ({marks})", [self._now, *part]
                )
            self.evict()
        except sqlite3.Error as exc:
            self._fail(exc)

    def size_bytes(self) -> int:
        """Bytes the cache file takes (what the cap bounds)."""
        conn = self._conn
        if conn is None:
            return 0
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        return (pages - free) * size

    def evict(self) -> int:
        """Drop least recently used entries until the file is under the cap; bytes freed."""
        conn = self._conn
        if conn is None or self.size_bytes() <= self.max_bytes:
            return 0
        target = self.max_bytes * 9 // 10
        over = self.size_bytes() - target
        freed = 0
        victims: list[str] = []
        for key, size in conn.execute("SELECT key, size FROM entries ORDER BY used, key"):
            if freed >= over:
                break
            victims.append(key)
            freed += int(size)
        for i in range(0, len(victims), _CHUNK):
            part = victims[i : i + _CHUNK]
            conn.execute(f"DELETE FROM entries WHERE key IN ({','.join('?' * len(part))})", part)
        # execute() steps a pragma once (one page); executescript() runs it to the end
        conn.executescript("PRAGMA incremental_vacuum;")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.evicted += len(victims)
        return freed

    def stats(self) -> dict[str, object]:
        conn = self._conn
        entries = 0
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                entries = int(conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        return {
            "path": str(self.path),
            "entries": entries,
            "bytes": self.size_bytes() if conn is not None else 0,
            "max_bytes": self.max_bytes,
            "hits": self.hits,
            "stored": self.stored,
            "evicted": self.evicted,
            "broken": self.broken,
        }

    # -- where indexes live ---------------------------------------------------------

    def register_index(self, repo: str, index: Path) -> None:
        conn = self._conn
        if conn is None or not repo:
            return
        try:
            conn.execute(
                "INSERT OR REPLACE INTO indexes(path, repo, updated) VALUES (?, ?, ?)",
                (str(index), repo, self._now),
            )
        except sqlite3.Error as exc:
            self._fail(exc)

    def indexes_of(self, repo: str) -> list[Path]:
        """Known indexes of the repository ``repo``, most recently updated first."""
        conn = self._conn
        if conn is None or not repo:
            return []
        try:
            rows = conn.execute(
                "SELECT path FROM indexes WHERE repo = ? ORDER BY updated DESC, path", (repo,)
            ).fetchall()
        except sqlite3.Error as exc:
            self._fail(exc)
            return []
        return [Path(r[0]) for r in rows]

    def forget_index(self, index: Path) -> None:
        conn = self._conn
        if conn is None:
            return
        with contextlib.suppress(sqlite3.Error):
            conn.execute("DELETE FROM indexes WHERE path = ?", (str(index),))

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
