"""The knowledge navigator: anchors, their micro-summaries, de-duplication, refresh.

An anchor points at a span of a file (``path``, ``lines``) at a revision
(``rev``: the blake2b-128 content hash of the whole file) under a stable
``ref``:

=======================  ==============================================
ref                      meaning
=======================  ==============================================
``path#Qual.name``       a definition (refresh follows it when it moves)
``path#module``          the module's synopsis (its first lines)
``path#§Heading``        a section of a Markdown document
``path#calls:name``      a call site of a changed definition
``path#L12``             a span with no better name (kept on refresh)
``path``                 the whole file (at most 60 lines)
``resources://runs/…``   a run resource (handoff, journal, other pack)
=======================  ==============================================

Micro-summaries are at most three lines of at most 160 characters, made
without a model: a definition's signature and the first line of its
docstring; a module's top-level names and who imports it; a section's heading
and first sentence; otherwise the span's first non-blank lines. Every summary
passes the secret gate, checked against its whole file (a summary line can be
one line of a key body, or a signature cut short).

``distance`` measures how far an anchor is from the change surface (graph
hops over imports and references for code and tests, 0 for the changed
files themselves); the lowest-value anchor is the one with the largest
distance, then the lowest composer score (:func:`drop_key`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..gate import SecretGate
from ..index.records import Symbol
from ..index.storage import Storage
from ..sources.base import term_set
from ..workspace.files import content_hash
from .bloat import clip_span, is_binary_file, log_too_long
from .lcp import ANCHOR_KINDS, Anchor, MicroSummary

__all__ = [
    "UNREACHABLE",
    "AnchorDraft",
    "Navigator",
    "RefreshOutcome",
    "clean_lines",
    "dedup",
    "drop_key",
    "order_key",
    "qualname",
    "refresh_anchors",
    "to_anchor",
    "to_summary",
]

#: distance of code that is not within three hops of the change surface
UNREACHABLE = 7
_LINE_CHARS = 160
_COMMENT = ('"""', "'''", "#", "//", "/*", "*", "--")
_MARKS = "\"'#/*-! "
_CALLABLE = frozenset({"function", "method", "macro"})


@dataclass(frozen=True, slots=True)
class AnchorDraft:
    """An anchor while the ladder works: with its rung, distance, score and terms."""

    kind: str
    path: str
    start: int
    end: int
    ref: str
    rev: str
    rung: int
    distance: int
    score: int
    summary: str
    terms: frozenset[str]


def qualname(sym: Symbol) -> str:
    """``Parent.name`` for members, ``name`` otherwise."""
    return f"{sym.parent}.{sym.name}" if sym.parent else sym.name


def _trim(line: str) -> str:
    line = " ".join(line.split())
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…"


#: the gate of callers that bring none (default sensitive-path and secret rules)
_DEFAULT_GATE = SecretGate()


def clean_lines(
    lines: Iterable[str], *, source: str | None = None, gate: SecretGate | None = None
) -> str:
    """At most three trimmed lines, through the secret gate (``source``: their file)."""
    out = [_trim(ln) for ln in lines if ln and ln.strip()][:3]
    text = "\n".join(out)
    return (gate or _DEFAULT_GATE).clean(text, surface="lcp", kind="summary", source=source)


