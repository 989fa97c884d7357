"""Locate: rank the files a task will touch, then the spans inside them.

The retrieval stack shared by ``compose`` (the retrieved and structure lanes) and
``query``. Three stages, each reported with its counts:

1. **retrieval** — BM25 over the index's chunks for the task's keywords (plus
   crude singular forms, the index does not stem); in diff mode a second query
   made of the identifiers on the change's lines; look-ups of the task's
   identifiers among symbol names; quoted strings (error messages, log lines)
   found verbatim in chunk text.
2. **expansion** — personalized PageRank over the combined reference / import /
   co-change graph, seeded by the changed and explicit files and the best text
   matches; in diff mode the files that co-changed with the changed files and the
   files that reference the symbols the change touches (its callers).
3. **scoring** — one integer score per file (0..1000) from its signals, each
   normalized to 0..1000 and weighted per mille (:data:`FILE_WEIGHTS`, separate
   weights for a task with a diff); files the index did not parse as code count
   6/10. Then, for the files a caller asks about, one score per span
   (:func:`rank_spans`): chunk BM25, how many task words the symbol's name and
   the body carry, and, in diff mode, the change's identifiers it uses.

Every signal can be switched off by name (``LocateRequest.off``, used by the
ablation benchmark): ``text``, ``path``, ``graph``, ``names``, ``quoted``,
``cochange``, ``callers``, ``diff_text``, ``span_names``, ``span_body``, and
``coedit`` and ``commits`` (applied after locate, by ``sources/ranking.py``).

Scores are integers and every order has a total key ending in a path or id.
Weights were fitted on the tuning repositories of benchmarks/ctxbench.md
(never on its held-out split).
"""

from __future__ import annotations

import heapq
import posixpath
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, overload

from ..index import layouts as stored_layouts
from ..index.records import Chunk, ChunkHit
from ..index.tokenize import name_parts

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import Storage

__all__ = [
    "FILE_WEIGHTS",
    "SIGNALS",
    "LocateRequest",
    "Located",
    "LocatedFile",
    "Span",
    "Stage",
    "is_test_path",
    "layout_record",
    "locate",
    "quoted_strings",
    "rank_spans",
    "variants",
    "warm_layout",
]

#: every signal name :class:`LocateRequest.off` accepts
SIGNALS: tuple[str, ...] = (
    "text",
    "path",
    "graph",
    "names",
    "quoted",
    "cochange",
    "callers",
    "diff_text",
    "span_names",
    "span_body",
    "coedit",
    "commits",
    "lead_depth",
)

#: per-mille file weights without and with a diff (fitted, see the module docstring)
FILE_WEIGHTS: Mapping[str, Mapping[str, int]] = {
    "intent": {"text": 420, "path": 150, "graph": 150, "names": 200, "quoted": 300},
    "diff": {
        "text": 450,
        "path": 200,
        "graph": 80,
        "names": 50,
        "quoted": 300,
        "cochange": 120,
        "callers": 100,
    },
}
_NON_CODE_PERMILLE = 600
_TASK_HITS = 200
_DIFF_HITS = 120
_SEEDS_FROM_TEXT = 10
_PR_ITERATIONS = 60
#: PageRank stops once a step moves less than this in all (L1; see :func:`pagerank`)
PR_TOLERANCE = 1e-6
_GRAPH_CANDIDATES = 200
_QUOTED_MIN = 6

_QUOTED = re.compile(r"""["'`]([^"'`\n]{6,200})["'`]""")


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


def quoted_strings(text: str) -> tuple[str, ...]:
    """Quoted phrases of a task (error messages, log lines) worth finding verbatim."""
    out = []
    for m in _QUOTED.finditer(text):
        phrase = m.group(1).strip()
        if len(phrase) >= _QUOTED_MIN and any(c.isalpha() for c in phrase):
            out.append(phrase)
    return tuple(dict.fromkeys(out))


#: a symbol name's parts (the index stores the same split per symbol: ``symbol_parts``)
_parts = name_parts


