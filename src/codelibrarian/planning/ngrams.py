"""The n-gram scorer: a linear model over a request's stemmed words and word pairs.

The example vote (:mod:`.examples`) counts words per pattern one at a time; this model
weighs them *together*: a softmax (multinomial logistic) regression over the request's
distinct stemmed words (``w:``) and adjacent word pairs (``b:``), each request's features
scaled to unit length. It learns, for instance, that "panel" next to "outage" leans away
from the incident pattern when "shows" comes with it, which a per-word count cannot.
Its ranking of the second and third choices is what the top 3 gains from (held-out
rotations: benchmarks/RESULTS.md, "Selection quality, sixth pass").

Training is deterministic and machine-independent. It reads the pattern catalog's texts
(:func:`~.semantic.catalog_texts`) and the bundled training requests (:mod:`.training`;
never the ``eval`` half), a ``label`` as the target and an ``also`` sharing a third of it;
runs :data:`ITERATIONS` full-batch Adam steps from zero weights with L2 penalty
:data:`L2`; sums in a fixed order; and computes the softmax's exponential with its own
polynomial from additions, multiplications and divisions only, which IEEE 754 rounds the
same on every machine. The weights are then rounded to integers (per mille of a logit).
Scoring a request is a sum of integers.

Training takes seconds, so the package ships the result, ``data/ngram_weights.txt``,
written by ``benchmarks/intents/export_ngrams.py``; a test checks that it equals a
fresh training run. A library whose catalog differs from the one the file was trained
on gets a model trained on first use (:func:`default_ngram_model`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from .semantic import catalog_texts, words
from .training import Labelled, bundled

if TYPE_CHECKING:
    import numpy as np

    from ..techniques.registry import Library

__all__ = [
    "ITERATIONS",
    "L2",
    "NgramModel",
    "NgramScores",
    "default_ngram_model",
    "inputs_digest",
    "ngram_features",
    "train",
]

#: full-batch optimisation steps, the L2 penalty and the Adam step size
ITERATIONS = 200
L2 = 1e-4
STEP = 0.05
#: share of a request's target that its ``also`` pattern gets
ALSO_SHARE = 1 / 3
#: integer weights are logits times this
SCALE = 1000
#: how many features the explanation names
_REASONS = 3
_FILE = "data/ngram_weights.txt"
_FORMAT = "codelibrarian-ngrams 1"
_CACHE_SIZE = 8


def ngram_features(text: str) -> tuple[str, ...]:
    """Distinct stemmed words (``w:``) and adjacent stemmed word pairs (``b:``) of
    ``text``, sorted."""
    ws = words(text)
    return tuple(sorted({*(f"w:{w}" for w in ws), *(f"b:{a}_{b}" for a, b in pairwise(ws))}))


def _readable(feature: str) -> str:
    return feature[2:].replace("_", " ")


@dataclass(frozen=True, slots=True)
class NgramScores:
    """Integer scores per pattern (per mille of a logit) and, per pattern, the request's
    features that gave it the most."""

    scores: Mapping[str, int]
    carriers: Mapping[str, tuple[str, ...]]

    def per_mille(self) -> dict[str, int]:
        """Scores spread over ``[0, 1000]`` from the lowest to the highest pattern."""
        if not self.scores:
            return {}
        lo, hi = min(self.scores.values()), max(self.scores.values())
        width = max(hi - lo, 1)
        return {k: (v - lo) * 1000 // width for k, v in self.scores.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "scores": dict(self.scores),
            "carriers": {k: list(v) for k, v in self.carriers.items()},
        }


class NgramModel:
    """Integer weights per feature and pattern (a matrix, features in sorted order) and
    a bias per pattern."""

    def __init__(
        self, keys: Sequence[str], features: Sequence[str], weights: np.ndarray,
        bias: Sequence[int], digest: str,
    ) -> None:  # fmt: skip
        self.keys = tuple(keys)
        self._pos = {f: i for i, f in enumerate(features)}
        self._features = tuple(features)
        self._weights = weights
        self._bias = tuple(int(b) for b in bias)
        self.digest = digest

    def __len__(self) -> int:
        return len(self._features)

    def score(self, text: str) -> NgramScores:
        """The scores of ``text`` and each pattern's strongest features in it."""
        import numpy as np

        feats = [f for f in ngram_features(text) if f in self._pos]
        if not feats:
            return NgramScores(dict.fromkeys(self.keys, 0), {})
        rows = self._weights[np.array([self._pos[f] for f in feats], dtype=np.int64)]
        sums = rows.sum(axis=0, dtype=np.int64).tolist()
        # a request's features are scaled to unit length in training: the same here
        norm = _isqrt_scaled(len(feats))
        scores = {k: b + s * 1000 // norm
                  for k, b, s in zip(self.keys, self._bias, sums, strict=True)}  # fmt: skip
        carriers: dict[str, tuple[str, ...]] = {}
        table = rows.T.tolist()
        for k, col in zip(self.keys, table, strict=True):
            best = sorted(range(len(feats)), key=lambda i: (-col[i], feats[i]))[:_REASONS]
            carriers[k] = tuple(_readable(feats[i]) for i in best if col[i] > 0)
        return NgramScores(scores, carriers)

    def dumps(self) -> str:
        """The model as text: a header (format, inputs digest, pattern ids, bias, feature
        count and matrix type), the features one per line, sorted, then the weight matrix
        as base64 of little-endian 16-bit integers (32-bit if one does not fit), row by
        row."""
        import numpy as np

        small = bool(self._weights.size) and int(np.abs(self._weights).max()) < 2**15
        dtype = "<i2" if small else "<i4"
        matrix = np.ascontiguousarray(self._weights, dtype=dtype).tobytes()
        head = [
            _FORMAT,
            f"inputs {self.digest}",
            "keys " + " ".join(self.keys),
            "bias " + " ".join(str(b) for b in self._bias),
            f"features {len(self._features)} {dtype}",
        ]
        return "\n".join([*head, *self._features, base64.b64encode(matrix).decode()]) + "\n"

    @classmethod
    def loads(cls, text: str) -> NgramModel:
        import numpy as np

        lines = text.splitlines()
        if len(lines) < 6 or lines[0] != _FORMAT:
            raise ValueError(f"not an n-gram weights file (expected {_FORMAT!r} first)")
        digest = lines[1].removeprefix("inputs ")
        keys = lines[2].removeprefix("keys ").split()
        bias = [int(x) for x in lines[3].removeprefix("bias ").split()]
        count, dtype = lines[4].removeprefix("features ").split()
        n = int(count)
        if dtype not in ("<i2", "<i4") or len(lines) != 6 + n:
            raise ValueError("n-gram weights file: unknown matrix type or wrong length")
        features = lines[5 : 5 + n]
        raw = np.frombuffer(base64.b64decode(lines[5 + n]), dtype=dtype)
        weights = raw.astype(np.int64).reshape(n, len(keys))
        return cls(keys, features, weights, bias, digest)


