"""Matchers: keyword TF-IDF, embeddings (a deterministic hashing embedder here), hybrid."""

from __future__ import annotations

from codelibrarian.planning.semantic import (
    EmbeddingMatcher,
    HybridMatcher,
    KeywordMatcher,
    pattern_texts,
    stem,
    words,
)
from codelibrarian.query.embed import HashingEmbedder
from codelibrarian.techniques.registry import default_library

TEXTS = {
    "a": ("the login fails with an error", "users cannot sign in"),
    "b": ("the page is slow to load", "memory keeps growing"),
}


def test_stem_and_words() -> None:
    assert stem("failing") == stem("fails") == stem("failed") == "fail"
    assert stem("queries") == "query"
    assert words("Why is THE login failing?") == ["login", "fail"]


def test_keyword_matcher_ranks_by_shared_rare_words() -> None:
    m = KeywordMatcher(TEXTS)
    got = m.match("login keeps failing")
    assert got["a"].similarity > got["b"].similarity
    assert got["a"].closest == "the login fails with an error"
    assert all(0 <= x.similarity <= 1000 for x in got.values())
    assert m.match("zzz")["a"].similarity == 0


def test_embedding_matcher_is_deterministic_integer_similarity() -> None:
    m = EmbeddingMatcher(HashingEmbedder(), TEXTS)
    one, two = m.match("the page loads slowly"), m.match("the page loads slowly")
    assert one == two
    assert isinstance(one["b"].similarity, int)
    h = HybridMatcher(m, KeywordMatcher(TEXTS))
    both = h.match("the page loads slowly")
    assert both["b"].similarity == (one["b"].similarity + KeywordMatcher(TEXTS).match(
        "the page loads slowly")["b"].similarity) // 2  # fmt: skip
    assert h.mode == "embeddings" and "+" in h.name


def test_pattern_texts_are_the_catalogs_own() -> None:
    texts = pattern_texts(default_library())
    assert len(texts) == 16
    assert all(len(t) >= 6 for t in texts.values())
    assert "Why is the login failing?" in texts["pattern_bug_investigation"]
