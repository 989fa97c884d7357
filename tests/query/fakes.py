"""A small in-memory store for per-stage unit tests (the characterization tests
use the real SQLite index)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codelibrarian.errors import NotFound
from codelibrarian.index.records import Chunk, ChunkHit, FileRecord, Symbol
from codelibrarian.query.types import Candidate, CandidateSet, LibrarianQuery
from codelibrarian.workspace.files import blob_id, content_hash

_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class FakeStore:
    """Files -> chunks; search scores by term occurrences x 1000 (integers)."""

    texts: Mapping[str, Sequence[str]]  # path -> chunk texts (each 3 lines apart)
    graphs: Mapping[str, list[tuple[str, str, int]]] = field(default_factory=dict)
    fail_search: bool = False
    calls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._chunks: dict[int, Chunk] = {}
        self._by_path: dict[str, list[Chunk]] = {}
        cid = 1
        for path in sorted(self.texts):
            out: list[Chunk] = []
            for i, text in enumerate(self.texts[path]):
                ch = Chunk(
                    cid,
                    path,
                    1 + 3 * i,
                    3 + 3 * i,
                    f"sym{cid}",
                    "function",
                    text,
                    len(text.split()),
                    content_hash(text.encode()),
                )
                self._chunks[cid] = ch
                out.append(ch)
                cid += 1
            self._by_path[path] = out
        self.hashes = {p: blob_id("\n".join(self.texts[p]).encode()) for p in self.texts}

    def files(self) -> list[FileRecord]:
        return [self.file(p) for p in sorted(self.texts)]  # type: ignore[misc]

    def file(self, path: str) -> FileRecord | None:
        if path not in self.texts:
            return None
        return FileRecord(path, "python", self.hashes[path], 10, 10, None)

    def symbols(self, path: str | None = None, name: str | None = None) -> list[Symbol]:
        return []

    def search(self, query: str, limit: int = 20) -> list[ChunkHit]:
        self.calls.append(f"search:{query}")
        if self.fail_search:
            raise RuntimeError("search exploded")
        terms = set(_WORD.findall(query.lower()))
        hits = []
        for ch in self._chunks.values():
            words = _WORD.findall(ch.text.lower())
            score = sum(1000 for w in words if w in terms)
            if score:
                hits.append(
                    ChunkHit(
                        ch.chunk_id,
                        ch.path,
                        ch.start_line,
                        ch.end_line,
                        ch.symbol,
                        ch.kind,
                        score,
                        ch.tokens,
                    )
                )
        hits.sort(key=lambda h: (-h.score, h.path, h.start_line, h.chunk_id))
        return hits[:limit]

    def chunk(self, chunk_id: int) -> Chunk:
        try:
            return self._chunks[chunk_id]
        except KeyError:
            raise NotFound(f"no chunk {chunk_id}") from None

    def chunks_for(self, path: str) -> list[Chunk]:
        return list(self._by_path.get(path, []))

    def edges(self, kind: Any) -> list[tuple[str, str, int]]:
        self.calls.append(f"edges:{kind}")
        return list(self.graphs.get(kind, []))


class FakeDense:
    """A dense index answering fixed (chunk_id, per-mille) pairs."""

    def __init__(self, pairs: list[tuple[int, int]], name: str = "fake-dense") -> None:
        self.pairs = pairs
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def count(self) -> int:
        return len(self.pairs)

    def search(self, text: str, limit: int) -> list[tuple[int, int]]:
        return self.pairs[:limit]


def query(intent: str = "parse config", **kw: Any) -> LibrarianQuery:
    kw.setdefault("as_of", 1_800_000_000)
    return LibrarianQuery(intent, **kw)


def cand(cid: int, path: str, score: int = 0, **kw: Any) -> Candidate:
    kw.setdefault("tokens", 10)
    start = kw.pop("start_line", 1)
    return Candidate(
        cid,
        path,
        start,
        start + 2,
        kw.pop("symbol", None),
        "function",
        kw.pop("tokens"),
        kw.pop("origin", "bm25"),
        score=score,
        **kw,
    )


def cset(cands: Sequence[Candidate], q: LibrarianQuery | None = None) -> CandidateSet:
    return CandidateSet(q or query(), tuple(cands))