@dataclass(frozen=True, slots=True)
class LocateRequest:
    """What to locate: the task's words and, with a diff, what the change touches."""

    task: str
    keywords: tuple[str, ...]
    identifiers: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    explicit: tuple[str, ...] = ()
    diff_words: tuple[str, ...] = ()
    changed_names: tuple[str, ...] = ()
    excluded: frozenset[str] = frozenset()
    off: frozenset[str] = frozenset()

    @property
    def mode(self) -> str:
        return "diff" if self.changed else "intent"

    def terms(self) -> frozenset[str]:
        """The keywords and their crude singular forms."""
        return frozenset(self.keywords) | {v for k in self.keywords for v in variants(k)}


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a locate run, as the explanation shows it (counts, no paths)."""

    name: str
    summary: str


@dataclass(frozen=True, slots=True)
class LocatedFile:
    """A ranked file: its score (0..1000), its signals and its chunk hits, best first."""

    path: str
    score: int
    signals: tuple[tuple[str, int], ...]
    hits: tuple[ChunkHit, ...]
    is_test: bool
    is_code: bool

    def signal(self, name: str) -> int:
        return dict(self.signals).get(name, 0)


@dataclass(frozen=True, slots=True)
class Span:
    """A span of a file: a definition (or a run of module-level lines) the edit may be in.

    ``own`` are the line ranges that belong to the span itself (a class's header
    without its members); ``frame`` the lines that frame it (the enclosing class's
    first line); ``score`` its place within the file (0..1000).
    """

    path: str
    start: int
    end: int
    symbol: str | None
    kind: str
    own: tuple[tuple[int, int], ...]
    frame: tuple[int, ...]
    score: int
    signals: tuple[tuple[str, int], ...]
    chunk_id: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Located:
    """The ranked files (tests apart), the graph ranks and the stages that made them."""

    files: tuple[LocatedFile, ...]
    tests: tuple[LocatedFile, ...]
    graph_rank: Mapping[str, int]
    stages: tuple[Stage, ...]
    sensitive: tuple[str, ...] = ()
    quoted_chunks: frozenset[int] = field(default=frozenset())

    def top(self, n: int) -> tuple[LocatedFile, ...]:
        return self.files[:n]


# ------------------------------------------------------------------ shared per index


def _memo(shared: dict[str, Any], key: str, make: Any) -> Any:
    value = shared.get(key)
    if value is None:
        value = make()
        shared[key] = value
    return value


def _languages(store: Storage, shared: dict[str, Any]) -> dict[str, str]:
    return _memo(shared, "locate.languages", lambda: {r.path: r.language for r in store.files()})  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class _Graph:
    """The combined graph as arrays, built once per index generation.

    The edges are kept in their canonical inflow order: by target, then by source
    position (the node order), whatever order the packed graph gave them in.
    ``src`` and ``norm`` are each edge's source and its share of the source's
    out-weight in that order; ``starts`` where each target's run of edges begins
    and ``targets`` that target. A step gathers every edge's share of its source's
    rank and sums each run with one ``reduceat``: the same additions in the same
    order on every run, for any order of the stored edges. The shares and the ranks
    are 32-bit floats: a step reads half the bytes (half a million edges at 20,000
    files), and a rank's rounding error stays far below the part per million it is
    rounded to (see :func:`pagerank`).
    """

    order: tuple[str, ...]
    index: dict[str, int]
    src: np.ndarray
    norm: np.ndarray
    starts: np.ndarray
    targets: np.ndarray
    dangling: np.ndarray


def _build_graph(order: tuple[str, ...], src: Any, dst: Any, weight: Any) -> _Graph:
    """A :class:`_Graph` from edge arrays (node positions and integer weights), in any order."""
    import numpy as np

    n = len(order)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    wts = np.asarray(weight, dtype=np.int64).astype(np.float64)
    out = np.bincount(src, weights=wts, minlength=n) if n else np.zeros(0)
    # canonical inflow order: by target, then source, then weight (a total key on edges)
    canon = np.lexsort((wts, src, dst)) if len(src) else np.zeros(0, dtype=np.int64)
    src, dst, wts = src[canon], dst[canon], wts[canon]
    norm = (wts / out[src]).astype(np.float32) if len(src) else np.zeros(0, dtype=np.float32)
    starts = (
        np.flatnonzero(np.concatenate(([True], dst[1:] != dst[:-1])))
        if len(dst)
        else np.zeros(0, dtype=np.int64)
    )
    index = {name: i for i, name in enumerate(order)}
    return _Graph(order, index, src, norm, starts, dst[starts], np.flatnonzero(out == 0))


def _graph(store: Storage, shared: dict[str, Any]) -> _Graph:
    import numpy as np  # imported on use: a cache-hit compose never needs it

    cached = shared.get("ranking.graph")
    if isinstance(cached, _Graph):
        return cached
    packed = store.combined_graph()  # the combined edges, stored with the index
    graph = _build_graph(
        packed.order,
        np.frombuffer(packed.src, dtype="<i8"),
        np.frombuffer(packed.dst, dtype="<i8"),
        np.frombuffer(packed.weight, dtype="<i8"),
    )
    shared["ranking.graph"] = graph
    return graph


def pagerank(store: Storage, shared: dict[str, Any], seeds: Mapping[str, int]) -> dict[str, int]:
    """Personalized PageRank (damping 0.85) in parts per million over the combined graph.

    Power iteration from the seed vector (a dangling file's rank returns to the
    seeds), stopped once a step moves less than :data:`PR_TOLERANCE` in all (L1),
    at most :data:`_PR_ITERATIONS` steps. The remaining error is then at most
    ``0.85 / 0.15`` times that step (the step map is an L1 contraction by 0.85), a
    few parts per million in all. Each step sums every node's inflows in the
    canonical edge order (:class:`_Graph`), so the floats, and the rounded answer,
    are the same on every run and for any order of the stored edges. The steps run
    in 32-bit floats (relative rounding 6e-8 an operation): a file's rank differs
    from the 64-bit iteration's by a part per million at most where measured (20,000
    files, 558,533 edges), and the per-mille graph signal not at all.
    """
    g = _graph(store, shared)
    if not g.order:
        return {}
    return dict(zip(g.order, _pagerank_ppm(g, seeds).tolist(), strict=True))


def _pagerank_ppm(g: _Graph, seeds: Mapping[str, int]) -> np.ndarray:
    """:func:`pagerank` over the node order of ``g``, as an int64 array."""
    import numpy as np

    n = len(g.order)
    p = np.zeros(n, dtype=np.float64)
    for name in sorted(seeds):
        i = g.index.get(name)
        if i is not None and seeds[name] > 0:
            p[i] = float(seeds[name])
    total = p.sum()
    p = (np.full(n, 1.0 / n) if total <= 0 else p / total).astype(np.float32)
    restart = np.float32(0.15) * p
    r = p.copy()
    along = np.empty(len(g.src), dtype=np.float32)  # each edge's share of its source's rank
    flow = np.zeros(n, dtype=np.float32)
    for _ in range(_PR_ITERATIONS):
        if len(along):
            # every index is a node position: "clip" skips the bounds check (and the
            # buffered copy the default mode makes when given ``out``), same values
            np.take(r, g.src, out=along, mode="clip")
            np.multiply(along, g.norm, out=along)
            flow[g.targets] = np.add.reduceat(along, g.starts)
        nxt = np.float32(0.85) * (flow + r[g.dangling].sum() * p) + restart
        delta = float(np.abs(nxt - r).sum(dtype=np.float64))
        r = nxt
        if delta < PR_TOLERANCE:
            break
    return np.rint(r.astype(np.float64) * 1_000_000).astype(np.int64)


def _graph_signal(
    store: Storage, shared: dict[str, Any], seeds: Mapping[str, int], excluded: Iterable[str]
) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """PageRank in ppm for every file, the graph signal (``_normalize`` of the ranks of
    the files not ``excluded``; zeros left out) and the best :data:`_GRAPH_CANDIDATES`
    files by ``(-signal, path)``, computed over arrays."""
    import numpy as np

    g = _graph(store, shared)
    if not g.order:
        return {}, {}, []
    ppm = _pagerank_ppm(g, seeds)
    ranks = dict(zip(g.order, ppm.tolist(), strict=True))
    keep = np.ones(len(g.order), dtype=bool)
    for name in excluded:
        i = g.index.get(name)
        if i is not None:
            keep[i] = False
    kept = np.flatnonzero(keep)
    values = ppm[kept]
    top = int(values.max()) if len(values) else 0
    signal = values * 1000 // top if top > 0 else np.zeros(len(values), dtype=np.int64)
    # the node order is the paths' sorted order: a stable sort by -signal keeps it on ties
    best = kept[np.argsort(-signal, kind="stable")[:_GRAPH_CANDIDATES]]
    nonzero = np.flatnonzero(signal)
    graph = dict(
        zip([g.order[i] for i in kept[nonzero].tolist()], signal[nonzero].tolist(), strict=True)
    )
    return ranks, graph, [g.order[i] for i in best.tolist()]


# ---------------------------------------------------------------------- locate


def _file_scores(hits: Sequence[ChunkHit]) -> dict[str, tuple[int, list[ChunkHit]]]:
    by_file: dict[str, list[ChunkHit]] = defaultdict(list)
    for h in hits:
        by_file[h.path].append(h)
    out: dict[str, tuple[int, list[ChunkHit]]] = {}
    for path, items in by_file.items():
        items.sort(key=lambda h: (-h.score, h.start_line, h.chunk_id))
        s = [max(0, h.score) for h in items[:3]]
        out[path] = (s[0] + sum(s[1:]) // 2, items)
    return out


def _best_first(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


def _normalize(values: Mapping[str, int]) -> dict[str, int]:
    top = max(values.values(), default=0)
    if top <= 0:
        return dict.fromkeys(values, 0)
    return {k: v * 1000 // top for k, v in values.items()}


def _merge_hits(into: dict[str, list[ChunkHit]], path: str, items: Iterable[ChunkHit]) -> None:
    merged = {h.chunk_id: h for h in into.get(path, [])}
    for h in items:
        merged.setdefault(h.chunk_id, h)
    into[path] = sorted(merged.values(), key=lambda h: (-h.score, h.start_line, h.chunk_id))


def locate(
    store: Storage,
    request: LocateRequest,
    shared: dict[str, Any],
    *,
    has_file: Any = None,
    sensitive: Any = None,
) -> Located:
    """Rank the files for ``request`` (see the module docstring).

    ``shared`` is a memo that lives as long as the index generation;
    ``has_file(path)`` filters paths no longer in the workspace and
    ``sensitive(path)`` marks paths that must never be read (they are reported
    apart when they match, so the policy engine can record their exclusion).
    """
    off = request.off
    changed = set(request.changed)
    explicit = set(request.explicit)
    terms = request.terms()
    stages: list[Stage] = []

    # 1. retrieval
    text_raw: dict[str, int] = {}
    hits_by_file: dict[str, list[ChunkHit]] = {}
    n_task = n_diff = n_common = 0
    if request.keywords and "text" not in off:
        query = " ".join(dict.fromkeys([*request.keywords, *sorted(terms - set(request.keywords))]))
        found = store.search(query, _TASK_HITS)
        n_task = len(found)
        n_common = len(store.common_terms(query))
        for path, (score, items) in _file_scores(found).items():
            text_raw[path] = score
            hits_by_file[path] = items
    if request.diff_words and "diff_text" not in off:
        found = store.search(" ".join(request.diff_words), _DIFF_HITS)
        n_diff = len(found)
        n_common += len(store.common_terms(" ".join(request.diff_words)))
        for path, (score, items) in _file_scores(found).items():
            text_raw[path] = text_raw.get(path, 0) + score * 3 // 5
            _merge_hits(hits_by_file, path, items)
    languages = _languages(store, shared)
    from ..index.languages import LANGUAGES

    code_langs = frozenset(lang.name for lang in LANGUAGES)

    def is_code(path: str) -> bool:
        return languages.get(path) in code_langs

    for path in list(text_raw):
        if not is_code(path):
            text_raw[path] = text_raw[path] * 400 // 1000
    text = _normalize(text_raw)

    names_raw: dict[str, int] = {}
    exact: set[str] = set()
    if "names" not in off:
        wanted = {i.replace("/", ".").split(".")[-1] for i in request.identifiers}
        for name in sorted(n for n in wanted if len(n) >= 3):
            defs = store.definition_paths(name, 6)  # more than five: too common to point
            if 0 < len(defs) <= 5:
                exact.update(defs)
        if terms:
            # files by how many of their symbols have a name part among the terms (stored
            # with the index, so a fresh process reads these rows and splits no names)
            names_raw = store.name_part_counts(terms)
    quoted = quoted_strings(request.task) if "quoted" not in off else ()
    quoted_files: dict[str, int] = {}
    quoted_chunks: set[int] = set()
    for phrase in quoted:
        for h in store.search(" ".join(_WORD.findall(phrase)), 50):
            try:
                body = store.chunk(h.chunk_id).text
            except (KeyError, LookupError):
                continue
            if phrase in body:
                quoted_files[h.path] = quoted_files.get(h.path, 0) + 1
                quoted_chunks.add(h.chunk_id)
                _merge_hits(hits_by_file, h.path, [h])
    stages.append(
        Stage(
            "retrieval",
            f"BM25 {n_task} task hits, {n_diff} diff hits ({n_common} terms found in more than "
            f"a quarter of the chunks left out); {len(exact)} files define a "
            f"named identifier; {len(quoted_chunks)} chunks quote the task",
        )
    )

    # 2. expansion
    seeds: dict[str, int] = dict.fromkeys(sorted(changed | explicit), 1000)
    for path in sorted(text, key=lambda p: (-text[p], p))[:_SEEDS_FROM_TEXT]:
        seeds[path] = max(seeds.get(path, 0), 1, text[path])
    ranks: dict[str, int] = {}
    graph: dict[str, int] = {}
    graph_best: list[str] = []
    if "graph" not in off:
        ranks, graph, graph_best = _graph_signal(store, shared, seeds, changed | explicit)
    cochange: dict[str, int] = {}
    if changed and "cochange" not in off:
        for a, b, w in _memo(shared, "locate.cochange", lambda: store.edges("cochange")):
            if a in changed and b not in changed:
                cochange[b] = cochange.get(b, 0) + w
    callers: dict[str, int] = {}
    if request.changed_names and "callers" not in off:
        for name in request.changed_names:
            refs = store.references(name=name)
            users = {r.path for r in refs}
            if len(users) > 25:
                continue  # too common a name to point anywhere
            for p in users:
                callers[p] = callers.get(p, 0) + 1
    stages.append(
        Stage(
            "expansion",
            f"PageRank from {len(seeds)} seeds over {len(ranks)} files; "
            f"{len(cochange)} co-changed files, {len(callers)} files use changed symbols",
        )
    )

    # 3. scoring
    weights = FILE_WEIGHTS[request.mode]
    signals = {
        "text": text,
        "graph": graph,
        "names": _normalize(
            {p: v + (1000 if p in exact else 0) for p, v in _normalize(names_raw).items()}
            | {p: 1000 for p in exact if p not in names_raw}
        ),
        "quoted": _normalize(quoted_files),
        "cochange": _normalize(cochange),
        "callers": _normalize(callers),
    }
    pool = set(text) | set(exact) | set(quoted_files) | set(cochange) | set(callers)
    # the best by a total key: nsmallest is sorted()[:k] without sorting every file
    pool |= set(graph_best)
    pool |= explicit
    if names_raw:
        pool |= {p for p, _ in heapq.nsmallest(50, names_raw.items(), key=_best_first)}
    files: list[LocatedFile] = []
    tests: list[LocatedFile] = []
    hidden: list[str] = []
    for path in sorted(pool):
        if path in changed or path in request.excluded:
            continue
        if has_file is not None and not has_file(path):
            continue
        if sensitive is not None and sensitive(path):
            if path in text or path in explicit:
                hidden.append(path)
            continue
        parts = _parts(posixpath.splitext(path)[0].replace("/", "."))
        sig = {k: v.get(path, 0) for k, v in signals.items()}
        sig["path"] = 0 if "path" in off else min(1000, 350 * len(terms & parts))
        score = sum(weights.get(k, 0) * v for k, v in sig.items()) // 1000
        code = is_code(path)
        if not code:
            score = score * _NON_CODE_PERMILLE // 1000
        if path in explicit:
            score = max(score, 1000)
        if score <= 0:
            continue
        located = LocatedFile(
            path,
            min(1000, score),
            tuple(sorted((k, v) for k, v in sig.items() if v)),
            tuple(hits_by_file.get(path, ())),
            is_test_path(path),
            code,
        )
        (tests if located.is_test else files).append(located)
    files.sort(key=lambda f: (-f.score, f.path))
    tests.sort(key=lambda f: (-f.score, f.path))
    hidden.sort(key=lambda p: (-text.get(p, 0), p))
    stages.append(
        Stage(
            "scoring",
            f"{len(files)} files and {len(tests)} tests scored ({request.mode} weights"
            + (f"; off: {', '.join(sorted(off))}" if off else "")
            + ")",
        )
    )
    return Located(
        tuple(files),
        tuple(tests),
        ranks,
        tuple(stages),
        tuple(hidden[:5]),
        frozenset(quoted_chunks),
    )


# ------------------------------------------------------------------------ spans

#: per-mille span weights without and with a diff
SPAN_WEIGHTS: Mapping[str, Mapping[str, int]] = {
    "intent": {"bm25": 400, "names": 300, "body": 150, "head": 80, "quoted": 500},
    "diff": {"bm25": 300, "uses": 300, "names": 200, "head": 80, "quoted": 500},
}


class _Bare(NamedTuple):
    """What span ranking reads of a layout part's chunk: a chunk row without its text,
    content hash and path (the file's)."""

    chunk_id: int
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    tokens: int


class _Part(NamedTuple):
    """One chunk of a file's span layout and what scoring reads of it (task-independent).

    A tuple, as is its chunk: a layout read from the index makes one per chunk, and a
    tuple is made in a fraction of a frozen dataclass's time."""

    #: the chunk's position in the file's chunks by line
    position: int
    chunk: _Bare
    own: tuple[tuple[int, int], ...]
    frame: tuple[int, ...]
    #: the symbol's name parts (None without a symbol)
    parts: frozenset[str] | None
    head: bool
    container: bool


class _WordTable(Mapping[str, int]):
    """A stored layout's word table, read in place: the words joined by newlines (a
    word never holds one) and their part masks in the same order. A task looks up a
    dozen words of a table of thousands: finding each in the joined text costs less
    than building the dict, and the table is a fraction of the dict's memory."""

    __slots__ = ("_joined", "_masks")

    def __init__(self, joined: str, masks: Sequence[int]) -> None:
        self._joined = joined  # "\n" + words joined by "\n" + "\n" (or "" for none)
        self._masks = masks

    def get(self, word: str, default: Any = None) -> Any:
        if not word or "\n" in word:
            return default
        at = self._joined.find(f"\n{word}\n")
        if at < 0:
            return default
        return self._masks[self._joined.count("\n", 0, at)]

    def __getitem__(self, word: str) -> int:
        got = self.get(word)
        if got is None:
            raise KeyError(word)
        return int(got)

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined[1:-1].split("\n") if self._joined else ())

    def __len__(self) -> int:
        return len(self._masks)


