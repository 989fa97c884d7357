"""How close an intent is to each pattern's example intents: embeddings, or keywords.

Each pattern is represented by its own texts from the catalog (the example intents
of its situations, at least five each, the situation triggers and the pattern's
description) and by the bundled training requests labelled with it
(:mod:`.training`: the ``dev`` and ``dev2`` splits of ``benchmarks/intents/``), so
that a request is compared with real requests too: nearest-example similarity.
Compositions are represented by their name and description. (The labelled
evaluation half is never part of these texts.)

* :class:`EmbeddingMatcher` embeds those texts once with an
  :class:`~codelibrarian.query.embed.Embedder` (the bundled static model) and
  compares an intent by cosine similarity;
* :class:`KeywordMatcher` is the fallback when no embedding model is installed:
  TF-IDF cosine over stemmed words, which knows no synonyms.

A key's similarity is ``(3 x best + 2 x mean of the best three) / 5`` over its
texts — one near-identical example counts most, several close ones confirm it.
Cosines become integer per-mille (rounded) before anything is compared; the
closest text is kept for the explanation. Both are deterministic for a given
model; ties break by key.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from ..query.embed import Embedder
    from ..techniques.registry import Library

__all__ = [
    "EmbeddingMatcher",
    "HybridMatcher",
    "KeywordMatcher",
    "Match",
    "Matcher",
    "MatcherMode",
    "catalog_texts",
    "composition_texts",
    "pattern_texts",
    "split_identifiers",
    "stem",
    "words",
]

MatcherMode = Literal["embeddings", "keywords"]
_TOP = 3
#: the spread between the most and the least similar pattern that reads as a clear
#: match, per matcher (measured on the dev half of benchmarks/intents/); a smaller
#: spread is weak evidence and scores the semantic aspect lower
SPANS: Mapping[str, int] = {"embeddings": 250, "keywords": 300, "hybrid": 220}


@dataclass(frozen=True, slots=True)
class Match:
    """A key's similarity to the intent (per mille) and its closest text."""

    key: str
    similarity: int
    closest: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.key, "similarity_per_mille": self.similarity, "closest": self.closest}


class Matcher(Protocol):
    @property
    def mode(self) -> MatcherMode: ...

    @property
    def span(self) -> int:
        """How far apart (per mille) a clear match and the rest typically are."""
        ...

    @property
    def name(self) -> str: ...

    def match(self, text: str) -> dict[str, Match]: ...


def pattern_texts(library: Library) -> dict[str, tuple[str, ...]]:
    """Every pattern's catalog texts (:func:`catalog_texts`) followed by the bundled
    training requests labelled with it (``label`` or ``also``), in file order."""
    from .training import bundled

    out = {k: list(v) for k, v in catalog_texts(library).items()}
    for row in bundled():
        for key in (row.label, row.also):
            if key is not None and key in out:
                out[key].append(row.text)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def catalog_texts(library: Library) -> dict[str, tuple[str, ...]]:
    """Every pattern's example intents, situation triggers and description."""
    out: dict[str, tuple[str, ...]] = {}
    for pid in sorted(library.patterns):
        p = library.patterns[pid]
        texts: list[str] = []
        for s in p.situations:
            texts.extend(s.examples)
            texts.append(s.trigger)
        texts.append(p.description)
        out[pid] = tuple(dict.fromkeys(texts))
    return out


def composition_texts(library: Library) -> dict[str, tuple[str, ...]]:
    """Every composition's name and description."""
    return {cid: (c.name, c.description) for cid, c in sorted(library.compositions.items())}


def _combine(sims: Sequence[int]) -> int:
    best = sorted(sims, reverse=True)
    top = best[:_TOP]
    return (3 * best[0] + 2 * sum(top) // len(top)) // 5


class EmbeddingMatcher:
    """Cosine similarity with a static embedding model (texts embedded once)."""

    def __init__(self, embedder: Embedder, texts: Mapping[str, Sequence[str]]) -> None:
        self._embedder = embedder
        self._keys = sorted(texts)
        self._texts: list[str] = []
        self._owner: list[int] = []
        for i, key in enumerate(self._keys):
            for t in texts[key]:
                self._texts.append(t)
                self._owner.append(i)
        self._matrix = embedder.embed(self._texts)

    @property
    def mode(self) -> MatcherMode:
        return "embeddings"

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def span(self) -> int:
        return SPANS["embeddings"]

    def match(self, text: str) -> dict[str, Match]:
        import numpy as np

        if not self._keys:
            return {}
        q = self._embedder.embed([text])[0]
        sims = np.rint(self._matrix @ q * 1000.0).astype(np.int64).tolist()
        per: dict[int, list[tuple[int, int]]] = {}
        for row, (owner, sim) in enumerate(zip(self._owner, sims, strict=True)):
            per.setdefault(owner, []).append((int(sim), row))
        out: dict[str, Match] = {}
        for owner, rows in per.items():
            _best, best_row = max(rows, key=lambda r: (r[0], -r[1]))
            out[self._keys[owner]] = Match(
                self._keys[owner], _combine([s for s, _ in rows]), self._texts[best_row]
            )
        return out


# ------------------------------------------------------------------ keyword fallback

_WORD = re.compile(r"[a-z0-9][a-z0-9+#]*")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "has",
        "have",
        "had",
        "having",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "i",
        "me",
        "my",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "can",
        "will",
        "just",
        "should",
        "would",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "as",
        "about",
        "above",
        "after",
        "again",
        "against",
        "before",
        "below",
        "between",
        "during",
        "out",
        "off",
        "up",
        "down",
        "once",
        "further",
        "while",
        "until",
        "because",
        "also",
        "get",
        "got",
        "let",
        "lets",
        "please",
        "now",
        "one",
    ]
)
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ers", "er",
             "ed", "es", "ly", "s")  # fmt: skip


