"""The six rung producers of the context ladder (see ``ladder`` for the table and the stop rule).

Each producer turns some lanes' candidates (already filtered by the policy
engine) into anchor drafts, best composer score first. Distances: code and
tests are graph hops (imports and references, both directions) from the change
surface, 0..3, and :data:`~.anchors.UNREACHABLE` beyond; kb, decision and
artifact anchors have the fixed distances of :data:`KIND_DISTANCE`.

Relevance gate (rung 3): a ``semantic_match`` or ``test_context`` candidate
becomes an anchor only when it is within two hops of the change surface or its
anchored lines share at least two task keywords (one when the task has fewer
than four): ranking alone is not a reason to point an agent at a file.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..composer.scoring import score
from ..composer.types import Candidate
from ..sources.ranking import is_test_path
from ..workspace.git import FileDiff
from .anchors import UNREACHABLE, AnchorDraft, Navigator, qualname

__all__ = ["KIND_DISTANCE", "LadderInput", "Rungs"]

#: distance of non-code anchors (code and tests use graph hops 0..3, else 7)
KIND_DISTANCE = {"kb": 4, "decision": 5, "artifact": 6}
_MAX_HOPS = 3
_GATE_HOPS = 2
_MAX_CALL_SITES = 6
_MAX_STUBS = 4
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_STUB = re.compile(r"(^|[/_.-])(stubs?|fakes?|mocks?|contracts?|doubles?)([/_.-]|$)")


@dataclass(frozen=True, slots=True)
class LadderInput:
    """What the ladder climbs: policy-filtered candidates and the change surface.

    ``decisions`` are run resources for rung 5 as ``(repo-relative path, uri)``.
    """

    agent: str
    criteria: tuple[str, ...]
    keywords: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    excluded: frozenset[str]
    changes: tuple[FileDiff, ...]
    explicit_files: tuple[str, ...]
    files: tuple[str, ...]
    decisions: tuple[tuple[str, str], ...]
    budget: int


def _live(inp: LadderInput, kinds: Iterable[str]) -> list[Candidate]:
    wanted = set(kinds)
    out = [
        c
        for c in inp.candidates
        if c.kind in wanted and c.id not in inp.excluded and not c.path.startswith(".librarian/")
    ]
    return sorted(out, key=lambda c: (-score(c), c.path, c.lines or (0, 0), c.id))


def _hops(inp: LadderInput, nav: Navigator, surface: Sequence[str]) -> dict[str, int]:
    """Graph hops (imports and references, both directions) from the surface, up to 3."""
    neighbours: dict[str, set[str]] = {}
    if nav.store is not None:
        for kind in ("import", "ref"):
            for a, b, _ in nav.store.edges(kind):
                neighbours.setdefault(a, set()).add(b)
                neighbours.setdefault(b, set()).add(a)
    dist = dict.fromkeys(surface, 0)
    queue = deque(sorted(surface))
    while queue:
        node = queue.popleft()
        if dist[node] >= _MAX_HOPS:
            continue
        for nxt in sorted(neighbours.get(node, ())):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return dist


def _kind_of(path: str) -> str:
    return "test" if is_test_path(path) else "code"


def _ref_for(nav: Navigator, path: str, start: int) -> str:
    sym = nav.symbol_at(path, start)
    if sym is not None:
        return f"{path}#{qualname(sym)}"
    return f"{path}#module" if start == 1 else f"{path}#L{start}"


class Rungs:
    """The six producers; each returns drafts best first."""

    def __init__(self, inp: LadderInput, nav: Navigator) -> None:
        self.inp = inp
        self.nav = nav
        self.changed = sorted(
            {d.path for d in inp.changes if d.status != "deleted" and nav.usable(d.path)}
        )
        surface = sorted({*self.changed, *(f for f in inp.explicit_files if nav.usable(f))})
        if not surface:
            top = _live(inp, ("semantic_match",))[:3]
            surface = sorted({c.path for c in top})
        self.surface = surface
        self.hops = _hops(inp, nav, surface)
        self.touched: list[tuple[str, str]] = []  # (path, symbol name) of changed definitions

    def distance(self, kind: str, path: str) -> int:
        if kind in KIND_DISTANCE:
            return KIND_DISTANCE[kind]
        return self.hops.get(path, UNREACHABLE)

    def produce(self, rung: int) -> list[AnchorDraft]:
        make = (
            self.nearby,
            self.module,
            self.repo,
            self.kb,
            self.decisions,
            self.stubs,
        )[rung - 1]
        return [d for d in make() if d is not None]

    def nearby(self) -> list[AnchorDraft | None]:
        out: list[AnchorDraft | None] = []
        for cand in _live(self.inp, ("local_diff",)):
            path = cand.path
            if not self.nav.usable(path):
                continue
            for hunk in cand.hunks:
                m = _HUNK.match(hunk.header)
                if m is None:
                    continue
                new_start = int(m.group(1))
                added = [ln[1:] for ln in hunk.lines if ln.startswith("+")]
                removed = sum(1 for ln in hunk.lines if ln.startswith("-"))
                offset = next(
                    (i for i, ln in enumerate(hunk.lines) if ln[:1] == "+" and ln[1:].strip()),
                    next((i for i, ln in enumerate(hunk.lines) if ln[:1] in "+-"), 0),
                )
                focus = new_start + sum(1 for ln in hunk.lines[:offset] if not ln.startswith("-"))
                change = f"changed here: +{len(added)}/-{removed} lines"
                sym = self.nav.enclosing(path, focus)
                if sym is not None:
                    self.touched.append((path, sym.name))
                    out.append(
                        self.nav.make(
                            kind=_kind_of(path),
                            path=path,
                            start=sym.start_line,
                            end=sym.end_line,
                            ref=f"{path}#{qualname(sym)}",
                            rung=1,
                            distance=0,
                            score=score(cand),
                            focus=focus,
                            summary=self.nav.symbol_summary(sym, change),
                        )
                    )
                    continue
                first = next((a.strip() for a in added if a.strip()), "")
                span_end = new_start + max(1, int(m.group(2) or 1)) - 1
                out.append(
                    self.nav.make(
                        kind=_kind_of(path),
                        path=path,
                        start=new_start,
                        end=span_end,
                        ref=f"{path}#L{new_start}",
                        rung=1,
                        distance=0,
                        score=score(cand),
                        focus=focus,
                        summary=self.nav.summarize(path, [change, f"+ {first}" if first else ""]),
                    )
                )
        for path in sorted(set(self.inp.explicit_files) - set(self.changed)):
            out.append(self._module_anchor(path, rung=1, distance=0, value=0))
        return out

    def _module_anchor(
        self, path: str, *, rung: int, distance: int, value: int
    ) -> AnchorDraft | None:
        if not self.nav.usable(path):
            return None
        return self.nav.make(
            kind=_kind_of(path),
            path=path,
            start=1,
            end=len(self.nav.lines(path)),
            ref=f"{path}#module",
            rung=rung,
            distance=distance,
            score=value,
        )

    def module(self) -> list[AnchorDraft | None]:
        out: list[AnchorDraft | None] = [
            self._module_anchor(p, rung=2, distance=0, value=0) for p in self.changed
        ]
        for cand in _live(self.inp, ("symbol_context",)):
            start = cand.lines[0] if cand.lines else 1
            end = cand.lines[1] if cand.lines else start
            sym = self.nav.symbol_at(cand.path, start)
            if sym is not None:
                end = max(end, sym.end_line)
            out.append(
                self.nav.make(
                    kind=_kind_of(cand.path),
                    path=cand.path,
                    start=start,
                    end=end,
                    ref=_ref_for(self.nav, cand.path, start),
                    rung=2,
                    distance=self.distance("code", cand.path),
                    score=score(cand),
                )
            )
        out.extend(self._call_sites())
        return out

    def _call_sites(self) -> list[AnchorDraft | None]:
        store = self.nav.store
        if store is None:
            return []
        sites: list[tuple[int, str, int, str]] = []
        for path, name in sorted(set(self.touched)):
            if len(name) < 3:
                continue
            importers = set(self.nav.importers(path))
            for ref in store.references(name=name):
                if ref.path in importers and ref.path != path and self.nav.usable(ref.path):
                    sites.append((self.distance("code", ref.path), ref.path, ref.line, name))
        out: list[AnchorDraft | None] = []
        for dist, path, line, name in sorted(set(sites))[:_MAX_CALL_SITES]:
            caller = self.nav.enclosing(path, line)
            if caller is not None:
                out.append(
                    self.nav.make(
                        kind=_kind_of(path),
                        path=path,
                        start=caller.start_line,
                        end=caller.end_line,
                        ref=f"{path}#{qualname(caller)}",
                        rung=2,
                        distance=dist,
                        score=0,
                        focus=line,
                        summary=self.nav.symbol_summary(caller, f"calls {name} (line {line})"),
                    )
                )
            else:
                out.append(
                    self.nav.make(
                        kind=_kind_of(path),
                        path=path,
                        start=max(1, line - 2),
                        end=line + 2,
                        ref=f"{path}#calls:{name}",
                        rung=2,
                        distance=dist,
                        score=0,
                        focus=line,
                    )
                )
        return out

    def repo(self) -> list[AnchorDraft | None]:
        keywords = frozenset(self.inp.keywords)
        need = 1 if len(keywords) < 4 else 2
        out: list[AnchorDraft | None] = []
        for cand in _live(self.inp, ("semantic_match", "test_context")):
            start = cand.lines[0] if cand.lines else 1
            end = cand.lines[1] if cand.lines else len(self.nav.lines(cand.path))
            kind = "test" if cand.kind == "test_context" else _kind_of(cand.path)
            draft = self.nav.make(
                kind=kind,
                path=cand.path,
                start=start,
                end=end,
                ref=_ref_for(self.nav, cand.path, start),
                rung=3,
                distance=self.distance(kind, cand.path),
                score=score(cand),
            )
            # relevance gate (module docstring): ranking noise is not context
            far = draft is not None and draft.distance > _GATE_HOPS
            if far and draft is not None and len(draft.terms & keywords) < need:
                continue
            out.append(draft)
        return out

    def kb(self) -> list[AnchorDraft | None]:
        out: list[AnchorDraft | None] = []
        for cand in _live(self.inp, ("rule_doc", "constraint")):
            _, sep, section = cand.title.partition(" § ")
            ref = f"{cand.path}#§{section}" if sep else cand.path
            start, end = cand.lines or (1, len(self.nav.lines(cand.path)))
            out.append(
                self.nav.make(
                    kind="kb",
                    path=cand.path,
                    start=start,
                    end=end,
                    ref=ref,
                    rung=4,
                    distance=KIND_DISTANCE["kb"],
                    score=score(cand),
                )
            )
        return out

    def decisions(self) -> list[AnchorDraft | None]:
        out: list[AnchorDraft | None] = []
        for rel, uri in self.inp.decisions:
            n = len(self.nav.lines(rel))
            out.append(
                self.nav.make(
                    kind="decision",
                    path=rel,
                    start=max(1, n - 59),
                    end=max(1, n),
                    ref=uri,
                    rung=5,
                    distance=KIND_DISTANCE["decision"],
                    score=0,
                )
            )
        # history-lane candidates stand for records in these files (others, such as
        # earlier-composition snapshots, have no file of their own to point at)
        files = {
            ".librarian/sessions/learnings": ".librarian/sessions/learnings.jsonl",
            ".librarian/sessions/history": ".librarian/sessions/history.jsonl",
        }
        history = [
            c
            for c in self.inp.candidates
            if c.lane == "history" and c.path in files and c.id not in self.inp.excluded
        ]
        history.sort(key=lambda c: (-score(c), c.title, c.id))
        for cand in history:
            rel = files[cand.path]
            n = len(self.nav.lines(rel))
            text = cand.text().strip().splitlines()
            out.append(
                self.nav.make(
                    kind="decision",
                    path=rel,
                    start=max(1, n - 59),
                    end=max(1, n),
                    ref=f"{rel}#{cand.title}",
                    rung=5,
                    distance=KIND_DISTANCE["decision"],
                    score=score(cand),
                    summary=self.nav.summarize(rel, text[:3]),
                )
            )
        return out

    def stubs(self) -> list[AnchorDraft | None]:
        keywords = set(self.inp.keywords)
        found: list[tuple[int, str]] = []
        for path in self.inp.files:
            if not _STUB.search(path.lower()) and not path.endswith(".pyi"):
                continue
            near = self.hops.get(path, UNREACHABLE)
            named = bool(keywords & set(re.split(r"[/_.-]+", path.lower())))
            if near <= 2 or named:
                found.append((near, path))
        out: list[AnchorDraft | None] = []
        for _near, path in sorted(found)[:_MAX_STUBS]:
            kind = "test" if is_test_path(path) else "artifact"
            draft = self._module_anchor(path, rung=6, distance=self.distance(kind, path), value=0)
            if draft is not None and kind == "artifact":
                draft = replace(draft, kind="artifact", distance=KIND_DISTANCE["artifact"])
            out.append(draft)
        return out