class _Parts(Sequence[_Part]):
    """A layout's parts, kept as the plain tuples the index stores (``_RawPart``) and made
    into :class:`_Part` as they are read.

    A warm process keeps the layout of every file it ranked, and most are ranked once.
    Kept as named tuples, a file's parts (with their chunks and name-part sets: three
    containers a part) stay in the cycle collector's care for the life of the process,
    and its full passes, which walk every such container, grew with each call (at 20,000
    files, ~30,000 of them after ten tasks: ~40% of a full pass, and the growth that
    sets off the next one). Plain tuples of plain values leave its care at its next
    young pass; a ranking makes each part once (~1 us) and drops it when done. A file
    ranked a second time (a session's repeated task) keeps its made parts from then on:
    few files are, and they are read again."""

    __slots__ = ("_made", "_raw", "_reads")

    def __init__(self, raw: Sequence[_RawPart]) -> None:
        self._raw = tuple(raw)
        self._made: tuple[_Part, ...] | None = None
        self._reads = 0

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, k: int) -> _Part: ...
    @overload
    def __getitem__(self, k: slice) -> tuple[_Part, ...]: ...
    def __getitem__(self, k: int | slice) -> _Part | tuple[_Part, ...]:
        if self._made is not None:
            return self._made[k]
        if isinstance(k, slice):
            return tuple(map(_part, self._raw[k]))
        return _part(self._raw[k])

    def __iter__(self) -> Iterator[_Part]:
        if self._made is None:
            self._reads += 1
            if self._reads < 2:
                return map(_part, self._raw)
            self._made = tuple(map(_part, self._raw))
        return iter(self._made)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Parts):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by value, like a list


