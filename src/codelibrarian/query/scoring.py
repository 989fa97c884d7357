"""Stage 3, scoring: documented integer signals, weighted per-mille.

Every signal is an integer in 0..1000:

========== ====== ==============================================================
signal     weight meaning
========== ====== ==============================================================
fused        300  RRF score from retrieval, divided by the best one in the set
lexical      150  BM25 score, divided by the best BM25 score in the set
semantic     100  cosine similarity per-mille from dense retrieval (negative -> 0)
graph        150  personalized PageRank of the file, divided by the best rank
path         120  share of the intent's terms found in the path's words
name         100  share of the intent's terms found in the symbol name's parts
recency       80  last change against ``as_of``: (5 - bucket) x 200, bucket 0 for
                  under a day ... 5 for a year or more (or unknown)
========== ====== ==============================================================

``score = sum(weight x signal) // 1000`` (0..1000). A candidate in a test file
(:func:`~codelibrarian.query.locate.is_test_path`) keeps 6/10 of its score unless
the intent asks about tests (``test``, ``spec``, ``fixture``, ``coverage``...): tests
repeat the code's words, so by text alone they would outrank the code a question is
about. A missing capability (no
vectors, no graph, no history) leaves its signal at 0 for every candidate, so it
cannot reorder anything. Divisions are integer; the order is total (score,
path, lines, chunk id).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..index.tokenize import identifier_parts, query_terms
from .base import MiddleStage, Stopwatch
from .locate import is_test_path
from .types import (
    Candidate,
    CandidateSet,
    PipelineContext,
    StageEstimate,
    StageEvidence,
    StageResult,
    sorted_candidates,
)

__all__ = [
    "RECENCY_BOUNDS",
    "TEST_PERMILLE",
    "WEIGHTS",
    "ScoringStage",
    "asks_about_tests",
    "intent_terms",
    "recency_bucket",
    "words_of_path",
]

WEIGHTS: dict[str, int] = {
    "fused": 300,
    "lexical": 150,
    "semantic": 100,
    "graph": 150,
    "path": 120,
    "name": 100,
    "recency": 80,
}
assert sum(WEIGHTS.values()) == 1000

#: upper bounds (seconds) of recency buckets 0..4; older (or unknown) is bucket 5
RECENCY_BOUNDS: tuple[int, ...] = (86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400, 365 * 86_400)

_STOP = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "get",
        "got",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "use",
        "used",
        "uses",
        "using",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    )
)
_SPLIT = re.compile(r"[/._\-\s]+")
#: a test file's share of its score when the intent is not about tests
TEST_PERMILLE = 600
_TEST_WORDS = frozenset(
    ("test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "pytest", "coverage")
)


def asks_about_tests(intent: str) -> bool:
    """Whether an intent is about tests (then test files keep their full score)."""
    return any(t in _TEST_WORDS for t in query_terms(intent))


def intent_terms(intent: str) -> tuple[str, ...]:
    """The intent's search terms (whole words and identifier parts), minus stop words."""
    return tuple(t for t in query_terms(intent) if len(t) > 1 and t not in _STOP)


def words_of_path(path: str) -> frozenset[str]:
    words: set[str] = set()
    for piece in _SPLIT.split(path):
        if piece:
            words.add(piece.lower())
            words.update(identifier_parts(piece))
    return frozenset(words)


def _words_of_name(name: str | None) -> frozenset[str]:
    if not name:
        return frozenset()
    words: set[str] = set()
    for piece in re.split(r"[^A-Za-z0-9_]+", name):
        if piece:
            words.add(piece.lower())
            words.update(identifier_parts(piece))
    return frozenset(words)


def recency_bucket(age_seconds: int | None) -> int:
    """0 (changed within a day) .. 5 (a year or more, or unknown); negative ages are 0."""
    if age_seconds is None:
        return 5
    for bucket, bound in enumerate(RECENCY_BOUNDS):
        if age_seconds < bound:
            return bucket
    return 5


def _share(terms: Sequence[str], words: frozenset[str]) -> int:
    if not terms or not words:
        return 0
    return sum(1 for t in terms if t in words) * 1000 // len(terms)


@dataclass(slots=True)
class ScoringStage(MiddleStage):
    """Weight the documented signals into one integer score per candidate."""

    #: ``paths -> {path: last change, epoch seconds}``; None when there is no history
    recency: Callable[[Sequence[str]], Mapping[str, int]] | None = None
    weights: Mapping[str, int] | None = None

    name: str = "scoring"
    description: str = "Score candidates with integer relevance signals"
    cacheable: bool = False

    def estimate(self, input: CandidateSet) -> StageEstimate:
        return StageEstimate(1 + len(input.candidates) // 100, 0, False)

    def execute(self, input: CandidateSet, context: PipelineContext) -> StageResult[CandidateSet]:
        watch = Stopwatch()
        weights = dict(WEIGHTS if self.weights is None else self.weights)
        cands = input.candidates
        terms = intent_terms(input.query.intent)
        top_fused = max((c.fused for c in cands), default=0)
        top_bm25 = max((c.bm25 for c in cands), default=0)
        warnings: list[str] = []
        times: Mapping[str, int] = {}
        if self.recency is not None:
            times = self.recency(sorted({c.path for c in cands}))
        else:
            warnings.append("no history: the recency signal is 0 for every candidate")
        as_of = input.query.as_of
        demote = not asks_about_tests(input.query.intent)
        demoted = 0

        scored: list[Candidate] = []
        for i, c in enumerate(cands):
            if i % 64 == 0:
                context.cancel.raise_if_cancelled(self.name)
            changed = times.get(c.path)
            age = None if changed is None else max(0, as_of - changed)
            signals = {
                "fused": c.fused * 1000 // top_fused if top_fused > 0 else 0,
                "lexical": max(0, c.bm25) * 1000 // top_bm25 if top_bm25 > 0 else 0,
                "semantic": max(0, min(1000, c.dense)),
                "graph": max(0, min(1000, c.graph_rank)),
                "path": _share(terms, words_of_path(c.path)),
                "name": _share(terms, _words_of_name(c.symbol)),
                "recency": (5 - recency_bucket(age)) * 200,
            }
            score = sum(weights.get(k, 0) * v for k, v in signals.items()) // 1000
            if demote and is_test_path(c.path):
                score = score * TEST_PERMILLE // 1000
                demoted += 1
            scored.append(replace(c, score=score, signals=tuple(sorted(signals.items()))))
        ordered = sorted_candidates(scored)
        evidence = (
            StageEvidence.of(
                "computation",
                f"scored {len(ordered)} candidates on {len(weights)} signals",
                weights=dict(sorted(weights.items())),
                terms=list(terms),
                with_history=len(times),
                tests_demoted=demoted,
            ),
        )
        return StageResult(
            CandidateSet(input.query, ordered),
            watch.ms(),
            evidence,
            tuple(warnings),
            resources=(("items", len(ordered)),),
        )