def _isqrt_scaled(n: int) -> int:
    """``round(1000 * sqrt(n))`` in integers."""
    from math import isqrt

    return (isqrt(4_000_000 * n) + 1) // 2


# ------------------------------------------------------------------------- training


def inputs_digest(catalog: Mapping[str, Sequence[str]], labelled: Iterable[Labelled]) -> str:
    """SHA-256 of the training inputs and settings (what the shipped file was made of)."""
    h = hashlib.sha256()
    h.update(f"{ITERATIONS} {L2!r} {STEP!r} {ALSO_SHARE!r} {SCALE}\n".encode())
    for key in sorted(catalog):
        for text in catalog[key]:
            h.update(f"c\t{key}\t{text}\n".encode())
    for row in labelled:
        h.update(f"l\t{row.label}\t{row.also}\t{row.text}\n".encode())
    return h.hexdigest()[:16]


def _exp(x: np.ndarray) -> np.ndarray:
    """``e**x`` for ``x <= 0`` from additions, multiplications and an exact power of two,
    so that every machine rounds it alike (a library ``exp`` may differ in the last bit)."""
    import numpy as np

    x = np.maximum(x, -60.0)
    k = np.floor(x * 1.4426950408889634 + 0.5)
    r = x - k * 0.6931471805599453
    term = np.ones_like(r)
    out = np.ones_like(r)
    for i in range(1, 14):
        term = term * r / i
        out = out + term
    return np.ldexp(out, k.astype(np.int64))