def _part(raw: _RawPart) -> _Part:
    pos, cid, start, end, symbol, kind, tokens, own, frame, names, head, container = raw
    # the named tuples made as their own ``__new__`` makes them, without its Python frame
    # (a ranking makes one per part of every file it ranks)
    chunk = _new_tuple(_Bare, (cid, start, end, symbol, kind, tokens))
    name_set = None if names is None else frozenset(names)
    return _new_tuple(_Part, (pos, chunk, own, frame, name_set, head, container))


_new_tuple = tuple.__new__


@dataclass(frozen=True, slots=True)
class _Layout:
    """A file's chunks in line order (with their own line ranges and frames), and its
    words: each lower-cased word of a chunk -> a bit mask of the parts (by position in
    ``parts``) whose chunk has it. One table per file rather than a set per chunk: a
    warm process keeps thousands of layouts, and a class chunk repeats its methods'
    words. Built here, the table is a dict; read from the index, a :class:`_WordTable`."""

    parts: _Parts
    words: Mapping[str, int]


def _bit_counts(masks: Iterable[int], n: int) -> list[int]:
    """For each part position below ``n``: how many of ``masks`` have its bit."""
    counts = [0] * n
    for mask in masks:
        rest = mask
        while rest:
            low = rest & -rest
            counts[low.bit_length() - 1] += 1
            rest ^= low
    return counts


