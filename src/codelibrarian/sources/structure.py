"""Structure lane: a repository map personalized by the task and the change, and
the definitions of the symbols they name.

- ``dependency_graph``: the map. Files in the order of :mod:`.ranking` (personalized
  PageRank over references, imports and co-changes, seeded by the change, the
  explicit files and the best text matches), each as its relative path followed
  by up to four of its definition lines, verbatim, prefixed with ``│`` (symbols
  whose name shares a keyword first, then classes before functions, then by
  line; shown in line order); a file with fewer than two definitions shows two
  lines of its best-matching chunk instead, or of its first 40 lines when
  nothing in it matched (12+ characters, not comments, most keywords first).
  The map is cut at ``clamp(budget * share / 1000, 150, 3000)`` tokens, where the
  share (per mille) is what the map earns for this task (:func:`map_share`): how
  concentrated the ranking of the top files is. When the best file clearly leads,
  the edit is most likely there and code earns more than orientation, so the map
  narrows toward ``MAP_NARROW``; when the scores are flat, the map widens toward
  ``MAP_WIDE``. The share and its reason are recorded as a ``map`` stage of the
  explanation.
  relevance 750, specificity 500, risk 300, recency 0. Its ``edges`` (file ->
  file it imports, among the listed files) let the composer collapse it to a
  summary when it must shrink.
- ``symbol_context``: definitions (source lines) of identifiers the task names
  (relevance 850) and of identifiers on the change's lines that are defined
  in another file (relevance 700), at most ten, each cut to
  ``clamp(budget // 10, 120, 800)`` tokens. specificity 800, risk 400,
  recency from git.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from ..composer.excerpt import render_excerpt
from ..composer.types import Candidate
from ..index.records import Symbol
from ..trigger import split_identifier
from .base import SourceContext, clamp
from .excerpts import fit_excerpt, numbered
from .ranking import diff_identifiers, rank_files

__all__ = ["MapShare", "StructureSource", "map_cap", "map_share"]

_KIND_ORDER = {"class": 0, "interface": 0, "struct": 0, "trait": 0, "enum": 1, "type": 1}
_MAX_SYMBOLS = 10
#: the map's share of the budget (per mille) without a ranking to judge by
_MAP_PERMILLE = 120
#: the map's share (per mille) when the best file clearly leads / when the top is flat
MAP_NARROW = 60
MAP_WIDE = 120
#: files whose scores measure how concentrated the ranking is, and the best file's
#: share of their scores (per mille) at and below which the top counts as flat, and
#: at and above which the best file clearly leads
MAP_LEAD_FILES = 5
MAP_LEAD_FLAT = 300
MAP_LEAD_CLEAR = 500
#: the map's relevance: below the best spans, above the weak ones
_MAP_RELEVANCE = 600
_PER_FILE = 4
#: below this budget a map entry carries two definition lines, not four
_WIDE_MAP_FROM = 4000


def map_cap(budget: int, permille: int = -1) -> int:
    """Token cap of the repository map for a total budget and the map's share."""
    share = _MAP_PERMILLE if permille < 0 else permille
    return clamp(budget * share // 1000, 150, 3000)


@dataclass(frozen=True, slots=True)
class MapShare:
    """The map's share of the budget for one task, and why."""

    permille: int
    #: the best file's score as a share of the top files' scores (per mille)
    lead: int
    files: int

    def reason(self) -> str:
        return (
            f"map share {self.permille}/1000 of the budget: the best file holds "
            f"{self.lead}/1000 of the top {self.files} files' scores"
        )


def map_share(scores: Sequence[int]) -> MapShare:
    """The map's share of the budget from the ranking's best file scores (best first).

    ``lead`` is the best score's share of the top ``MAP_LEAD_FILES`` scores: 1000
    when one file holds all the evidence, 1000/n when n files score alike. The
    share is ``MAP_WIDE`` up to a lead of ``MAP_LEAD_FLAT``, ``MAP_NARROW`` from
    ``MAP_LEAD_CLEAR`` on, linear between; a single file or no scores leave the
    default share.
    """
    top = [max(0, s) for s in scores[:MAP_LEAD_FILES]]
    total = sum(top)
    if len(top) < 2 or total <= 0:
        return MapShare(_MAP_PERMILLE, 1000 if top else 0, len(top))
    lead = top[0] * 1000 // total
    over = clamp(lead, MAP_LEAD_FLAT, MAP_LEAD_CLEAR) - MAP_LEAD_FLAT
    permille = MAP_WIDE - (MAP_WIDE - MAP_NARROW) * over // (MAP_LEAD_CLEAR - MAP_LEAD_FLAT)
    return MapShare(permille, lead, len(top))


@functools.lru_cache(maxsize=65536)
def _name_parts(name: str) -> frozenset[str]:
    return frozenset(split_identifier(name)) | {name.lower()}


@functools.lru_cache(maxsize=65536)
def _line_parts(text: str) -> frozenset[str]:
    return frozenset(split_identifier(text))


@dataclass(frozen=True, slots=True)
class _FileSymbols:
    """A file's definitions in the map's order when no keyword matches (kind, then
    line, then name; ties as the index lists them), with each name's parts: what
    :func:`_pick` needs, fixed for the index generation."""

    ordered: tuple[Symbol, ...]
    parts: tuple[frozenset[str], ...]

    @classmethod
    def of(cls, symbols: list[Symbol]) -> _FileSymbols:
        ordered = tuple(
            sorted(symbols, key=lambda s: (_KIND_ORDER.get(s.kind, 2), s.start_line, s.name))
        )
        return cls(ordered, tuple(_name_parts(s.name) for s in ordered))


def _pick(table: _FileSymbols, keywords: frozenset[str], per_file: int) -> list[Symbol]:
    """The ``per_file`` definitions to show, in line order: those whose name shares the
    most keywords first, then classes before functions, then by line.

    The same as sorting every definition by (keywords shared, most first; the table's
    order): a definition that shares none keeps its place in the table, so only the
    few that share one are ranked, and the rest fill up in the table's order."""
    shared = sorted(
        (-len(parts & keywords), i)
        for i, parts in enumerate(table.parts)
        if not parts.isdisjoint(keywords)
    )
    chosen = [i for _, i in shared[:per_file]]
    if len(chosen) < per_file:
        taken = set(chosen)
        for i in range(len(table.ordered)):
            if len(chosen) >= per_file:
                break
            if i not in taken:
                chosen.append(i)
    top = [table.ordered[i] for i in chosen]
    return sorted(top, key=lambda s: (s.start_line, s.name))


_COMMENT = ("#", "//", "/*", "*", "--", "<!--")


def _telling_lines(rows: list[str], start: int, end: int, keywords: frozenset[str]) -> list[str]:
    """Two verbatim lines of a file's best-matching chunk, for files with no definitions.

    Lines of 12+ characters that are not comments, those naming the most keywords
    first, shown in file order.
    """
    scored: list[tuple[int, int, str]] = []
    for number in range(max(1, start), min(len(rows), end) + 1):
        raw = rows[number - 1].rstrip()
        text = raw.strip()
        if len(text) < 12 or text.startswith(_COMMENT):
            continue
        hits = len(keywords & _line_parts(text))
        scored.append((-hits, number, raw))
    best = sorted(scored)[:2]
    return [raw for _, _, raw in sorted(best, key=lambda item: item[1])]


class StructureSource:
    """Repository map (``dependency_graph``) and symbol definitions (``symbol_context``)."""

    name = "structure"

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        if ctx.store is None:
            return []
        out: list[Candidate] = []
        repo_map = self._map(ctx)
        if repo_map is not None:
            out.append(repo_map)
        out.extend(self._symbols(ctx))
        return out

    def _map(self, ctx: SourceContext) -> Candidate | None:
        store = ctx.store
        assert store is not None
        ranking = rank_files(ctx)
        if not ranking.files:
            return None
        share = map_share([f.score for f in ranking.files])
        ctx.memo["structure.map_share"] = share
        cap = map_cap(ctx.budget, share.permille)
        per_file = _PER_FILE if ctx.budget >= _WIDE_MAP_FROM else 2
        keywords = frozenset(ctx.trigger.keywords)
        blocks: list[str] = []
        listed: list[str] = []
        # each file's definitions in the map's order and their name parts, once per
        # index generation (a resident server meets the same files task after task)
        symbol_cache: dict[str, _FileSymbols] = ctx.memo.setdefault("shared", {}).setdefault(
            "structure.symbols", {}
        )
        used = 0
        for rank in ranking.files[:200]:
            rows = ctx.lines(rank.path)
            lines = [rank.path + ":"]
            table = symbol_cache.get(rank.path)
            if table is None:
                table = _FileSymbols.of(store.symbols(path=rank.path))
                symbol_cache[rank.path] = table
            for sym in _pick(table, keywords, per_file):
                if 1 <= sym.start_line <= len(rows):
                    raw = rows[sym.start_line - 1].rstrip()
                    if raw.strip():
                        lines.append("│" + raw)
            if len(lines) < 3 and rows:
                # no (or one) definition: two telling lines of the best-matching chunk,
                # or of the file's first 40 lines when nothing in it matched
                start, end = (
                    (rank.hits[0].start_line, rank.hits[0].end_line)
                    if rank.hits
                    else (1, min(len(rows), 40))
                )
                for raw in _telling_lines(rows, start, end, keywords):
                    if "│" + raw not in lines:
                        lines.append("│" + raw)
            block = "\n".join(lines)
            cost = ctx.tokenizer.count(block + "\n")
            if used + cost > cap:
                if used + ctx.tokenizer.count(lines[0] + "\n") <= cap:
                    blocks.append(lines[0])
                    listed.append(rank.path)
                    used += ctx.tokenizer.count(lines[0] + "\n")
                    continue
                break
            blocks.append(block)
            listed.append(rank.path)
            used += cost
        if not blocks:
            return None
        listed_set = set(listed)
        edges = [(a, b) for a, b in store.imports_into(listed_set) if a in listed_set]
        return ctx.candidate(
            kind="dependency_graph",
            lane="structure",
            path=".librarian/repo-map",
            content="\n".join(blocks) + "\n",
            title="Repository map (most relevant files first)",
            relevance=_MAP_RELEVANCE,
            specificity=500,
            risk=300,
            recency_bucket=0,
            edges=edges,
            quotes=listed,
        )

    def _symbols(self, ctx: SourceContext) -> list[Candidate]:
        store = ctx.store
        assert store is not None
        changed = set(ctx.changed_paths)
        wanted: dict[str, int] = {}
        for ident in ctx.trigger.identifiers:
            name = ident.replace("/", ".").split(".")[-1]
            if len(name) >= 3:
                wanted.setdefault(name, 850)
        for name in diff_identifiers(ctx, limit=15):
            wanted.setdefault(name, 700)
        cap = clamp(ctx.budget // 10, 120, 800)
        found: list[tuple[int, Symbol]] = []
        for name in sorted(wanted, key=lambda n: (-wanted[n], n)):
            defs = [
                s
                for s in store.symbols(name=name)
                if s.path not in changed and not ctx.sensitive(s.path)
            ]
            if not defs or len(defs) > 3:  # undefined here, or too ambiguous to help
                continue
            for sym in sorted(defs, key=lambda s: (s.path, s.start_line)):
                found.append((wanted[name], sym))
            if len(found) >= _MAX_SYMBOLS:
                break
        out: list[Candidate] = []
        for relevance, sym in found[:_MAX_SYMBOLS]:
            rows = ctx.lines(sym.path)
            if not rows:
                continue
            fitted = fit_excerpt(
                ctx.tokenizer, numbered(rows, [(sym.start_line, sym.end_line)]), cap
            )
            if not fitted:
                continue
            out.append(
                ctx.candidate(
                    kind="symbol_context",
                    lane="structure",
                    path=sym.path,
                    content=render_excerpt(fitted),
                    title=sym.path,
                    discriminator=f"{sym.name}@{sym.start_line}",
                    relevance=relevance,
                    specificity=800,
                    risk=400,
                    recency_bucket=ctx.recency.get(sym.path, 0),
                    lines=(fitted[0][0], fitted[-1][0]),
                    language=posixpath.splitext(sym.path)[1].lstrip(".") or None,
                    excerpt=fitted,
                )
            )
        return out
