"""File ranking shared by the structure and retrieved lanes.

One ranking per composition (memoized on the :class:`SourceContext`), from four
integer signals, each normalized to 0..1000:

- **text**: BM25 over the index's chunks for the trigger's keywords (plus crude
  singular forms: the index does not stem), per file ``best + (second + third)
  / 2``; files the index did not parse as code (prose, markup, templates,
  data) count 40%; in
  diff mode a second query made of the identifiers on the change's ``+``/``-``
  lines adds 3/5 of its file score.
- **path**: how many keywords (or their singular forms) name a part of the
  file's path (350 each).
- **graph**: personalized PageRank over the combined ref/import/co-change
  graph, seeded by the changed and explicit files (weight 1000 each) and the
  top ten text files (weight = their text score); normalized by the largest
  rank of a non-seed file.
- **recency**: the file's git recency bucket x 200.

``score = (50 text + 15 path + 30 graph + 5 recency) / 100``. Test files
(``test_*``, ``*_test.*``, ``*.test.*``, ``*.spec.*``, files under ``test/``
or ``tests/``) are ranked apart: the retrieved lane offers them as
``test_context``. Changed files are excluded (the local lane carries them), so
are rule and constraint documents (the rules and policy lanes carry them) and
sensitive paths.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..index.languages import LANGUAGES
from ..index.records import ChunkHit
from ..trigger import split_identifier
from .base import SourceContext
from .rules import find_rule_files

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FileRank", "Ranking", "diff_identifiers", "is_test_path", "rank_files"]

_TASK_HITS = 200
_DIFF_HITS = 120
_SEEDS_FROM_TEXT = 10
_W_TEXT, _W_PATH, _W_GRAPH, _W_RECENCY = 50, 15, 30, 5
_PR_ITERATIONS = 60

_CODE_TEXT = """
    self cls this true false none null nil return def class function func fn var let const
    import from export default async await if else elif for while in is not and or new try
    except catch finally raise throw with as pass break continue yield lambda static public
    private protected void int str string bool float list dict set tuple any object type
    package struct impl pub use mod match case switch interface extends implements super
    args kwargs err error ok value result data
    """
_CODE_WORDS = frozenset(_CODE_TEXT.split())
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


_CODE_LANGUAGES = frozenset(lang.name for lang in LANGUAGES)
_DOC_PERMILLE = 400


def code_languages(ctx: SourceContext) -> dict[str, str]:
    """Path -> index language, for every indexed file (cached per index generation)."""
    shared = ctx.memo.setdefault("shared", {})
    langs = shared.get("ranking.languages")
    if langs is None:
        langs = {r.path: r.language for r in ctx.store.files()} if ctx.store is not None else {}
        shared["ranking.languages"] = langs
    result: dict[str, str] = langs
    return result


def is_code(ctx: SourceContext, path: str) -> bool:
    """Whether the index parsed ``path`` as source code (not prose, markup or data)."""
    return code_languages(ctx).get(path) in _CODE_LANGUAGES


def variants(word: str) -> list[str]:
    """Crude singular/stem forms (``loggers`` -> ``logger``), since the index does not stem."""
    out: list[str] = []
    if len(word) > 4 and word.endswith("ies"):
        out.append(word[:-3] + "y")
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        out.append(word[:-1])
    if len(word) > 5 and word.endswith("ing"):
        out.append(word[:-3])
    if len(word) > 4 and word.endswith("ed"):
        out.append(word[:-2])
        out.append(word[:-1])
    return [w for w in out if len(w) >= 3]


def is_test_path(path: str) -> bool:
    """Whether ``path`` looks like a test file by its name or folder."""
    parts = path.lower().split("/")
    name = parts[-1]
    if any(p in ("test", "tests", "__tests__", "spec", "testing") for p in parts[:-1]):
        return True
    stem = name.split(".")[0]
    return (
        stem.startswith("test_")
        or stem.endswith(("_test", "_tests", "_spec"))
        or ".test." in name
        or ".spec." in name
        or stem in ("test", "tests", "conftest")
    )


def diff_identifiers(ctx: SourceContext, limit: int = 40) -> list[str]:
    """Identifiers on the change's ``+``/``-`` lines and hunk headers, most frequent first."""
    counts: Counter[str] = Counter()
    for diff in ctx.changes:
        for hunk in diff.hunks:
            header_ctx = hunk.header.split("@@")[-1]
            for m in _IDENT.finditer(header_ctx):
                counts[m.group(0)] += 2
            for line in hunk.lines:
                if line[:1] in ("+", "-"):
                    for m in _IDENT.finditer(line[1:]):
                        counts[m.group(0)] += 1
    words = [w for w in counts if w.lower() not in _CODE_WORDS]
    words.sort(key=lambda w: (-counts[w], w))
    return words[:limit]