def _adam(
    param: np.ndarray,
    grad: np.ndarray,
    moments: tuple[np.ndarray, np.ndarray],
    decay: tuple[float, float],
) -> None:
    """One Adam step on ``param`` in place (``decay``: the two decay rates to the power of
    the step number)."""
    import numpy as np

    m1, m2 = moments
    b1t, b2t = decay
    m1 *= 0.9
    m1 += 0.1 * grad
    m2 *= 0.999
    m2 += 0.001 * grad * grad
    param -= STEP * (m1 / (1 - b1t)) / (np.sqrt(m2 / (1 - b2t)) + 1e-8)


def train(catalog: Mapping[str, Sequence[str]], labelled: Iterable[Labelled]) -> NgramModel:
    """The model for ``catalog`` (pattern -> texts) and ``labelled`` requests
    (module docstring); the same inputs give the same integers on every machine."""
    import numpy as np

    labelled = tuple(labelled)
    keys = tuple(sorted(catalog))
    index = {k: i for i, k in enumerate(keys)}
    k = len(keys)
    rows: list[tuple[tuple[str, ...], dict[int, float]]] = []
    for key in keys:
        for text in catalog[key]:
            rows.append((ngram_features(text), {index[key]: 1.0}))
    for row in labelled:
        if row.label not in index:
            continue
        target = {index[row.label]: 1.0}
        if row.also in index and row.also != row.label:
            target = {index[row.label]: 1.0 - ALSO_SHARE, index[row.also]: ALSO_SHARE}
        rows.append((ngram_features(row.text), target))
    rows = [r for r in rows if r[0]]
    vocab = sorted({f for feats, _ in rows for f in feats})
    pos = {f: i for i, f in enumerate(vocab)}
    flat = np.array([pos[f] for feats, _ in rows for f in feats], dtype=np.int64)
    owner = np.repeat(np.arange(len(rows)), [len(feats) for feats, _ in rows])
    starts = np.concatenate(([0], np.cumsum([len(feats) for feats, _ in rows])[:-1]))
    scale = np.array([1.0 / np.sqrt(float(len(feats))) for feats, _ in rows])[owner]
    y = np.zeros((len(rows), k))
    for i, (_, target) in enumerate(rows):
        for j, share in target.items():
            y[i, j] = share
    n, v = len(rows), len(vocab)
    w = np.zeros((v, k))
    b = np.zeros(k)
    moments = [np.zeros((v, k)), np.zeros((v, k)), np.zeros(k), np.zeros(k)]
    b1t = b2t = 1.0
    for _ in range(ITERATIONS):
        logits = np.add.reduceat(w[flat] * scale[:, None], starts, axis=0) + b
        e = _exp(logits - logits.max(axis=1, keepdims=True))
        denom = e[:, 0].copy()
        for j in range(1, k):
            denom += e[:, j]
        g = (e / denom[:, None] - y) / n
        gs = g[owner] * scale[:, None]
        per_class = [np.bincount(flat, weights=gs[:, j], minlength=v) for j in range(k)]
        gw = np.stack(per_class, axis=1) + L2 * w
        gb = np.add.reduce(g, axis=0)
        b1t *= 0.9
        b2t *= 0.999
        _adam(w, gw, (moments[0], moments[1]), (b1t, b2t))
        _adam(b, gb, (moments[2], moments[3]), (b1t, b2t))
    iw = np.rint(w * SCALE).astype(np.int64)
    keep = np.flatnonzero(np.any(iw != 0, axis=1))
    bias = np.rint(b * SCALE).astype(np.int64).tolist()
    features = [vocab[i] for i in keep.tolist()]
    return NgramModel(keys, features, iw[keep], bias, inputs_digest(catalog, labelled))


# ------------------------------------------------------------------------- the bundled model


def shipped() -> NgramModel:
    """The weights file in the package (trained on the default catalog and the bundled
    training requests)."""
    text = resources.files("codelibrarian.planning").joinpath(_FILE).read_text("utf-8")
    return NgramModel.loads(text)


_CACHE: dict[int, tuple[Library, NgramModel]] = {}


def default_ngram_model(library: Library) -> NgramModel:
    """The shipped model when ``library``'s catalog is the one it was trained on, else a
    model trained on first use; built once per library object."""
    got = _CACHE.get(id(library))
    if got is not None and got[0] is library:
        return got[1]
    catalog = catalog_texts(library)
    model = shipped()
    if model.digest != inputs_digest(catalog, bundled()):
        model = train(catalog, bundled())
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(library)] = (library, model)
    return model
