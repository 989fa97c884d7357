"""Matchers: keyword TF-IDF, embeddings (a deterministic hashing embedder here), hybrid."""

from __future__ import annotations

from codelibrarian.planning.semantic import (
    EmbeddingMatcher,
    HybridMatcher,
    KeywordMatcher,
    catalog_texts,
    pattern_texts,
    split_identifiers,
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
    assert stem("upgrade") == stem("upgrades") == stem("upgrading") == stem("upgraded")
    assert stem("release") == stem("released") == stem("releases")
    assert words("Why is THE login failing?") == ["login", "fail"]


def test_identifiers_open_into_words() -> None:
    assert split_identifiers("SessionStateListener") == "Session State Listener"
    assert (
        split_identifiers("HTTPServer delete_user README.md") == "HTTP Server delete user README md"
    )
    assert words("excluirProduto() fails") == ["excluir", "produto", "fail"]
    assert split_identifiers("v1.2.3 and 12.03.2023") == "v1.2.3 and 12.03.2023"


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


def test_pattern_texts_are_the_catalogs_then_the_training_requests() -> None:
    lib = default_library()
    catalog, texts = catalog_texts(lib), pattern_texts(lib)
    assert len(catalog) == len(texts) == 16
    assert all(len(t) >= 6 for t in catalog.values())
    assert "Why is the login failing?" in catalog["pattern_bug_investigation"]
    for key, own in catalog.items():
        assert texts[key][: len(own)] == own
        assert len(texts[key]) > len(own)