class Navigator:
    """Reads files, symbols and hashes once, and turns spans into anchor drafts.

    ``is_sensitive`` is the policy engine's check: sensitive files never become
    anchors and are never read; ``gate`` the workspace's secret gate.
    """

    def __init__(
        self,
        root: Path,
        store: Storage | None,
        is_sensitive: Callable[[str], bool],
        gate: SecretGate | None = None,
    ) -> None:
        self.root = root
        self.store = store
        self.is_sensitive = is_sensitive
        self.gate = gate or _DEFAULT_GATE
        self._texts: dict[str, str | None] = {}
        self._revs: dict[str, str | None] = {}
        self._symbols: dict[str, list[Symbol]] = {}
        self._importers: dict[str, list[str]] | None = None

    # ------------------------------------------------------------- reading

    def rev(self, rel: str) -> str | None:
        """Content hash of the file, or None when it cannot be read."""
        if rel not in self._revs:
            try:
                self._revs[rel] = content_hash((self.root / rel).read_bytes())
            except OSError:
                self._revs[rel] = None
        return self._revs[rel]

    def text(self, rel: str) -> str | None:
        if rel not in self._texts:
            if self.is_sensitive(rel) or is_binary_file(self.root, rel):
                self._texts[rel] = None
            else:
                try:
                    data = (self.root / rel).read_bytes()
                except OSError:
                    self._texts[rel] = None
                else:
                    self._texts[rel] = data.decode("utf-8", "replace")
        return self._texts[rel]

    def lines(self, rel: str) -> list[str]:
        text = self.text(rel)
        return text.splitlines() if text is not None else []

    def symbols(self, rel: str) -> list[Symbol]:
        if rel not in self._symbols:
            found = self.store.symbols(path=rel) if self.store is not None else []
            self._symbols[rel] = sorted(found, key=lambda s: (s.start_line, s.end_line, s.name))
        return self._symbols[rel]

    def enclosing(self, rel: str, line: int) -> Symbol | None:
        """The innermost definition of ``rel`` containing ``line``."""
        best: Symbol | None = None
        for s in self.symbols(rel):
            if s.start_line <= line <= s.end_line and (
                best is None or s.end_line - s.start_line <= best.end_line - best.start_line
            ):
                best = s
        return best

    def symbol_at(self, rel: str, start: int) -> Symbol | None:
        """The outermost definition starting at ``start``."""
        hits = [s for s in self.symbols(rel) if s.start_line == start]
        return max(hits, key=lambda s: (s.end_line, s.name)) if hits else None

    def symbol_named(self, rel: str, qual: str) -> Symbol | None:
        hits = [s for s in self.symbols(rel) if qualname(s) == qual]
        return hits[0] if hits else None

    def importers(self, rel: str) -> list[str]:
        """Files importing ``rel`` (sorted)."""
        if self._importers is None:
            table: dict[str, list[str]] = {}
            if self.store is not None:
                for src, dst, _ in self.store.edges("import"):
                    table.setdefault(dst, []).append(src)
            self._importers = {k: sorted(set(v)) for k, v in table.items()}
        return self._importers.get(rel, [])

    # ----------------------------------------------------------- summaries

    def symbol_summary(self, sym: Symbol, extra: str = "") -> str:
        sig = sym.signature.strip() or f"{sym.kind} {sym.name}"
        head = f"in {sym.parent}: {sig}" if sym.parent else sig
        doc = (sym.doc or "").strip().splitlines()
        return self.summarize(sym.path, [head, doc[0] if doc else "", extra])

    def module_summary(self, rel: str) -> str:
        top = [s for s in self.symbols(rel) if s.parent is None and not s.name.startswith("__")]
        names = [s.name + ("()" if s.kind in _CALLABLE else "") for s in top[:8]]
        more = f" (+{len(top) - 8} more)" if len(top) > 8 else ""
        first = f"defines {', '.join(names)}{more}" if names else "defines no symbols"
        users = [p for p in self.importers(rel) if not self.is_sensitive(p)]
        used = f"imported by {', '.join(users[:4])}" + (" …" if len(users) > 4 else "")
        lead = ""
        for row in self.lines(rel)[:5]:  # a leading docstring or comment, if any
            text = row.strip()
            if text.startswith(_COMMENT) and text.strip(_MARKS):
                lead = text.strip(_MARKS)
                break
        return self.summarize(rel, [first, lead, used if users else ""])

    def section_summary(self, rel: str, start: int, end: int) -> str:
        rows = self.lines(rel)[start - 1 : end]
        heading = next((r.lstrip("#").strip() for r in rows if r.startswith("#")), "")
        prose = next(
            (r for r in rows if r.strip() and not r.startswith(("#", "---", "```"))),
            "",
        )
        sentence = re.split(r"(?<=[.!?])\s", prose.strip(), maxsplit=1)[0] if prose else ""
        return self.summarize(rel, [heading, sentence])

    def span_summary(self, rel: str, start: int, end: int) -> str:
        rows = self.lines(rel)[start - 1 : end]
        return self.summarize(rel, [r.strip() for r in rows if r.strip()][:2])

    def summarize(self, rel: str, lines: Iterable[str]) -> str:
        """``clean_lines`` checked against the secrets of ``rel``'s whole text."""
        return clean_lines(lines, source=self.text(rel), gate=self.gate)

    def summary_for(self, kind: str, rel: str, ref: str, start: int, end: int) -> str:
        """The deterministic micro-summary for an anchor (used by make and refresh)."""
        name = ref.partition("#")[2]
        if ref.startswith("resources://"):
            return self.span_summary(rel, start, end)
        if name == "module":
            return self.module_summary(rel)
        if name.startswith("§") or (kind == "kb" and not name):
            return self.section_summary(rel, start, end)
        if name and not re.match(r"^(L\d+|calls:.*)$", name):
            sym = self.symbol_named(rel, name)
            if sym is not None:
                return self.symbol_summary(sym)
        return self.span_summary(rel, start, end)

    # --------------------------------------------------------------- drafts

    def usable(self, rel: str) -> bool:
        """Whether ``rel`` may be anchored (exists, not sensitive, binary or a long log)."""
        if not rel or self.is_sensitive(rel) or self.rev(rel) is None:
            return False
        return not is_binary_file(self.root, rel) and not log_too_long(self.root, rel)

    def make(
        self,
        *,
        kind: str,
        path: str,
        start: int,
        end: int,
        ref: str,
        rung: int,
        distance: int,
        score: int,
        focus: int | None = None,
        summary: str | None = None,
    ) -> AnchorDraft | None:
        """A draft for ``path`` lines ``start..end`` (clipped to 60 lines), or None."""
        if not self.usable(path):
            return None
        n = max(1, len(self.lines(path)))
        start = max(1, min(start, n))
        end = max(start, min(end, n))
        start, end = clip_span(start, end, focus)
        text = summary if summary is not None else self.summary_for(kind, path, ref, start, end)
        body = "\n".join(self.lines(path)[start - 1 : end])
        rev = self.rev(path)
        assert rev is not None
        return AnchorDraft(
            kind=kind,
            path=path,
            start=start,
            end=end,
            ref=ref,
            rev=rev,
            rung=rung,
            distance=distance,
            score=score,
            summary=text,
            terms=term_set(f"{path} {ref} {text} {body}"),
        )


