"""Dense vectors for retrieval, stored beside the index.

``tokenlearn-static-model`` (a plain dependency on Linux x86-64, the only platform
it ships a wheel for) is a static
(Model2Vec-style) embedding model with its 10k-token vocabulary and 64-dimension
int8 weights bundled in the wheel, encoded by a Rust extension. It loads with no
network (checked with ``HF_HUB_OFFLINE=1`` and sockets blocked), takes about a
second to load and embeds ~19,000 short texts a second on two cores. Where it is
not installed the library works unchanged: retrieval is keyword-only and says so.

Vectors live in a sidecar SQLite file, ``.librarian/vectors.db`` (never in the
index database, whose schema belongs to the indexer), as float32 blobs keyed by
chunk id and content hash. ``VectorIndex.sync`` re-embeds only chunks whose hash
changed and forgets chunks that are gone; a fingerprint of the index's
``(path, content_hash)`` list lets a warm query skip the check entirely. Search
is brute-force cosine in numpy; similarities become integer per-mille *before*
anything is ordered, and ties break by chunk id.
"""

from __future__ import annotations

import hashlib
import importlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import IndexCorrupt, UsageError
from ..index.tokenize import identifier_parts
from .types import QueryStore

__all__ = [
    "DenseIndex",
    "Embedder",
    "HashingEmbedder",
    "StaticModelEmbedder",
    "SyncStats",
    "VectorIndex",
    "load_embedder",
    "vectors_path",
]

#: characters of a chunk that are embedded (static models average tokens anyway)
_EMBED_CHARS = 2000
_BATCH = 512
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    chunk_id INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL,
    vec BLOB NOT NULL
);
"""


@runtime_checkable
class Embedder(Protocol):
    """Text to L2-normalised float32 vectors of a fixed dimension."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]: ...


@runtime_checkable
class DenseIndex(Protocol):
    """What retrieval needs from a vector store: top chunk ids by integer similarity."""

    @property
    def name(self) -> str: ...

    def count(self) -> int: ...

    def search(self, text: str, limit: int) -> list[tuple[int, int]]: ...


def _normalise(matrix: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float32]]:
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        m = m.reshape(1, -1)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray[Any, np.dtype[np.float32]] = (m / norms).astype(np.float32)
    return out


class StaticModelEmbedder:
    """The bundled ``tokenlearn-static-model`` (10k vocabulary, 64 dimensions, int8)."""

    def __init__(self) -> None:
        try:
            module = importlib.import_module("static_model")
        except ImportError:
            raise UsageError(
                "dense retrieval needs the `tokenlearn-static-model` package, which is"
                " installed with codelibrarian on Linux x86-64 only.",
                hint="pip install tokenlearn-static-model where a wheel exists"
                " (or run without embeddings).",
            ) from None
        self._encode: Callable[[list[str]], Any] = module.get_embeddings
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "tokenlearn-static-model/10k-64d-int8"

    @property
    def dim(self) -> int:
        return 64

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            raw = self._encode([t if t.strip() else "_" for t in texts])
        return _normalise(np.asarray(raw, dtype=np.float32))