def stem(word: str) -> str:
    """A light suffix stripper: "failing"/"fails"/"failed" meet as "fail", and a final
    silent "e" goes too, so "upgrade"/"upgrades"/"upgrading" meet as "upgrad"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return base + "y"
            word = base
            break
    if word.endswith("e") and len(word) >= 5:
        return word[:-1]
    return word


#: a lower-case or digit followed by an upper-case letter, or an upper-case run before a
#: capitalised word: the seams of camelCase and PascalCase identifiers
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SNAKE = re.compile(r"(?<=[A-Za-z0-9])[_.](?=[A-Za-z])")


def split_identifiers(text: str) -> str:
    """``text`` with identifiers opened into words: ``SessionStateListener`` ->
    ``Session State Listener``, ``delete_user`` -> ``delete user``, ``README.md`` ->
    ``README md``, so that a request naming code meets the words of the catalog."""
    return _CAMEL.sub(" ", _SNAKE.sub(" ", text))


def words(text: str) -> list[str]:
    """Stemmed content words of ``text`` (identifiers opened, stop words dropped)."""
    return [
        stem(w)
        for w in _WORD.findall(split_identifiers(text).lower())
        if w not in _STOP and len(w) > 1
    ]


def _vector(counts: Counter[str], idf: Mapping[str, float]) -> dict[str, float]:
    vec = {w: (1.0 + math.log(n)) * idf.get(w, 0.0) for w, n in sorted(counts.items())}
    norm = math.sqrt(sum(v * v for v in vec.values()))
    return {w: v / norm for w, v in vec.items()} if norm else {}


class KeywordMatcher:
    """TF-IDF cosine over stemmed words: the fallback without an embedding model."""

    def __init__(self, texts: Mapping[str, Sequence[str]]) -> None:
        self._keys = sorted(texts)
        self._texts = {k: list(texts[k]) for k in self._keys}
        bags = [Counter(w for t in texts[k] for w in words(t)) for k in self._keys]
        n = len(bags)
        df: Counter[str] = Counter()
        for bag in bags:
            df.update(set(bag))
        self._idf = {w: math.log((n + 1) / (c + 1)) + 1.0 for w, c in sorted(df.items())}
        self._docs = {k: _vector(bag, self._idf) for k, bag in zip(self._keys, bags, strict=True)}
        self._rows = {
            k: [_vector(Counter(words(t)), self._idf) for t in self._texts[k]] for k in self._keys
        }

    @property
    def mode(self) -> MatcherMode:
        return "keywords"

    @property
    def name(self) -> str:
        return "tf-idf"

    @property
    def span(self) -> int:
        return SPANS["keywords"]

    def match(self, text: str) -> dict[str, Match]:
        q = _vector(Counter(words(text)), self._idf)
        out: dict[str, Match] = {}
        for key in self._keys:
            doc = self._docs[key]
            whole = round(1000 * sum(v * doc.get(w, 0.0) for w, v in q.items()))
            rows = [
                round(1000 * sum(v * r.get(w, 0.0) for w, v in q.items())) for r in self._rows[key]
            ]
            best = max(range(len(rows)), key=lambda i: (rows[i], -i)) if rows else 0
            sim = (whole + _combine(rows)) // 2 if rows else whole
            out[key] = Match(key, sim, self._texts[key][best] if rows else "")
        return out


class HybridMatcher:
    """Embeddings and keywords together: the mean of the two similarities.

    The bundled static model alone ranks a pattern's examples poorly for short
    requests (benchmarks/RESULTS.md); with the keyword score beside it, each
    covers the other's blind spot — synonyms there, rare exact terms here.
    """

    def __init__(self, dense: EmbeddingMatcher, sparse: KeywordMatcher) -> None:
        self._dense = dense
        self._sparse = sparse

    @property
    def mode(self) -> MatcherMode:
        return "embeddings"

    @property
    def name(self) -> str:
        return f"{self._dense.name}+{self._sparse.name}"

    @property
    def span(self) -> int:
        return SPANS["hybrid"]

    def match(self, text: str) -> dict[str, Match]:
        dense = self._dense.match(text)
        sparse = self._sparse.match(text)
        out: dict[str, Match] = {}
        for key in sorted(dense):
            d, s = dense[key], sparse.get(key)
            if s is None:
                out[key] = d
                continue
            closest = s.closest if s.similarity > d.similarity else d.closest
            out[key] = Match(key, (d.similarity + s.similarity) // 2, closest)
        return out
