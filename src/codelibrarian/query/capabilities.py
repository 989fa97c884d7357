"""Storage capability detection (P23): probe what the store offers, then adapt.

``detect_capabilities`` asks the store itself rather than trusting its type: it
runs a one-row search (full-text), reads each edge kind (graph traversal),
counts vectors in the dense index, and looks for a transaction method, a stage
cache and a backing file. Each finding is a ``CapabilityEvent``
(``capability_detected`` / ``capability_missing``).

``adapt`` turns the requested features into the ones that can run and records
one ``Adaptation`` (event ``behavior_adapted``) per change: no vectors ->
keyword retrieval, no graph -> skip expansion, no full-text but vectors ->
semantic-only retrieval, no cache -> direct execution.

The seed probes vector search with a zero vector and assumes 384/768/1536
dimensions; here the dimension is the one the vectors really have.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import LibrarianError, UnverifiedByTrace
from .embed import DenseIndex, VectorIndex
from .types import QueryStore, StageCache

__all__ = [
    "DEFAULT_FEATURES",
    "FEATURES",
    "Adaptation",
    "AdaptedPlan",
    "CapabilityEvent",
    "CapabilityReport",
    "StorageCapabilities",
    "adapt",
    "detect_capabilities",
]

#: what a query can use; the ablation toggles these
FEATURES: tuple[str, ...] = ("bm25", "dense", "graph", "scoring", "rerank", "defeaters")
#: what runs unless asked otherwise: dense vectors are opt-in, because the bundled
#: static model did not prove a recall gain in the ablation (benchmarks/RESULTS.md:
#: better top-10 on httpx, worse top-5 on click, worse at 8k tokens on both)
DEFAULT_FEATURES: tuple[str, ...] = ("bm25", "graph", "scoring", "rerank", "defeaters")
EDGE_KINDS: tuple[Literal["ref", "import", "cochange"], ...] = ("ref", "import", "cochange")


@dataclass(frozen=True, slots=True)
class StorageCapabilities:
    vector_search: bool = False
    vector_dimensions: tuple[int, ...] = ()
    vector_metrics: tuple[str, ...] = ()
    vector_count: int = 0
    full_text_search: bool = False
    fts_operators: tuple[str, ...] = ()
    graph_traversal: bool = False
    graph_max_depth: int = 0
    relationship_types: tuple[str, ...] = ()
    transactions: bool = False
    isolation: str | None = None
    caching: bool = False
    cache_max_size: int | None = None
    cache_ttl: bool = False
    persistence: Literal["memory", "file", "database"] = "memory"
    durable: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "vector_search": {
                "available": self.vector_search,
                "dimensions": list(self.vector_dimensions),
                "distance_metrics": list(self.vector_metrics),
                "max_vectors": self.vector_count,
            },
            "full_text_search": {
                "available": self.full_text_search,
                "operators": list(self.fts_operators),
            },
            "graph_traversal": {
                "available": self.graph_traversal,
                "max_depth": self.graph_max_depth,
                "relationship_types": list(self.relationship_types),
            },
            "transactions": {"available": self.transactions, "isolation": self.isolation},
            "caching": {
                "available": self.caching,
                "max_size": self.cache_max_size,
                "ttl_support": self.cache_ttl,
            },
            "persistence": {"type": self.persistence, "durable": self.durable},
        }


@dataclass(frozen=True, slots=True)
class CapabilityEvent:
    event: Literal["capability_detected", "capability_missing", "behavior_adapted"]
    capability: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"event": self.event, "capability": self.capability, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class CapabilityReport:
    capabilities: StorageCapabilities
    events: tuple[CapabilityEvent, ...]
    #: the edge lists read while probing, so expansion need not read them again
    graphs: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class Adaptation:
    original: str
    adapted: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"original": self.original, "adapted": self.adapted, "reason": self.reason}

    @property
    def trace(self) -> UnverifiedByTrace:
        return UnverifiedByTrace(f"adapted:{self.original}->{self.adapted}", self.reason)


@dataclass(frozen=True, slots=True)
class AdaptedPlan:
    features: tuple[str, ...]
    adaptations: tuple[Adaptation, ...]
    events: tuple[CapabilityEvent, ...]


def _probe_fts(store: QueryStore) -> tuple[bool, str]:
    try:
        store.search("probe", 1)
    except Exception as exc:  # any failure of the probe means: do not rely on it
        return False, f"search failed: {type(exc).__name__}: {exc}"
    return True, "chunk search answered"


def detect_capabilities(
    store: QueryStore,
    *,
    dense: DenseIndex | None = None,
    cache: StageCache | None = None,
    max_depth: int = 3,
) -> CapabilityReport:
    """Probe ``store`` (and the optional dense index and cache) for what they offer."""
    events: list[CapabilityEvent] = []

    fts, why = _probe_fts(store)
    events.append(
        CapabilityEvent(
            "capability_detected" if fts else "capability_missing", "full_text_search", why
        )
    )

    vec_count = 0
    dims: tuple[int, ...] = ()
    if dense is not None:
        try:
            vec_count = dense.count()
        except (LibrarianError, sqlite3.Error) as exc:
            events.append(CapabilityEvent("capability_missing", "vector_search", str(exc)))
        if isinstance(dense, VectorIndex):
            dims = (dense.embedder.dim,)
    vectors = vec_count > 0
    if dense is None:
        events.append(
            CapabilityEvent(
                "capability_missing",
                "vector_search",
                "no embedder (install tokenlearn-static-model; Linux x86-64 only)",
            )
        )
    elif not vectors:
        events.append(CapabilityEvent("capability_missing", "vector_search", "no vectors stored"))
    else:
        events.append(
            CapabilityEvent(
                "capability_detected", "vector_search", f"{vec_count} vectors ({dense.name})"
            )
        )

    graphs: dict[str, list[tuple[str, str, int]]] = {}
    kinds: list[str] = []
    for kind in EDGE_KINDS:
        try:
            edges = store.edges(kind)
        except (LibrarianError, sqlite3.Error, ValueError, AttributeError, NotImplementedError):
            continue
        graphs[kind] = edges
        if edges:
            kinds.append(kind)
    graph = bool(kinds)
    events.append(
        CapabilityEvent(
            "capability_detected" if graph else "capability_missing",
            "graph_traversal",
            f"edge kinds with edges: {', '.join(kinds)}" if graph else "no edges in any graph",
        )
    )

    transactions = callable(getattr(store, "transaction", None))
    events.append(
        CapabilityEvent(
            "capability_detected" if transactions else "capability_missing",
            "transactions",
            "store.transaction()" if transactions else "none",
        )
    )
    caching = cache is not None
    events.append(
        CapabilityEvent(
            "capability_detected" if caching else "capability_missing",
            "caching",
            f"stage cache of {cache.max_size}" if cache is not None else "no cache",
        )
    )
    path = getattr(store, "path", None)
    persistence: Literal["memory", "file", "database"] = "memory"
    durable = False
    if isinstance(path, Path | str) and str(path) not in ("", ":memory:"):
        persistence, durable = "database", True
    events.append(CapabilityEvent("capability_detected", "persistence", persistence))

    caps = StorageCapabilities(
        vector_search=vectors,
        vector_dimensions=dims if vectors else (),
        vector_metrics=("cosine",) if vectors else (),
        vector_count=vec_count,
        full_text_search=fts,
        # the Storage protocol takes free text and ORs its terms
        fts_operators=("or",) if fts else (),
        graph_traversal=graph,
        graph_max_depth=max_depth if graph else 0,
        relationship_types=tuple(kinds),
        transactions=transactions,
        # SQLite transactions are serializable; other backends say so themselves
        isolation=getattr(store, "isolation", "serializable") if transactions else None,
        caching=caching,
        cache_max_size=cache.max_size if cache is not None else None,
        cache_ttl=False,
        persistence=persistence,
        durable=durable,
    )
    return CapabilityReport(caps, tuple(events), graphs)


def adapt(caps: StorageCapabilities, requested: Collection[str]) -> AdaptedPlan:
    """The features that can run on ``caps``, and one recorded adaptation per change."""
    unknown = sorted(set(requested) - set(FEATURES))
    if unknown:
        from ..errors import UsageError

        raise UsageError(
            f"unknown query feature(s): {', '.join(unknown)}.",
            hint=f"Features are: {', '.join(FEATURES)}.",
        )
    features = [f for f in FEATURES if f in requested]
    adaptations: list[Adaptation] = []
    if "dense" in features and not caps.vector_search:
        features.remove("dense")
        adaptations.append(
            Adaptation("semantic_retrieval", "keyword_retrieval", "vector search unavailable")
        )
    if "bm25" in features and not caps.full_text_search:
        features.remove("bm25")
        target = "semantic_retrieval" if "dense" in features else "no_retrieval"
        adaptations.append(Adaptation("keyword_retrieval", target, "full-text search unavailable"))
    if "graph" in features and not caps.graph_traversal:
        features.remove("graph")
        adaptations.append(Adaptation("graph_expansion", "skip", "graph traversal unavailable"))
    if not caps.caching:
        adaptations.append(Adaptation("cache_lookup", "direct_execution", "caching unavailable"))
    events = tuple(
        CapabilityEvent("behavior_adapted", a.original, f"{a.adapted}: {a.reason}")
        for a in adaptations
    )
    return AdaptedPlan(tuple(features), tuple(adaptations), events)
