"""The one ranking the structure and retrieved lanes share, from the query stack.

``rank_files(ctx)`` turns a :class:`SourceContext` into a
:class:`~codelibrarian.query.locate.LocateRequest` — the task's keywords and
identifiers; with a change, its files, the identifiers on its ``+``/``-`` lines
and the names of the definitions its hunks touch — and runs
:func:`~codelibrarian.query.locate.locate` once per composition. Rule and
constraint documents (the rules and policy lanes carry them) and changed files
(the local lane carries them) are left out; sensitive paths are reported apart.
Without a change, the files below the first places that git history changed
together with the best one then move up (:func:`coedit_rerank`, signal ``coedit``).

A compose request's ``signals_off`` (for ablation studies; the service passes it as
``ctx.memo["ablate"]``) switches named signals off.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from ..index.history_edits import past_edit_weights
from ..query.locate import (
    Located,
    LocatedFile,
    LocateRequest,
    Stage,
    is_test_path,
    locate,
    rank_spans,
    variants,
)
from ..workspace.git import FileDiff
from .base import SourceContext
from .rules import find_rule_files

__all__ = [
    "COEDIT_LEADS",
    "COEDIT_PERMILLE",
    "COMMITS_PERMILLE",
    "FileRank",
    "Ranking",
    "changed_names",
    "coedit_partners",
    "coedit_rerank",
    "commits_rerank",
    "diff_identifiers",
    "is_code",
    "is_test_path",
    "rank_files",
    "rank_spans",
    "request_for",
    "variants",
]

#: a ranked file (the query stack's type, under the name the lanes use)
FileRank = LocatedFile
Ranking = Located

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

#: tasks without a change: how many of the best files lead the co-edit signal, and how
#: much a file's sort key gains at full co-edit strength; see :func:`coedit_rerank`
#: (fitted on the tuning split of benchmarks/ctxbench.md, checked on its dev2 split)
COEDIT_LEADS = 1
COEDIT_PERMILLE = 100
#: the fewest shared commits that count as co-editing
COEDIT_MIN = 1
#: the co-edit signal moves files in the order but leaves the scores where they were
COEDIT_ORDER_ONLY = True
#: the first places the co-edit signal never changes (the task's own words decide them)
COEDIT_KEEP = 3
#: packs below this many tokens only: there the first 8 files get spans and a place among
#: them is what counts; at 8,000 tokens 20 files do, and the moves reshuffled their shares
#: (tuning split +0.020 edit recall at 8,000, dev2 split -0.015: not general)
COEDIT_BELOW_BUDGET = 4000
#: tasks without a change: how much a file's sort key gains at full strength when the
#: past commits whose messages are most like the task edited it, the places it never
#: changes, and the packs it applies to (see :func:`commits_rerank`; probed and fitted in
#: benchmarks/ctxbench.md, "Past commits like the task")
COMMITS_PERMILLE = 400
COMMITS_KEEP = 3
COMMITS_BELOW_BUDGET = 4000
#: the fewest of the similar commits that must have edited a file for it to move
COMMITS_MIN = 2


def is_code(ctx: SourceContext, path: str) -> bool:
    """Whether the index parsed ``path`` as source code (not prose, markup or data)."""
    from ..index.languages import LANGUAGES

    shared = ctx.memo.setdefault("shared", {})
    langs = shared.get("ranking.languages")
    if langs is None:
        langs = {r.path: r.language for r in ctx.store.files()} if ctx.store is not None else {}
        shared["ranking.languages"] = langs
    return langs.get(path) in {lang.name for lang in LANGUAGES}


def diff_identifiers(ctx: SourceContext, limit: int = 40) -> list[str]:
    """Identifiers on the change's ``+``/``-`` lines and hunk headers, most frequent first."""
    return changed_identifiers(ctx.changes, limit)


def changed_identifiers(changes: Iterable[FileDiff], limit: int = 40) -> list[str]:
    """Identifiers on ``changes``' ``+``/``-`` lines and hunk headers, most frequent first
    (a hunk header's counting twice), ties by name; common code words left out."""
    counts: Counter[str] = Counter()
    for diff in changes:
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