#: a chunk word and the kinds whose chunks hold others: the index's layout builder's
_WORD = stored_layouts.WORD
_CONTAINERS = stored_layouts.CONTAINERS
_words = stored_layouts.chunk_words
_own_ranges = stored_layouts.own_ranges
_RawPart = stored_layouts.RawPart
_RawLayout = stored_layouts.RawLayout
#: ``path``'s layout built from its rows and encoded as the index stores it
layout_record = stored_layouts.layout_record


def _raw_layout(rows: Sequence[Chunk], starts_of: Mapping[str, int]) -> _RawLayout:
    """A layout built here, to keep: name parts from the query-time cache, words interned
    (a warm process keeps the layouts of thousands of files, whose words repeat)."""
    return stored_layouts.raw_layout(rows, starts_of, split=_parts, keep=sys.intern)


def _built(store: Storage, path: str, rows: Sequence[Chunk]) -> _RawLayout:
    # where each symbol name starts: a member's frame is its owner's first line
    return _raw_layout(rows, store.symbol_lines(path) if rows else {})


def _stored(store: Storage, path: str) -> _Layout | None:
    """``path``'s layout as the index stored it (``index/layouts.py``), if it did."""
    read = getattr(store, "stored_layout", None)
    blob = read(path) if read is not None else None
    raw = stored_layouts.decode(blob) if blob is not None else None
    if raw is None:
        return None
    try:
        parts, joined, masks = raw
        if not (isinstance(joined, str) and isinstance(masks, tuple)):
            return None
        return _Layout(_Parts(parts), _WordTable(joined, masks))
    except (TypeError, ValueError):
        return None  # not a layout of this format after all: build it


