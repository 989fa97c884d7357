"""The context ladder: six rungs climbed from the composer's lanes, with a measurable stop.

The ladder does not gather anything itself. Its input is the candidate set the
sources produced for the trigger (one source per lane) *after* the policy
engine (sensitive files excluded, secrets redacted), plus the index. Each rung
turns some lanes' candidates into anchor drafts, best composer score first:

====  ====================  ===============================================================
rung  name                  built from
====  ====================  ===============================================================
1     nearby_code           local lane (``local_diff``): the changed lines' enclosing
                            definitions (or the hunk itself), distance 0; explicit files
2     module_view           the changed modules' synopsis (``#module``), structure lane
                            ``symbol_context`` (definitions the task or change names), and
                            call sites of changed definitions in files that import them
3     repo_view             retrieved lane ``semantic_match`` (only those within three
                            hops of the change or sharing a task keyword) and
                            ``test_context``
4     project_kb            rules lane ``rule_doc`` and policy lane ``constraint`` documents
5     decision_snapshots    run resources (handoffs to this agent, the other agents'
                            packs) and history lane ``learning``/``session_history``
6     external_stubs        stub, fake, mock and contract files near the change surface
====  ====================  ===============================================================

**Stop rule (measurable).** Each acceptance criterion (the goal itself when
none is given) has keywords (``trigger.derive_keywords``). A criterion is
*covered* when at least half of its keywords (rounded up, at least one) occur
among the terms of the anchors chosen so far — their path, ref, summary and the
words of the lines they point at. After every rung: when all criteria are
covered the climb stops (``criteria_covered``); it also stops when fewer than
:data:`MIN_ANCHOR_TOKENS` tokens of the budget remain (``budget_spent``) or the
pack holds 24 anchors (``anchor_limit``); after rung 6 it is
``ladder_exhausted``. Rung 1 always runs, and each role has rungs it always
visits while budget remains (:data:`ROLE_RUNGS`: a Reviewer always sees the
project KB, a Verifier the tests of the repo view). Every rung's record says
whether it ran and why, how many anchors it added, how many it skipped for the
budget, and how many criteria were covered after it.

A draft is added only when the whole pack, serialized with it, still fits the
budget (exact token count), so pointers win over nothing: the pack carries
anchors and three-line summaries, never file bodies.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from ..composer.scoring import score
from ..composer.types import Candidate
from ..sources.ranking import is_test_path
from ..trigger import derive_keywords
from ..workspace.git import FileDiff
from .anchors import UNREACHABLE, AnchorDraft, Navigator, clean_lines, dedup, qualname
from .lcp import MAX_ANCHORS, RungRecord

__all__ = [
    "KIND_DISTANCE",
    "MIN_ANCHOR_TOKENS",
    "ROLE_RUNGS",
    "RUNG_NAMES",
    "LadderInput",
    "LadderOutcome",
    "climb",
    "covered",
    "criterion_keywords",
]

RUNG_NAMES: tuple[str, ...] = (
    "nearby_code",
    "module_view",
    "repo_view",
    "project_kb",
    "decision_snapshots",
    "external_stubs",
)
#: rungs a role always visits (budget permitting), besides rung 1
ROLE_RUNGS: dict[str, tuple[int, ...]] = {
    "Planner": (3,),
    "Thinker": (2, 3, 5),
    "Implementer": (2, 3),
    "Verifier": (3,),
    "Reviewer": (4,),
    "Critical": (4, 5),
    "Supervisor": (5,),
}
#: below this many spare tokens no anchor fits (the smallest anchor object costs ~45)
MIN_ANCHOR_TOKENS = 40
#: distance of non-code anchors (code and tests use graph hops 0..3, else 7)
KIND_DISTANCE = {"kb": 4, "decision": 5, "artifact": 6}
_MAX_HOPS = 3
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


@dataclass(frozen=True, slots=True)
class LadderOutcome:
    drafts: tuple[AnchorDraft, ...]
    rungs: tuple[RungRecord, ...]
    stopped_after: int
    stop_reason: str
    criteria_covered: tuple[bool, ...]


def criterion_keywords(criterion: str) -> tuple[str, ...]:
    return derive_keywords(criterion)


def covered(keywords: Sequence[str], terms: frozenset[str]) -> bool:
    """At least half of ``keywords`` (rounded up) among ``terms``; no keywords -> covered."""
    if not keywords:
        return True
    found = sum(1 for k in keywords if k in terms)
    return found * 2 >= len(keywords)


# --------------------------------------------------------------------- helpers


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


class _Rungs:
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
                        summary=_summary(change, f"+ {first}" if first else ""),
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
            # relevance gate: a match that is neither near the change nor names a keyword
            # is ranking noise, not context
            if (
                draft is not None
                and cand.kind == "semantic_match"
                and draft.distance == UNREACHABLE
                and not draft.terms & keywords
            ):
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
                    summary=_summary(*text[:3]),
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


def _summary(*lines: str) -> str:
    return clean_lines(lines)


def _terms(drafts: Iterable[AnchorDraft]) -> frozenset[str]:
    out: set[str] = set()
    for d in drafts:
        out |= d.terms
    return frozenset(out)


def climb(
    inp: LadderInput, nav: Navigator, measure: Callable[[Sequence[AnchorDraft]], int]
) -> LadderOutcome:
    """Climb the ladder under ``inp.budget`` (``measure`` = exact pack tokens for drafts)."""
    rungs = _Rungs(inp, nav)
    keywords = [criterion_keywords(c) for c in inp.criteria]
    required = set(ROLE_RUNGS.get(inp.agent, ()))
    selected: list[AnchorDraft] = []
    records: list[RungRecord] = []
    stop_reason = "ladder_exhausted"
    stopped_after = 1
    state = ""  # why the climb is over ("" while it goes on)

    def n_covered() -> int:
        terms = _terms(selected)
        return sum(1 for k in keywords if covered(k, terms))

    for number, name in enumerate(RUNG_NAMES, start=1):
        all_covered = n_covered() == len(keywords)
        spare = inp.budget - measure(selected)
        if number == 1:
            why = "first_rung"
        elif len(selected) >= MAX_ANCHORS:
            why = "anchor_limit"
        elif spare < MIN_ANCHOR_TOKENS:
            why = "budget_spent"
        elif number in required:
            why = "required_for_role"
        elif all_covered:
            why = "criteria_covered"
        else:
            why = "criteria_uncovered"
        if why in ("anchor_limit", "budget_spent", "criteria_covered"):
            state = state or why
            records.append(
                RungRecord(
                    rung=number,
                    name=name,  # type: ignore[arg-type]
                    ran=False,
                    reason=why,
                    anchors_added=0,
                    skipped_over_budget=0,
                    criteria_covered=n_covered(),
                )
            )
            continue
        added = skipped = 0
        keys = {(d.path, d.ref) for d in selected}
        for draft in dedup(rungs.produce(number)):
            if (draft.path, draft.ref) in keys:
                continue
            if len(selected) >= MAX_ANCHORS:
                break
            trial = [*selected, draft]
            if measure(trial) <= inp.budget:
                selected.append(draft)
                keys.add((draft.path, draft.ref))
                added += 1
            else:
                skipped += 1
        stopped_after = number
        records.append(
            RungRecord(
                rung=number,
                name=name,  # type: ignore[arg-type]
                ran=True,
                reason=why,
                anchors_added=added,
                skipped_over_budget=skipped,
                criteria_covered=n_covered(),
            )
        )
    final_terms = _terms(selected)
    flags = tuple(covered(k, final_terms) for k in keywords)
    if all(flags):
        stop_reason = "criteria_covered"
    elif len(selected) >= MAX_ANCHORS:
        stop_reason = "anchor_limit"
    elif state == "budget_spent" or inp.budget - measure(selected) < MIN_ANCHOR_TOKENS:
        stop_reason = "budget_spent"
    return LadderOutcome(tuple(selected), tuple(records), stopped_after, stop_reason, flags)