def changed_names(ctx: SourceContext, limit: int = 12) -> list[str]:
    """Names of the definitions the change's hunks touch (old-side lines), in file order."""
    if ctx.store is None:
        return []
    out: list[str] = []
    # a diff given as text is not applied: the index holds the old side of the file
    old_side = ctx.trigger.change.mode == "diff"
    for diff in sorted(ctx.changes, key=lambda d: d.path):
        symbols = ctx.store.symbols(path=diff.path) if diff.hunks else []
        for hunk in diff.hunks:
            start, count = (
                (hunk.old_start, hunk.old_lines) if old_side else (hunk.new_start, hunk.new_lines)
            )
            lo, hi = start, start + max(count, 1) - 1
            touched = [s for s in symbols if s.start_line <= hi and lo <= s.end_line]
            # the innermost definitions: a method rather than its whole class
            for s in sorted(touched, key=lambda s: (s.end_line - s.start_line, s.start_line)):
                if s.kind not in ("module",) and s.name not in out and len(s.name) >= 3:
                    out.append(s.name)
                    break
    return out[:limit]


def request_for(ctx: SourceContext) -> LocateRequest:
    """The locate request of this composition (memoized)."""
    cached = ctx.memo.get("ranking.request")
    if isinstance(cached, LocateRequest):
        return cached
    shared = ctx.memo.setdefault("shared", {})
    rule_files = shared.get("ranking.rule_files")
    if rule_files is None:
        found = shared.get("rules.files")
        if found is None:
            found = find_rule_files(ctx.files, ctx.config.rules.files)
            shared["rules.files"] = found
        rule_files = frozenset({p for p, _ in found} | set(ctx.config.policy.constraint_docs))
        shared["ranking.rule_files"] = rule_files
    changes = bool(ctx.changes)
    request = LocateRequest(
        task=ctx.trigger.task,
        keywords=tuple(ctx.trigger.keywords),
        identifiers=tuple(ctx.trigger.identifiers),
        changed=ctx.changed_paths,
        explicit=tuple(ctx.trigger.files),
        diff_words=tuple(diff_identifiers(ctx)) if changes else (),
        changed_names=tuple(changed_names(ctx)) if changes else (),
        excluded=frozenset(rule_files),
        off=frozenset(ctx.memo.get("ablate", ())),
    )
    ctx.memo["ranking.request"] = request
    return request


def rank_files(ctx: SourceContext) -> Ranking:
    """The ranking for this composition (computed once; empty without an index)."""
    cached = ctx.memo.get("ranking")
    if isinstance(cached, Located):
        return cached
    if ctx.store is None:
        ranking = Located((), (), {}, ())
    else:
        shared = ctx.memo.setdefault("shared", {})
        request = request_for(ctx)
        ranking = locate(ctx.store, request, shared, has_file=ctx.has_file, sensitive=ctx.sensitive)
        if (
            request.mode == "intent"
            and "commits" not in request.off
            and ctx.budget < COMMITS_BELOW_BUDGET
        ):
            ranking = commits_rerank(ranking, past_edit_weights(ctx.store, request.task, shared))
        if (
            request.mode == "intent"
            and "coedit" not in request.off
            and ctx.budget < COEDIT_BELOW_BUDGET
        ):
            partners = shared.get("ranking.coedit")
            if partners is None:
                partners = shared["ranking.coedit"] = coedit_partners(ctx.store.edges("cochange"))
            ranking = coedit_rerank(ranking, partners)
    ctx.memo["ranking"] = ranking
    return ranking


def commits_rerank(
    ranking: Located, past: Mapping[str, tuple[int, int]], *, permille: int | None = None
) -> Located:
    """Move up the code files that past commits like the task edited.

    ``past`` (:func:`~codelibrarian.index.history_edits.past_edit_weights`) weighs each
    file by the commits with messages most like the task's that edited it: a vague
    task ("fix the highlighting a bit") often lands where similar changes did. Below
    the first :data:`COMMITS_KEEP` places (the task's own words decide them) each code
    file's sort key gains ``permille`` (default :data:`COMMITS_PERMILLE`) x its weight
    per mille of the most any of them has / 1000; the places keep their scores. Integer
    arithmetic; recorded per file as ``commits`` and as a stage of the explanation.
    """
    permille = COMMITS_PERMILLE if permille is None else permille
    keep = COMMITS_KEEP
    # one similar commit is an anecdote: a file counts when several of them edited it
    weights = {p: w for p, (w, n) in past.items() if n >= COMMITS_MIN}
    if permille <= 0 or len(ranking.files) <= keep or not weights:
        return ranking
    # per mille of the file the similar commits edited most, wherever it ranks: a file
    # edited once by one of them is weak evidence even when no better one is below
    most = max(weights.values())
    return _lift_below(
        ranking,
        weights,
        keep=keep,
        permille=permille,
        order_only=True,
        signal="commits",
        most=most,
        summary=lambda lifted, up: (
            f"{lifted} ranked code files below place {keep} were edited by past commits like "
            f"the task ({len(weights)} files in all); {up} moved up (sort key up to +{permille})"
        ),
    )