def _layout(store: Storage, path: str, chunks: Sequence[Chunk] | None) -> _Layout:
    """The span layout of a file (task-independent; see :func:`rank_spans`): the one the
    index stored for it when there is one, else built from its chunk rows (or from
    ``chunks``, when given)."""
    if chunks is None and (stored := _stored(store, path)) is not None:
        return stored
    rows = list(chunks) if chunks is not None else store.chunks_for(path)
    parts, words = _built(store, path, rows)
    return _Layout(_Parts(parts), words)


def warm_layout(store: Storage, path: str, shared: dict[str, Any]) -> int:
    """Put ``path``'s span layout in ``shared`` (the memo :func:`rank_spans` reads) ahead
    of a call that needs it: the one the index stored, else built; returns its size
    in words and parts (0 when it was there already), for a caller that bounds what it
    keeps. The layout is the one ``rank_spans`` would read or build itself, so warming
    never changes an answer."""
    layouts: dict[str, _Layout] = shared.setdefault("locate.spans", {})
    if path in layouts:
        return 0
    layout = layouts[path] = _layout(store, path, None)
    return len(layout.words) + len(layout.parts)


#: a span's signals, in the order :func:`rank_spans` computes them
_SIGNALS = ("bm25", "names", "body", "uses", "head", "quoted")


