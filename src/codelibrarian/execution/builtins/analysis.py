"""Builtin analysis over the index: change impact, dependency map, architecture, API surface.

All scores are integers and every list has a total order ending in a path, so the
same index and change give the same output.

**Change impact** (``tp_change_impact``). From the changed files and the
definitions whose lines the change touches ("changed symbols"), each other file
collects evidence, weighed in integers:

==================  =======================================================================
edge                weight
==================  =======================================================================
call / reference    ``40 x`` the specificity weight of each changed symbol it uses
                    (:func:`~codelibrarian.index.graph.name_weight`: a name defined in many
                    files, or a short generic one, counts little)
import              30 when it imports a changed file; 10 when a changed file imports it
reference (file)    ``6 x`` the weight of unchanged definitions of a changed file it uses
co-change           ``25 x`` the commits it shared with a changed file (history), at most 250
==================  =======================================================================

Files reached from a distance-1 file by an import or a reference are distance 2
(scored a quarter), and so on up to ``max_distance``. Files are ranked nearest
first, then by score: a hub among the direct dependents (a package's entry file
that every example imports) would otherwise bury the weaker direct relations
under its own importers. Tests are reported apart
(``tests``): the test files that import or use a changed file or symbol.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ...index import graph
from ...index.records import ImportRecord, Symbol
from ...index.storage import Storage
from ...sources.ranking import is_test_path
from ...workspace.git import FileDiff
from . import BuiltinContext, BuiltinFn

__all__ = ["EXECUTORS", "ImpactInputs", "change_impact", "changed_symbols", "impact"]

_DEF_KINDS = frozenset(
    {"function", "method", "class", "interface", "struct", "enum", "trait", "type", "constant"}
)
_SYMBOL_WEIGHT = 40
_IMPORT_IN = 30
_IMPORT_OUT = 10
_FILE_REF = 6
_COCHANGE = 25
_COCHANGE_MAX = 250


def _spans(diff: FileDiff, root: Path | None) -> list[tuple[int, int]]:
    """Changed line spans in the file as indexed: the new side when the working file
    holds the change, else the old side (a diff given against an older checkout)."""
    lines: list[str] | None = None
    if root is not None:
        try:
            text = (root / diff.path).read_text(encoding="utf-8", errors="replace")
            lines = [ln.rstrip() for ln in text.splitlines()]
        except OSError:
            lines = None
    out: list[tuple[int, int]] = []
    for h in diff.hunks:
        new_side = [t[1:].rstrip() for t in h.lines if t[:1] in (" ", "+")]
        at = h.new_start - 1
        holds_new = lines is None or lines[at : at + len(new_side)] == new_side
        if holds_new:
            out.append((h.new_start, h.new_start + max(h.new_lines, 1) - 1))
        else:
            out.append((h.old_start, h.old_start + max(h.old_lines, 1) - 1))
    return out


def changed_symbols(symbols: Sequence[Symbol], spans: Sequence[tuple[int, int]]) -> list[Symbol]:
    """Definitions overlapping a changed span; the innermost per span when nested."""
    out: dict[tuple[str, int], Symbol] = {}
    for lo, hi in spans:
        hits = [
            s for s in symbols if s.kind in _DEF_KINDS and s.start_line <= hi and s.end_line >= lo
        ]
        for s in hits:
            out[(s.name, s.start_line)] = s
    return sorted(out.values(), key=lambda s: (s.start_line, s.name))


@dataclass(frozen=True, slots=True)
class ImpactInputs:
    """What impact needs from the index (a protocol-free bundle, easy to build in tests)."""

    files: frozenset[str]
    symbols: Mapping[str, Sequence[Symbol]]
    imports: Sequence[ImportRecord]
    #: (referencing path, name, count)
    refs: Sequence[tuple[str, str, int]]
    cochange: Sequence[tuple[str, str, int]]


def inputs_from_store(store: Storage) -> ImpactInputs:
    files = frozenset(f.path for f in store.files())
    symbols: dict[str, list[Symbol]] = defaultdict(list)
    for s in store.symbols():
        symbols[s.path].append(s)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in store.references():
        counts[(r.path, r.name)] += 1
    refs = [(p, n, c) for (p, n), c in sorted(counts.items())]
    return ImpactInputs(files, symbols, store.imports(), refs, store.edges("cochange"))


def impact(
    inputs: ImpactInputs,
    changes: Sequence[FileDiff],
    *,
    files: Iterable[str] = (),
    root: Path | None = None,
    max_distance: int = 2,
    max_results: int = 100,
) -> dict[str, Any]:
    """The ``tp_change_impact`` output for ``changes`` (or ``files``); see the module doc."""
    changed = sorted({*(d.path for d in changes), *files})
    changed_set = set(changed)
    spans = {d.path: _spans(d, root) for d in changes if d.status != "deleted"}
    definers: dict[str, set[str]] = defaultdict(set)
    for path, syms in inputs.symbols.items():
        for s in syms:
            definers[s.name].add(path)
    hot: dict[str, str] = {}  # changed symbol name -> its file
    for path in changed:
        syms = inputs.symbols.get(path, ())
        picked = changed_symbols(syms, spans[path]) if path in spans else []
        if path not in spans:  # named, not diffed: the whole file's definitions
            picked = [s for s in syms if s.kind in _DEF_KINDS and s.parent is None]
        for s in picked:
            hot.setdefault(s.name, path)
    file_defs: dict[str, str] = {}
    for path in changed:
        for s in inputs.symbols.get(path, ()):
            if s.kind in _DEF_KINDS:
                file_defs.setdefault(s.name, path)

    score: dict[str, int] = defaultdict(int)
    best: dict[str, tuple[int, str, str, str | None]] = {}  # path -> (w, kind, from, symbol)

    def add(path: str, w: int, kind: str, src: str, symbol: str | None) -> None:
        if w <= 0 or path in changed_set:
            return
        score[path] += w
        if path not in best or w > best[path][0]:
            best[path] = (w, kind, src, symbol)

    by_file_refs: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for path, name, count in inputs.refs:
        by_file_refs[path].append((name, count))
    tests: set[str] = set()
    for path, names in by_file_refs.items():
        for name, count in names:
            owners = definers.get(name, set())
            if not owners or len(owners) > graph.MAX_DEFINERS:
                continue
            w = graph.name_weight(name, len(owners), count)
            if name in hot and path != hot[name]:
                if is_test_path(path):
                    tests.add(path)
                    continue
                add(path, _SYMBOL_WEIGHT * w // 10, "call", hot[name], name)
            elif name in file_defs and path != file_defs[name] and not is_test_path(path):
                add(path, _FILE_REF * w // 10, "reference", file_defs[name], name)
    imports_by: dict[str, set[str]] = defaultdict(set)
    imported_by: dict[str, set[str]] = defaultdict(set)
    for rec in inputs.imports:
        if rec.resolved and rec.resolved != rec.path:
            imports_by[rec.path].add(rec.resolved)
            imported_by[rec.resolved].add(rec.path)
    for path in changed:
        for src in sorted(imported_by.get(path, ())):
            if is_test_path(src):
                tests.add(src)
            else:
                add(src, _IMPORT_IN, "import", path, None)
        for dst in sorted(imports_by.get(path, ())):
            if not is_test_path(dst):
                add(dst, _IMPORT_OUT, "import", path, None)
    for a, b, w in inputs.cochange:
        if a in changed_set and b not in changed_set and b in inputs.files and not is_test_path(b):
            add(b, min(_COCHANGE_MAX, _COCHANGE * w), "cochange", a, None)
    distance = dict.fromkeys(score, 1)
    frontier = sorted(score)
    for depth in range(2, max_distance + 1):
        nxt: list[str] = []
        for path in frontier:
            for other in sorted(imported_by.get(path, set()) | imports_by.get(path, set())):
                if other in changed_set or other in distance or is_test_path(other):
                    continue
                distance[other] = depth
                add(other, max(1, score[path] // (4 ** (depth - 1)) // 4), "import", path, None)
                nxt.append(other)
        frontier = nxt
    for path in list(tests):
        if path in changed_set:
            tests.discard(path)
    ranked = sorted(score, key=lambda p: (distance.get(p, 1), -score[p], p))
    kept = ranked[:max_results]
    affected = [
        {
            "path": p,
            "symbol": best[p][3],
            "distance": distance.get(p, 1),
            "via": {"kind": best[p][1], "from": best[p][2], "symbol": best[p][3]},
        }
        for p in kept
    ]
    for p in kept[:20]:  # tests exercising the nearest affected files too
        for src in imported_by.get(p, ()):
            if is_test_path(src) and src not in changed_set:
                tests.add(src)
    return {
        "changed": changed,
        "affected": affected,
        "tests": sorted(tests),
        "paths": [*changed, *kept],
        "affected_count": len(ranked),
        "truncated": len(ranked) > len(kept),
    }


def change_impact(ctx: BuiltinContext) -> dict[str, Any]:
    inp = ctx.input
    given = [str(f) for f in inp.get("files", ()) or ()]
    changes = () if given else ctx.changes
    ctx.check()
    inputs = inputs_from_store(ctx.store)
    ctx.check()
    return impact(
        inputs,
        changes,
        files=given,
        root=ctx.root,
        max_distance=int(inp.get("max_distance", 2)),
        max_results=int(inp.get("max_results", 100)),
    )


# ------------------------------------------------------------------ dependency map


def _sccs(nodes: Sequence[str], edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with at least two files (import cycles), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp: list[str] = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def dependency_map(ctx: BuiltinContext) -> dict[str, Any]:
    inp = ctx.input
    store = ctx.store
    focus = sorted({str(f) for f in inp.get("focus", ()) or ()} or set(ctx.changed_paths))
    depth_limit = int(inp.get("depth", 2))
    max_nodes = int(inp.get("max_nodes", 200))
    langs = {f.path: f.language for f in store.files()}
    imports: dict[str, set[str]] = defaultdict(set)
    for rec in store.imports():
        if rec.resolved and rec.resolved != rec.path:
            imports[rec.path].add(rec.resolved)
    back: dict[str, set[str]] = defaultdict(set)
    for a, bs in imports.items():
        for b in bs:
            back[b].add(a)
    ctx.check()
    refs = [(a, b, w) for a, b, w in store.edges("ref")]
    ref_out: dict[str, dict[str, int]] = defaultdict(dict)
    for a, b, w in refs:
        ref_out[a][b] = w
    ref_in: dict[str, set[str]] = defaultdict(set)
    for a, b, _w in refs:
        ref_in[b].add(a)
    co = [(a, b, w) for a, b, w in store.edges("cochange") if a in set(focus)]
    seen = {p: 0 for p in focus if p in langs}
    frontier = sorted(seen)
    for depth in range(1, depth_limit + 1):
        nxt = []
        for p in frontier:
            for q in sorted(imports[p] | back[p] | set(ref_out[p]) | ref_in[p]):
                if q not in seen and len(seen) < max_nodes:
                    seen[q] = depth
                    nxt.append(q)
            ctx.check()
        frontier = nxt
    for _a, b, _w in co:
        if b in langs and b not in seen and len(seen) < max_nodes:
            seen[b] = 1
    nodes = sorted(seen)
    inside = set(nodes)
    edges: list[dict[str, Any]] = []
    for a in nodes:
        for b in sorted(imports[a] & inside):
            edges.append({"from": a, "to": b, "kind": "import", "weight": 1})
        for b in sorted(set(ref_out[a]) & inside):
            if b not in imports[a]:
                edges.append({"from": a, "to": b, "kind": "reference", "weight": ref_out[a][b]})
    for a, b, w in co:
        if b in inside:
            edges.append({"from": a, "to": b, "kind": "cochange", "weight": w})
    cycles = _sccs(nodes, {a: imports[a] & inside for a in nodes})
    return {
        "nodes": [
            {
                "path": p,
                "language": langs.get(p, ""),
                "imports": len(imports[p]),
                "imported_by": len(back[p]),
            }
            for p in nodes
        ],
        "edges": edges,
        "cycles": cycles,
        "paths": nodes,
        "node_count": len(nodes),
        "edge_count": len(edges),
        "truncated": len(seen) >= max_nodes,
    }


# ------------------------------------------------------------------- architecture


def module_of(path: str) -> str:
    """The module a file belongs to: its top folder (two levels under src/, lib/, pkg/)."""
    parts = PurePosixPath(path).parts
    if len(parts) == 1:
        return "."
    if parts[0] in ("src", "lib", "pkg", "packages", "app") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


_ENTRY_NAMES = {"main": "main", "cli": "cli", "app": "http", "create_app": "http"}


def arch_mapping(ctx: BuiltinContext) -> dict[str, Any]:
    from ...index.repomap import rank_files

    store = ctx.store
    max_modules = int(ctx.input.get("max_modules", 40))
    files = store.files()
    ranks = rank_files(store)
    ctx.check()
    mods: dict[str, dict[str, Any]] = {}
    langs: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for f in files:
        m = module_of(f.path)
        rec = mods.setdefault(m, {"files": 0, "symbols": 0, "rank": 0, "deps": set()})
        rec["files"] += 1
        rec["rank"] += ranks.get(f.path, 0)
        langs[m][f.language] += 1
    for s in store.symbols():
        m = module_of(s.path)
        if m in mods:
            mods[m]["symbols"] += 1
    for imp in store.imports():
        if imp.resolved:
            a, b = module_of(imp.path), module_of(imp.resolved)
            if a != b and a in mods:
                mods[a]["deps"].add(b)
    total = sum(r["rank"] for r in mods.values()) or 1
    ordered = sorted(mods, key=lambda m: (-mods[m]["rank"], m))[:max_modules]
    found: set[tuple[str, str, str]] = set()
    for s in store.symbols():
        kind = _ENTRY_NAMES.get(s.name)
        if kind and s.parent is None and s.kind == "function":
            found.add((s.path, s.name, kind))
    for f in files:
        name = PurePosixPath(f.path).name
        if name in ("__main__.py", "main.go", "main.rs", "index.js", "server.js", "app.py"):
            found.add((f.path, name, "main"))
    entries = sorted(found)
    top_files = sorted(ranks, key=lambda p: (-ranks[p], p))[:20]
    return {
        "modules": [
            {
                "path": m,
                "language": max(sorted(langs[m].items()), key=lambda kv: kv[1])[0]
                if langs[m]
                else "",
                "files": mods[m]["files"],
                "symbols": mods[m]["symbols"],
                "rank": min(1000, mods[m]["rank"] * 1000 // total),
                "depends_on": sorted(mods[m]["deps"]),
            }
            for m in ordered
        ],
        "entry_points": [{"path": p, "symbol": s, "kind": k} for p, s, k in entries[:50]],
        "languages": sorted({f.language for f in files if f.language}),
        "paths": top_files,
        "module_count": len(mods),
    }


def api_surface(ctx: BuiltinContext) -> dict[str, Any]:
    store = ctx.store
    given = [str(f) for f in ctx.input.get("files", ()) or ()]
    changes = ctx.changes if not given else ()
    focus = sorted(set(given) | {d.path for d in changes if d.status != "deleted"})
    if not focus:
        focus = sorted(f.path for f in store.files() if not is_test_path(f.path))
    changed_names: set[str] = set()
    for d in changes:
        changed_names.update(
            s.name for s in changed_symbols(store.symbols(path=d.path), _spans(d, ctx.root))
        )
    out: list[dict[str, str]] = []
    for path in focus:
        for s in store.symbols(path=path):
            if s.kind in _DEF_KINDS and not s.name.startswith("_"):
                out.append(
                    {"path": path, "name": s.name, "kind": s.kind, "signature": s.signature[:200]}
                )
        ctx.check()
    out = out[:2000]
    return {
        "symbols": out,
        "changed_symbols": sorted(changed_names),
        "paths": sorted({o["path"] for o in out}),
        "symbol_count": len(out),
    }


EXECUTORS: dict[str, BuiltinFn] = {
    "tp_change_impact": change_impact,
    "tp_dependency_map": dependency_map,
    "tp_arch_mapping": arch_mapping,
    "tp_api_surface": api_surface,
}