def coedit_partners(edges: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """The co-change pairs by file: ``{path: {partner: shared commits}}`` (built once
    per index generation)."""
    out: dict[str, dict[str, int]] = {}
    for a, b, w in edges:
        if a != b and w > 0:
            out.setdefault(a, {})[b] = w
    return out


def coedit_rerank(
    ranking: Located,
    partners: Mapping[str, Mapping[str, int]],
    *,
    leads: int | None = None,
    permille: int | None = None,
    order_only: bool | None = None,
    keep: int | None = None,
) -> Located:
    """Move up the code files the git history edits together with the best ones.

    The ``leads`` best files are where the task's words point; a file that
    changed in the same commits as they did (``partners``: the index's co-change
    pairs by file, weighted by shared commits) is often part of the same edit:
    the second formatter of a format change, the module that re-exports a new
    name. Below the first ``keep`` places (default :data:`COEDIT_KEEP`, at
    least the leads), each code file's sort key gains ``permille`` × its
    co-edit strength / 1000 (its commits shared with the leads, per mille of the
    most any ranked code file below the kept places shares); the files are re-ordered by
    that key, then path. With ``order_only`` (default :data:`COEDIT_ORDER_ONLY`)
    each place keeps the score it had, so a moved file takes a place, not a
    larger share of the budget. The kept places keep their files and scores. Integer
    arithmetic only. The strength is recorded per file as ``coedit``, the count
    as a stage of the explanation.
    """
    leads = COEDIT_LEADS if leads is None else leads
    permille = COEDIT_PERMILLE if permille is None else permille
    order_only = COEDIT_ORDER_ONLY if order_only is None else order_only
    keep = max(leads, COEDIT_KEEP if keep is None else keep)
    head = ranking.files[:leads]
    if not head or permille <= 0 or len(ranking.files) <= keep:
        return ranking
    together: dict[str, int] = {}
    for lead in head:
        for path, w in partners.get(lead.path, {}).items():
            if w >= COEDIT_MIN:
                together[path] = together.get(path, 0) + w
    return _lift_below(
        ranking,
        together,
        keep=keep,
        permille=permille,
        order_only=order_only,
        signal="coedit",
        summary=lambda lifted, up: (
            f"{lifted} ranked code files below place {keep} changed in the same commits as "
            f"the best {len(head)}; {up} moved up (sort key up to +{permille})"
        ),
    )


def _lift_below(
    ranking: Located,
    together: Mapping[str, int],
    *,
    keep: int,
    permille: int,
    order_only: bool,
    signal: str,
    summary: Callable[[int, int], str],
    most: int | None = None,
) -> Located:
    """Re-order the code files below the first ``keep`` places by their score plus
    ``permille`` x their strength / 1000 (``together`` per mille of the most any of them
    has, or of ``most`` when given), ties by path; ``ranking`` itself when no file below
    has any. The strength is recorded per file as ``signal``, and a stage of that name
    says ``summary(files with a strength, files moved up)``."""
    below = ranking.files[keep:]
    if not any(together.get(f.path, 0) for f in below if f.is_code):
        return ranking
    if most is None:
        most = max(together.get(f.path, 0) for f in below if f.is_code)
    strengths: list[int] = []
    keys: list[tuple[int, str, int]] = []
    for i, f in enumerate(below):
        # the file's value per mille of the largest (by default, of any code file below)
        strength = together.get(f.path, 0) * 1000 // most if f.is_code else 0
        strengths.append(strength)
        keys.append((-(f.score + permille * strength // 1000), f.path, i))
    keys.sort()
    moved: list[LocatedFile] = []
    lifted = up = 0
    for place, (key, _, i) in enumerate(keys):
        f = below[i]
        up += place < i
        # each place keeps its old score (order_only): a moved file takes a place,
        # not a larger share of the budget from the files above it
        score = below[place].score if order_only else min(1000, -key)
        if strengths[i] <= 0 and score == f.score:
            moved.append(f)  # unchanged: no new object (a ranking holds hundreds of files)
            continue
        signals = f.signals
        if strengths[i] > 0:
            lifted += 1
            signals = tuple(sorted((*signals, (signal, strengths[i]))))
        moved.append(LocatedFile(f.path, score, signals, f.hits, f.is_test, f.is_code))
    stage = Stage(signal, summary(lifted, up))
    return replace(ranking, files=(*ranking.files[:keep], *moved), stages=(*ranking.stages, stage))