def dedup(drafts: Iterable[AnchorDraft]) -> list[AnchorDraft]:
    """First draft per ``(path, ref)`` (earlier rungs and better scores come first)."""
    seen: set[tuple[str, str]] = set()
    out: list[AnchorDraft] = []
    for d in drafts:
        key = (d.path, d.ref)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def order_key(d: AnchorDraft) -> tuple[int, int, str, int, str]:
    """Pack order: code -> tests -> kb -> decisions -> artifacts, then nearest first."""
    return (ANCHOR_KINDS.index(d.kind), d.distance, d.path, d.start, d.ref)


def drop_key(d: AnchorDraft) -> tuple[int, int, int, str, str]:
    """The draft with the largest key is the lowest-value one (dropped first)."""
    return (d.distance, -d.score, ANCHOR_KINDS.index(d.kind), d.path, d.ref)


def to_anchor(d: AnchorDraft) -> Anchor:
    return Anchor(kind=d.kind, path=d.path, lines=f"{d.start}-{d.end}", rev=d.rev, ref=d.ref)  # type: ignore[arg-type]


def to_summary(d: AnchorDraft) -> MicroSummary | None:
    return MicroSummary(ref=d.ref, summary=d.summary) if d.summary else None


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    """Anchors after a refresh and what changed."""

    anchors: tuple[Anchor, ...]
    summaries: tuple[MicroSummary, ...]
    refreshed: tuple[str, ...]  # refs whose file hash changed and were re-fetched
    missing: tuple[str, ...]  # refs whose file is gone or no longer anchorable


def refresh_anchors(
    nav: Navigator, anchors: Sequence[Anchor], summaries: Sequence[MicroSummary]
) -> RefreshOutcome:
    """Re-fetch exactly the anchors whose file hash changed; leave the others untouched.

    A re-fetched definition anchor follows its definition (new line span); other
    anchors keep their span, clipped to the file's new length. The summary of a
    re-fetched anchor is rebuilt; other summaries are kept byte for byte.
    """
    by_ref = {s.ref: s for s in summaries}
    out: list[Anchor] = []
    new_summaries: dict[str, MicroSummary] = {}
    refreshed: list[str] = []
    missing: list[str] = []
    for a in anchors:
        current = nav.rev(a.path)
        if current == a.rev:
            out.append(a)
            if a.ref in by_ref:
                new_summaries[a.ref] = by_ref[a.ref]
            continue
        if not nav.usable(a.path):
            missing.append(a.ref)
            continue
        start, end = a.span
        name = a.ref.partition("#")[2]
        sym = nav.symbol_named(a.path, name) if name and not a.ref.startswith("res") else None
        if sym is not None:
            start, end = sym.start_line, sym.end_line
        draft = nav.make(
            kind=a.kind,
            path=a.path,
            start=start,
            end=end,
            ref=a.ref,
            rung=0,
            distance=0,
            score=0,
        )
        if draft is None:
            missing.append(a.ref)
            continue
        out.append(to_anchor(draft))
        summary = to_summary(draft)
        if summary is not None:
            new_summaries[a.ref] = summary
        refreshed.append(a.ref)
    ordered = tuple(new_summaries[a.ref] for a in out if a.ref in new_summaries)
    return RefreshOutcome(tuple(out), ordered, tuple(refreshed), tuple(missing))