def rank_spans(
    store: Storage,
    request: LocateRequest,
    file: LocatedFile,
    *,
    quoted_chunks: frozenset[int] = frozenset(),
    chunks: Sequence[Chunk] | None = None,
    shared: dict[str, Any] | None = None,
    limit: int | None = None,
) -> tuple[Span, ...]:
    """The spans of ``file``, best first, each scored 0..1000 within the file.

    ``shared`` (a per-index-generation memo) keeps each file's span layout (its
    chunks in order, their own line ranges, frames and words) across composes.
    ``limit`` keeps only the best that many (the same as slicing the full answer,
    without building the spans that would be cut).
    """
    off = request.off
    layouts: dict[str, _Layout] = {} if shared is None else shared.setdefault("locate.spans", {})
    layout = layouts.get(file.path) if chunks is None else None
    if layout is None:
        layout = _layout(store, file.path, chunks)
        if chunks is None:
            layouts[file.path] = layout
    if not layout.parts:
        return ()
    terms = request.terms()
    diff_words = [w.lower() for w in dict.fromkeys(request.diff_words)]
    bm25 = {h.chunk_id: max(0, h.score) for h in file.hits}
    top_bm25 = max(bm25.values(), default=0)
    weights = SPAN_WEIGHTS[request.mode]
    names_on = "span_names" not in off
    body_on = bool(terms) and "span_body" not in off
    n = len(layout.parts)
    index = layout.words
    # per part: how many of the terms / diff words its chunk has (the words' bit masks)
    body = _bit_counts((index.get(t, 0) for t in terms), n) if body_on else []
    uses = _bit_counts((index.get(w, 0) for w in diff_words), n) if diff_words else []
    # each part's signals (None where a signal does not apply), in ``_SIGNALS`` order,
    # and its score; the signals become a dict only for the spans that are built
    w_bm25, w_names, w_body, w_uses, w_head, w_quoted = (weights.get(s, 0) for s in _SIGNALS)
    n_terms, n_diff = len(terms), len(diff_words)
    scored: list[tuple[tuple[int, int, int, int], int, _Part, tuple[int | None, ...]]] = []
    for k, part in enumerate(layout.parts):
        c = part.chunk
        total = 0
        bm = bm25.get(c.chunk_id) if top_bm25 else None
        if bm is not None:
            bm = bm * 1000 // top_bm25
            total += w_bm25 * bm
        names = None
        if part.parts is not None and names_on:
            names = (
                0 if part.parts.isdisjoint(terms) else min(3, len(part.parts & terms)) * 1000 // 3
            )
            total += w_names * names
        in_body = None
        if body_on:
            in_body = body[k] * 1000 // n_terms
            total += w_body * in_body
        used = None
        if diff_words:
            used = uses[k] * 1000 // n_diff
            total += w_uses * used
        head = None
        if part.head:
            head = 1000
            total += w_head * 1000
        quoted = None
        if c.chunk_id in quoted_chunks:
            quoted = 1000
            total += w_quoted * 1000
        score = min(1000, total // 1000)
        if part.container:
            score = score * 600 // 1000  # a class's own lines: header and fields
        # first the order: best score, then line, then chunk id (then as listed)
        scored.append(
            (
                (-score, c.start_line, c.chunk_id, k),
                score,
                part,
                (bm, names, in_body, used, head, quoted),
            )
        )
    # the best by that order (nsmallest is sorted()[:limit]); spans are built only for them
    if limit is not None and limit < len(scored):
        best = heapq.nsmallest(limit, scored)
    else:
        best = sorted(scored)
    return tuple(
        Span(
            file.path,
            part.chunk.start_line,
            part.chunk.end_line,
            part.chunk.symbol,
            part.chunk.kind,
            part.own,
            part.frame,
            score,
            tuple(
                sorted((name, v) for name, v in zip(_SIGNALS, values, strict=True) if v is not None)
            ),
            part.chunk.chunk_id,
            part.chunk.tokens,
        )
        for _, score, part, values in best
    )
