"""A ranked repository map under a hard token budget.

Files are ranked by personalized PageRank over the combined reference, import
and co-change graphs (``graph.combine``); inside a file, symbols are ordered by
how many other files use their name. Lines are taken in rounds so a file with
hundreds of definitions cannot fill the map alone: first every file (in rank
order) with its :data:`FIRST_ROUND` best symbols, then every file's next
:data:`NEXT_ROUNDS` symbols, and so on. The map is the longest prefix of that
order whose rendered text fits the budget (each file keeps its place, its
symbols shown in line order): a binary search over the prefix length,
each candidate counted exactly with the target tokenizer, so the text returned
never exceeds the budget. Same index, same inputs: same bytes.

Outgoing text: ``keep(path)`` leaves a file out of the map altogether (the policy's
sensitive files) and ``clean(path, signature)`` gives the text a signature is shown
as (the secret gate: a module constant's value may be a key). Both are applied
before counting, and ``clean`` only to the entries a candidate prefix shows.

Rendered form (one header per file, signatures indented by nesting)::

    src/shop/models.py:
      class ShoppingCart:
        def add_item(self, name: str) -> None:
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tokens import Tokenizer
from . import graph
from .records import Symbol

if TYPE_CHECKING:
    from .storage import Storage

__all__ = [
    "FIRST_ROUND",
    "NEXT_ROUNDS",
    "MapEntry",
    "rank_files",
    "ranked_entries",
    "render_entries",
    "render_map",
]


#: symbols per file in the first round, then per later round
FIRST_ROUND = 3
NEXT_ROUNDS = 6


@dataclass(frozen=True, slots=True)
class MapEntry:
    """One line of the map: a file (``symbol`` None) or one symbol in it."""

    path: str
    file_rank: int
    symbol: Symbol | None
    depth: int


def rank_files(store: Storage, personalization: Mapping[str, int] | None = None) -> dict[str, int]:
    """PageRank (parts per million) of every indexed file over the combined graph."""
    graphs = {kind: store.edges(kind) for kind in ("ref", "import", "cochange")}
    paths = [f.path for f in store.files()]
    known = set(paths)
    combined = [e for e in graph.combine(graphs) if e[0] in known and e[1] in known]
    pers = {k: v for k, v in (personalization or {}).items() if k in known}
    return graph.pagerank(combined, pers or None, nodes=paths)


def _depths(symbols: Sequence[Symbol]) -> list[int]:
    """Nesting depth of each symbol (by line containment), in the given order."""
    out: list[int] = []
    stack: list[Symbol] = []
    for s in symbols:
        while stack and not (stack[-1].start_line <= s.start_line <= stack[-1].end_line):
            stack.pop()
        out.append(len(stack))
        stack.append(s)
    return out


#: ``clean(path, signature)``: the text a signature is shown as
Clean = Callable[[str, str], str]


def ranked_entries(
    store: Storage,
    personalization: Mapping[str, int] | None = None,
    *,
    keep: Callable[[str], bool] | None = None,
) -> list[MapEntry]:
    """Every map line in rounds (see the module docstring): files by rank, their
    symbols by use; files ``keep`` refuses are left out."""
    ranks = rank_files(store, personalization)
    if keep is not None:
        ranks = {p: r for p, r in ranks.items() if keep(p)}
    used_by = store.reference_file_counts()
    by_file: dict[str, list[Symbol]] = defaultdict(list)
    for s in store.symbols():
        by_file[s.path].append(s)
    files = sorted(ranks, key=lambda p: (-ranks[p], p))
    per_file: list[list[MapEntry]] = []
    for path in files:
        syms = by_file.get(path, [])
        depths = _depths(syms)
        order = sorted(
            range(len(syms)),
            key=lambda i: (-used_by.get(syms[i].name, 0), syms[i].start_line, -syms[i].end_line, i),
        )
        per_file.append([MapEntry(path, ranks[path], syms[i], depths[i]) for i in order])
    entries = [
        entry
        for path, symbols in zip(files, per_file, strict=True)
        for entry in (MapEntry(path, ranks[path], None, 0), *symbols[:FIRST_ROUND])
    ]
    start = FIRST_ROUND
    while any(len(symbols) > start for symbols in per_file):
        for symbols in per_file:
            entries.extend(symbols[start : start + NEXT_ROUNDS])
        start += NEXT_ROUNDS
    return entries


def render_entries(entries: Sequence[MapEntry], clean: Clean | None = None) -> str:
    """Text for a prefix of ``ranked_entries``: symbols shown in line order per file."""
    files: dict[str, list[MapEntry]] = {}
    for e in entries:
        files.setdefault(e.path, []).append(e)
    blocks: list[str] = []
    for path, items in files.items():
        lines = [f"{path}:"]
        shown = sorted(
            (e for e in items if e.symbol is not None),
            key=lambda e: (
                (e.symbol.start_line, -e.symbol.end_line, e.symbol.name) if e.symbol else (0, 0, "")
            ),
        )
        for e in shown:
            assert e.symbol is not None
            sig = e.symbol.signature or f"{e.symbol.kind} {e.symbol.name}"
            if clean is not None:
                sig = clean(path, sig)
            lines.append("  " * (e.depth + 1) + sig)
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def render_map(
    store: Storage,
    tokenizer: Tokenizer,
    budget: int,
    personalization: Mapping[str, int] | None = None,
    *,
    keep: Callable[[str], bool] | None = None,
    clean: Clean | None = None,
) -> str:
    """The ranked map, as long as fits ``budget`` tokens (exact count); "" if nothing fits."""
    if budget <= 0:
        return ""
    entries = ranked_entries(store, personalization, keep=keep)
    memo: dict[tuple[str, str], str] = {}

    def cleaned(path: str, sig: str) -> str:
        key = (path, sig)
        if key not in memo:
            memo[key] = clean(path, sig) if clean is not None else sig
        return memo[key]

    lo, hi, best = 1, len(entries), ""
    # a token is at least one character: try the whole map only when it may fit
    raw = sum(len(e.path) + len(e.symbol.signature if e.symbol else "") + 4 for e in entries)
    if entries and raw <= 8 * budget:
        full = render_entries(entries, cleaned)
        if tokenizer.count(full) <= budget:
            return full
    while lo <= hi:
        mid = (lo + hi) // 2
        text = render_entries(entries[:mid], cleaned)
        if tokenizer.count(text) <= budget:
            best = text
            lo = mid + 1
        else:
            hi = mid - 1
    return best
