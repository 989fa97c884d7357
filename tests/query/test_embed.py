from __future__ import annotations

import importlib.util
import platform
import socket
import sys
from pathlib import Path

import numpy as np
import pytest

from codelibrarian.query.embed import HashingEmbedder, StaticModelEmbedder, VectorIndex

from .fakes import FakeStore

HAS_STATIC = importlib.util.find_spec("static_model") is not None
# The model is a plain dependency where its wheel exists: a plain install must carry it.
MODEL_PLATFORM = sys.platform == "linux" and platform.machine() == "x86_64"


def test_plain_install_carries_the_embedding_model_on_its_platform() -> None:
    assert HAS_STATIC or not MODEL_PLATFORM


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(32)
        self.embedded: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.embedded.extend(texts)
        return super().embed(texts)


def test_sync_is_incremental_by_content_hash(tmp_path: Path) -> None:
    emb = CountingEmbedder()
    store = FakeStore({"a.py": ["parse config file"], "b.py": ["http retry backoff"]})
    vi = VectorIndex(tmp_path / "vectors.db", emb)
    try:
        first = vi.sync(store)
        assert (first.embedded, first.removed, first.skipped) == (2, 0, False)
        again = vi.sync(store)
        assert again.skipped and again.kept == 2
        # b.py changes (new chunk id, new hash), a.py stays
        store2 = FakeStore({"a.py": ["parse config file"], "b.py": ["http retry jitter"]})
        emb.embedded.clear()
        third = vi.sync(store2)
        assert third.embedded == 1 and third.removed == 0 and third.kept == 1
        assert len(emb.embedded) == 1 and "jitter" in emb.embedded[0]
        # a file disappears: its vector goes
        store3 = FakeStore({"a.py": ["parse config file"]})
        assert vi.sync(store3).removed == 1
        assert vi.count() == 1
    finally:
        vi.close()


def test_search_integer_similarity_then_id(tmp_path: Path) -> None:
    store = FakeStore({"a.py": ["alpha beta"], "b.py": ["alpha beta"], "c.py": ["gamma"]})
    vi = VectorIndex(tmp_path / "v.db", HashingEmbedder())
    try:
        vi.sync(store)
        hits = vi.search("alpha beta", 3)
        assert [h[0] for h in hits[:2]] == [1, 2]  # identical texts tie: lower id first
        # (the embedded text also holds the path and symbol, so not 1000)
        assert hits[0][1] == hits[1][1] > hits[2][1]
        assert hits[2][0] == 3
        assert all(isinstance(s, int) for _, s in hits)
    finally:
        vi.close()


def test_vectors_persist_as_float32_blobs(tmp_path: Path) -> None:
    import sqlite3

    store = FakeStore({"a.py": ["alpha"]})
    vi = VectorIndex(tmp_path / "v.db", HashingEmbedder(16))
    vi.sync(store)
    vi.close()
    conn = sqlite3.connect(tmp_path / "v.db")
    (blob,) = conn.execute("SELECT vec FROM vectors").fetchone()
    conn.close()
    vec = np.frombuffer(blob, dtype=np.float32)
    assert vec.shape == (16,) and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5


@pytest.mark.skipif(not HAS_STATIC, reason="no embedding model wheel for this platform")
def test_static_model_loads_and_embeds_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise OSError("network blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = StaticModelEmbedder()
    vecs = emb.embed(["load the configuration file", "read config from toml", "draw a circle"])
    assert vecs.shape == (3, emb.dim) and vecs.dtype == np.float32
    sims = np.rint(vecs @ vecs.T * 1000).astype(int)
    assert sims[0, 1] > sims[0, 2]  # related sentences are closer
    again = emb.embed(["load the configuration file"])
    assert np.array_equal(np.rint(again[0] * 1000), np.rint(vecs[0] * 1000))


def test_top_k_selection_matches_a_full_sort(tmp_path: Path) -> None:
    texts = {f"f{i:03d}.py": [f"word{i % 7} common{i % 3} extra{i % 11}"] for i in range(120)}
    store = FakeStore(texts)
    vi = VectorIndex(tmp_path / "v.db", HashingEmbedder(16))
    try:
        vi.sync(store)
        everything = vi.search("word3 common1", 1000)
        assert len(everything) == 120
        expected = sorted(everything, key=lambda t: (-t[1], t[0]))
        assert everything == expected
        for k in (1, 5, 17, 60):
            assert vi.search("word3 common1", k) == expected[:k]
    finally:
        vi.close()