class HashingEmbedder:
    """A deterministic bag-of-identifier-parts embedder (feature hashing, blake2b).

    No model, no dependency: it exists so tests and benchmarks can exercise the
    dense path without the extra. Texts sharing words get similar vectors; it
    knows nothing of meaning.
    """

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing/{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _bucket(self, word: str) -> tuple[int, float]:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "big")
        return value % self._dim, 1.0 if (value >> 32) & 1 else -1.0

    def embed(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _words(text):
                col, sign = self._bucket(word)
                out[row, col] += sign
        return _normalise(out)


def _words(text: str) -> list[str]:
    words: list[str] = []
    for raw in "".join(c if c.isalnum() or c == "_" else " " for c in text).split():
        words.append(raw.lower())
        words.extend(identifier_parts(raw))
    return words


def load_embedder() -> Embedder | None:
    """The bundled static model when it is installed (Linux x86-64), else None."""
    try:
        return StaticModelEmbedder()
    except UsageError:
        return None


def vectors_path(root: Path) -> Path:
    """Where the sidecar vector store of ``root`` lives (``.librarian/vectors.db``)."""
    return root / ".librarian" / "vectors.db"


@dataclass(frozen=True, slots=True)
class SyncStats:
    embedded: int
    removed: int
    kept: int
    skipped: bool  # the fingerprint matched: nothing was read

    def to_dict(self) -> dict[str, int | bool]:
        return {
            "embedded": self.embedded,
            "removed": self.removed,
            "kept": self.kept,
            "skipped": self.skipped,
        }


def _chunk_text(path: str, symbol: str | None, text: str) -> str:
    return f"{path}\n{symbol or ''}\n{text[:_EMBED_CHARS]}"


class VectorIndex:
    """Chunk vectors in a sidecar SQLite file, searched by brute-force cosine."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.path = path
        self.embedder = embedder
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA busy_timeout = 30000")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(
                f"cannot open the vector store at {path} ({exc}).",
                hint="Delete the file; it is rebuilt from the index on the next query.",
            ) from None
        self._matrix: np.ndarray[Any, np.dtype[np.float32]] | None = None
        self._ids: np.ndarray[Any, np.dtype[np.int64]] | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.embedder.name

    def close(self) -> None:
        self._conn.close()

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    @staticmethod
    def fingerprint(store: QueryStore, model: str) -> str:
        h = hashlib.sha256(model.encode("utf-8"))
        for rec in store.files():
            h.update(f"\x1f{rec.path}\x1e{rec.content_hash}".encode())
        return h.hexdigest()

    def sync(
        self, store: QueryStore, *, progress: Callable[[int, int], None] | None = None
    ) -> SyncStats:
        """Bring the vectors in line with the index; cheap when nothing changed."""
        fp = self.fingerprint(store, self.embedder.name)
        if self._meta("fingerprint") == fp and self._meta("model") == self.embedder.name:
            return SyncStats(0, 0, self.count(), True)
        if self._meta("model") != self.embedder.name:
            self._conn.execute("DELETE FROM vectors")
        have = dict(self._conn.execute("SELECT chunk_id, content_hash FROM vectors").fetchall())
        todo: list[tuple[int, str, str]] = []
        live: set[int] = set()
        files = store.files()
        for rec in files:
            for ch in store.chunks_for(rec.path):
                live.add(ch.chunk_id)
                if have.get(ch.chunk_id) != ch.content_hash:
                    todo.append(
                        (ch.chunk_id, ch.content_hash, _chunk_text(ch.path, ch.symbol, ch.text))
                    )
        gone = sorted(set(have) - live)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for i in range(0, len(gone), _BATCH):
                part = gone[i : i + _BATCH]
                marks = ",".join("?" * len(part))
                self._conn.execute(f"DELETE FROM vectors WHERE chunk_id IN ({marks})", part)
            for i in range(0, len(todo), _BATCH):
                batch = todo[i : i + _BATCH]
                vecs = self.embedder.embed([t for _, _, t in batch])
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors(chunk_id, content_hash, vec) VALUES (?, ?, ?)",
                    [
                        (cid, digest, vecs[j].astype(np.float32).tobytes())
                        for j, (cid, digest, _) in enumerate(batch)
                    ],
                )
                if progress is not None:
                    progress(min(i + _BATCH, len(todo)), len(todo))
            self._conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [("fingerprint", fp), ("model", self.embedder.name)],
            )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        with self._lock:
            self._matrix = None
            self._ids = None
        return SyncStats(len(todo), len(gone), len(live) - len(todo), False)

    def _load(self) -> tuple[np.ndarray[Any, np.dtype[np.float32]], np.ndarray[Any, Any]]:
        with self._lock:
            if self._matrix is None or self._ids is None:
                rows = self._conn.execute(
                    "SELECT chunk_id, vec FROM vectors ORDER BY chunk_id"
                ).fetchall()
                dim = self.embedder.dim
                self._ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                matrix = np.zeros((len(rows), dim), dtype=np.float32)
                for i, (_, blob) in enumerate(rows):
                    matrix[i] = np.frombuffer(blob, dtype=np.float32, count=dim)
                self._matrix = matrix
            return self._matrix, self._ids

    def search(self, text: str, limit: int) -> list[tuple[int, int]]:
        """Top ``limit`` ``(chunk_id, cosine per-mille)``: integer similarity, then id."""
        matrix, ids = self._load()
        if limit <= 0 or len(ids) == 0:
            return []
        q = self.embedder.embed([text])[0]
        sims = np.rint(matrix @ q * 1000.0).astype(np.int64)
        pool = np.arange(len(ids))
        if len(ids) > limit:
            # every chunk at or above the limit-th best integer similarity (ties included)
            kth = np.partition(sims, len(sims) - limit)[len(sims) - limit]
            pool = np.nonzero(sims >= kth)[0]
        # the integers decide: highest similarity first, then the lower chunk id
        order = pool[np.lexsort((ids[pool], -sims[pool]))][:limit]
        return [(int(ids[i]), int(sims[i])) for i in order]
