"""The example vote: which pattern do labelled requests worded like this one ask for?

The cue tables of :mod:`.lexicon` know the phrases someone wrote down; they miss
wording nobody thought of ("post a message to Slack when the job completes" names no
action word). This module learns the rest from labelled requests, in two halves that
count equally: a multinomial naive Bayes model over the stemmed words of a request and
its adjacent word pairs, and the labels of the request's nearest labelled neighbours.
Both are trained on

* the pattern catalog's own texts (every situation's example intents, its trigger and
  the pattern's description), and
* the bundled training requests (:mod:`.training`): the ``dev`` half of
  ``benchmarks/intents/intents.jsonl`` and the later tuning splits ``dev2.jsonl`` to
  ``dev7.jsonl``, labelled by ``benchmarks/intents/LABELLING.md``; never the ``eval`` half.

A word that appears in the examples of one pattern and not the others weighs for that
pattern; a word every pattern's examples use weighs for none. That is how the vote
weighs cues by how discriminative they are, without anyone listing them.

Counts are integers (a catalog text or a request's ``label`` counts 2, its ``also``
counts 1; smoothing adds 1). The naive Bayes half is the posterior over patterns, as
integer per mille; logarithms are summed in a fixed order (sorted features), so the same
model and text give the same integers. The neighbour half finds the :data:`NEIGHBOURS`
labelled texts whose feature sets overlap the request's most (Jaccard, per mille; ties
by training order: labelled requests in file order, then catalog texts by pattern) and
shares their similarity among their labels (a ``label`` counts 2, an ``also`` 1). The
vote is the mean of the two halves, per mille. The posterior alone is overconfident on
a word it has seen with one pattern only; the neighbours temper it with whole requests
worded alike (held-out checks: benchmarks/RESULTS.md, "Selection quality, third pass").
The reasons are the request's features that speak most for the winning pattern against
the field.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from .semantic import catalog_texts, words
from .training import Labelled, bundled

if TYPE_CHECKING:
    from ..techniques.registry import Library

__all__ = [
    "ExampleModel",
    "Labelled",
    "Vote",
    "default_model",
    "features",
]

#: integer weights of one text in the counts
CATALOG_WEIGHT = 2
LABEL_WEIGHT = 2
ALSO_WEIGHT = 1
SMOOTHING = 1
#: how many nearest labelled texts the neighbour half of the vote asks
NEIGHBOURS = 5
#: how many of the request's features the explanation names
_REASONS = 3
_CACHE_SIZE = 8


@dataclass(frozen=True, slots=True)
class Vote:
    """Per-mille posterior for every pattern and the features that decided the winner."""

    scores: Mapping[str, int]
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"scores_per_mille": dict(self.scores), "reasons": list(self.reasons)}


def features(text: str) -> tuple[str, ...]:
    """Distinct stemmed words and adjacent word pairs (``a_b``) of ``text``, sorted."""
    ws = words(text)
    pairs = (f"{a}_{b}" for a, b in pairwise(ws))
    return tuple(sorted({*ws, *pairs}))


class ExampleModel:
    """Naive Bayes over :func:`features`, trained on catalog texts and labelled requests."""

    def __init__(self, catalog: Mapping[str, Sequence[str]], labelled: Iterable[Labelled]) -> None:
        self._keys = tuple(sorted(catalog))
        counts: dict[str, Counter[str]] = {k: Counter() for k in self._keys}
        catalog_rows: list[tuple[frozenset[str], str, str | None]] = []
        for key in self._keys:
            for text in catalog[key]:
                feats = features(text)
                counts[key].update(dict.fromkeys(feats, CATALOG_WEIGHT))
                catalog_rows.append((frozenset(feats), key, None))
        self.size = 0
        rows: list[tuple[frozenset[str], str, str | None]] = []
        for row in labelled:
            self.size += 1
            feats = features(row.text)
            rows.append((frozenset(feats), row.label, row.also))
            pairs: tuple[tuple[str | None, int], ...] = (
                (row.label, LABEL_WEIGHT),
                (row.also, ALSO_WEIGHT),
            )
            for target, weight in pairs:
                if target is not None and target in counts:
                    counts[target].update(dict.fromkeys(feats, weight))
        #: the neighbour half's texts: labelled requests first, then the catalog's
        self._rows = tuple(
            (feats, label, also) for feats, label, also in (*rows, *catalog_rows) if feats
        )
        vocab = sorted(set().union(*(set(c) for c in counts.values())))
        self._vocab = frozenset(vocab)
        width = len(vocab)
        self._log: dict[str, dict[str, float]] = {}
        self._unseen: dict[str, float] = {}
        for key in self._keys:
            total = sum(counts[key].values()) + SMOOTHING * width
            self._unseen[key] = math.log(SMOOTHING / total)
            self._log[key] = {
                f: math.log((n + SMOOTHING) / total) for f, n in sorted(counts[key].items())
            }

    @property
    def keys(self) -> tuple[str, ...]:
        return self._keys

    def _loglik(self, key: str, feats: Sequence[str]) -> float:
        table, unseen = self._log[key], self._unseen[key]
        return math.fsum(table.get(f, unseen) for f in feats)

    def vote(self, text: str) -> Vote:
        """The vote over patterns for ``text`` (per mille): the mean of the naive Bayes
        posterior and the neighbours' share, with the features that decided the winner."""
        mine = features(text)
        feats = [f for f in mine if f in self._vocab]
        if not feats or not self._keys:
            return Vote(dict.fromkeys(self._keys, 0), ())
        ll = {k: self._loglik(k, feats) for k in self._keys}
        top = max(ll.values())
        odds = {k: math.exp(v - top) for k, v in ll.items()}
        total = math.fsum(odds.values())
        near = self._neighbours(frozenset(mine))
        scores = {k: (round(1000 * odds[k] / total) + near.get(k, 0)) // 2 for k in self._keys}
        best = min(self._keys, key=lambda k: (-scores[k], -ll[k], k))
        return Vote(scores, self._reasons(best, feats))

    def _neighbours(self, mine: frozenset[str]) -> dict[str, int]:
        """Per mille of the nearest texts' similarity that each pattern's labels hold."""
        sims = [
            (len(mine & feats) * 1000 // len(mine | feats), i)
            for i, (feats, _, _) in enumerate(self._rows)
        ]
        nearest = sorted(sims, key=lambda x: (-x[0], x[1]))[:NEIGHBOURS]
        held: Counter[str] = Counter()
        for sim, i in nearest:
            _, label, also = self._rows[i]
            held[label] += LABEL_WEIGHT * sim
            if also is not None:
                held[also] += ALSO_WEIGHT * sim
        total = sum(held.values())
        if not total:
            return {}
        return {k: round(1000 * n / total) for k, n in sorted(held.items()) if k in self._log}

    def _reasons(self, key: str, feats: Sequence[str]) -> tuple[str, ...]:
        """The features whose likelihood under ``key`` most exceeds their mean elsewhere."""
        others = [k for k in self._keys if k != key]

        def lift(f: str) -> int:
            mine = self._log[key].get(f, self._unseen[key])
            rest = math.fsum(self._log[k].get(f, self._unseen[k]) for k in others)
            return round(1000 * (mine - rest / max(1, len(others))))

        ranked = sorted(feats, key=lambda f: (-lift(f), f))
        return tuple(f.replace("_", " ") for f in ranked[:_REASONS] if lift(f) > 0)


_CACHE: dict[int, tuple[Library, ExampleModel]] = {}


def default_model(library: Library) -> ExampleModel:
    """The model for ``library``'s catalog and the bundled training requests, built once
    per library object (a few milliseconds)."""
    got = _CACHE.get(id(library))
    if got is not None and got[0] is library:
        return got[1]
    model = ExampleModel(catalog_texts(library), bundled())
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(library)] = (library, model)
    return model