@dataclass(frozen=True, slots=True)
class FileRank:
    path: str
    score: int
    text: int
    path_match: int
    graph: int
    recency: int
    hits: tuple[ChunkHit, ...]
    is_test: bool


@dataclass(frozen=True, slots=True)
class Ranking:
    files: tuple[FileRank, ...]  # best first, non-test
    tests: tuple[FileRank, ...]  # best first
    graph_rank: dict[str, int]  # raw ppm for every node
    sensitive: tuple[str, ...] = ()  # sensitive files among the text hits / explicit files

    def top(self, n: int) -> tuple[FileRank, ...]:
        return self.files[:n]


def _file_scores(hits: Sequence[ChunkHit]) -> dict[str, tuple[int, list[ChunkHit]]]:
    by_file: dict[str, list[ChunkHit]] = defaultdict(list)
    for h in hits:
        by_file[h.path].append(h)
    out: dict[str, tuple[int, list[ChunkHit]]] = {}
    for path, items in by_file.items():
        items.sort(key=lambda h: (-h.score, h.start_line, h.chunk_id))
        s = [max(0, h.score) for h in items[:3]]
        score = s[0] + sum(s[1:]) // 2
        out[path] = (score, items)
    return out


def _normalize(values: dict[str, int]) -> dict[str, int]:
    top = max(values.values(), default=0)
    if top <= 0:
        return dict.fromkeys(values, 0)
    return {k: v * 1000 // top for k, v in values.items()}


@dataclass(frozen=True, slots=True)
class _Graph:
    """The combined graph as arrays, built once per index generation."""

    order: tuple[str, ...]
    index: dict[str, int]
    src: np.ndarray
    dst: np.ndarray
    norm: np.ndarray
    dangling: np.ndarray


def _graph(ctx: SourceContext) -> _Graph:
    import numpy as np  # imported on use: a cache-hit compose never needs it

    shared = ctx.memo.setdefault("shared", {})
    cached = shared.get("ranking.graph")
    if isinstance(cached, _Graph):
        return cached
    store = ctx.store
    assert store is not None
    packed = store.combined_graph()  # the combined edges, stored with the index
    order = packed.order
    index = {name: i for i, name in enumerate(order)}
    n = len(order)
    src = np.frombuffer(packed.src, dtype="<i8")
    dst = np.frombuffer(packed.dst, dtype="<i8")
    wts = np.frombuffer(packed.weight, dtype="<i8").astype(np.float64)
    out = np.bincount(src, weights=wts, minlength=n) if n else np.zeros(0)
    norm = wts / out[src] if len(src) else np.zeros(0)
    graph = _Graph(order, index, src, dst, norm, out == 0)
    shared["ranking.graph"] = graph
    return graph


def _pagerank(ctx: SourceContext, seeds: dict[str, int]) -> dict[str, int]:
    """Personalized PageRank (damping 0.85) in parts per million, over cached arrays.

    The same walk as ``index.graph.pagerank`` (combined edges are already merged and
    sorted), without rebuilding the arrays for every composition.
    """
    import numpy as np  # imported on use: a cache-hit compose never needs it

    g = _graph(ctx)
    n = len(g.order)
    if n == 0:
        return {}
    p = np.zeros(n, dtype=np.float64)
    for name in sorted(seeds):
        i = g.index.get(name)
        if i is not None and seeds[name] > 0:
            p[i] = float(seeds[name])
    total = p.sum()
    p = np.full(n, 1.0 / n) if total <= 0 else p / total
    r = p.copy()
    for _ in range(_PR_ITERATIONS):
        flow = np.bincount(g.dst, weights=r[g.src] * g.norm, minlength=n)
        nxt = 0.85 * (flow + r[g.dangling].sum() * p) + 0.15 * p
        delta = float(np.abs(nxt - r).sum())
        r = nxt
        if delta < 1e-9:
            break
    ppm = np.rint(r * 1_000_000).astype(np.int64)
    return {name: int(ppm[i]) for i, name in enumerate(g.order)}


def rank_files(ctx: SourceContext) -> Ranking:
    """The ranking for this composition (computed once; empty without an index)."""
    cached = ctx.memo.get("ranking")
    if isinstance(cached, Ranking):
        return cached
    ranking = _rank(ctx)
    ctx.memo["ranking"] = ranking
    return ranking


def _rank(ctx: SourceContext) -> Ranking:
    store = ctx.store
    if store is None:
        return Ranking((), (), {})
    changed = set(ctx.changed_paths)
    keywords = list(ctx.trigger.keywords)
    text_raw: dict[str, int] = {}
    hits_by_file: dict[str, list[ChunkHit]] = {}
    if keywords:
        query = " ".join(dict.fromkeys([*keywords, *(v for k in keywords for v in variants(k))]))
        for path, (score, items) in _file_scores(store.search(query, _TASK_HITS)).items():
            text_raw[path] = score
            hits_by_file[path] = items
    diff_words = diff_identifiers(ctx) if ctx.changes else []
    if diff_words:
        diff_scores = _file_scores(store.search(" ".join(diff_words), _DIFF_HITS))
        for path, (score, items) in diff_scores.items():
            text_raw[path] = text_raw.get(path, 0) + score * 3 // 5
            merged = {h.chunk_id: h for h in hits_by_file.get(path, [])}
            for h in items:
                merged.setdefault(h.chunk_id, h)
            hits_by_file[path] = sorted(
                merged.values(), key=lambda h: (-h.score, h.start_line, h.chunk_id)
            )
    for path in list(text_raw):
        if not is_code(ctx, path):
            text_raw[path] = text_raw[path] * _DOC_PERMILLE // 1000
    text = _normalize(text_raw)

    seeds: dict[str, int] = {}
    for path in sorted(changed | set(ctx.trigger.files)):
        seeds[path] = 1000
    top_text = sorted(text, key=lambda p: (-text[p], p))[:_SEEDS_FROM_TEXT]
    for path in top_text:
        seeds[path] = max(seeds.get(path, 0), 1, text[path])
    ranks = _pagerank(ctx, seeds)
    non_seed = {p: r for p, r in ranks.items() if p not in changed and p not in ctx.trigger.files}
    graph = _normalize(non_seed)

    kw = set(keywords) | {v for k in keywords for v in variants(k)}
    shared = ctx.memo.setdefault("shared", {})
    rule_files = shared.get("ranking.rule_files")
    if rule_files is None:
        found = shared.get("rules.files")
        if found is None:
            found = find_rule_files(ctx.files, ctx.config.rules.files)
            shared["rules.files"] = found
        rule_files = {p for p, _ in found}
        rule_files.update(ctx.config.policy.constraint_docs)
        shared["ranking.rule_files"] = rule_files
    path_parts: dict[str, frozenset[str]] = shared.setdefault("ranking.path_parts", {})
    candidates = set(text) | {p for p, _ in sorted(graph.items(), key=lambda x: -x[1])[:200]}
    candidates |= set(ctx.trigger.files)
    files: list[FileRank] = []
    tests: list[FileRank] = []
    sensitive: list[str] = []
    for path in sorted(candidates):
        if path in changed or path in rule_files or not ctx.has_file(path):
            continue
        if ctx.sensitive(path):
            if path in text or path in ctx.trigger.files:
                sensitive.append(path)
            continue
        parts = path_parts.get(path)
        if parts is None:
            parts = frozenset(split_identifier(path)) | {
                posixpath.splitext(posixpath.basename(path))[0].lower()
            }
            path_parts[path] = parts
        path_match = min(1000, 350 * len(kw & parts))
        recency = ctx.recency.get(path, 0) * 200
        g = graph.get(path, 0)
        t = text.get(path, 0)
        score = (_W_TEXT * t + _W_PATH * path_match + _W_GRAPH * g + _W_RECENCY * recency) // 100
        if path in ctx.trigger.files:
            score = max(score, 1000)
        if score <= 0:
            continue
        rank = FileRank(
            path,
            min(1000, score),
            t,
            path_match,
            g,
            recency,
            tuple(hits_by_file.get(path, ())),
            is_test_path(path),
        )
        (tests if rank.is_test else files).append(rank)
    files.sort(key=lambda r: (-r.score, r.path))
    tests.sort(key=lambda r: (-r.score, r.path))
    sensitive.sort(key=lambda p: (-text.get(p, 0), p))
    return Ranking(tuple(files), tuple(tests), ranks, tuple(sensitive[:5]))
