"""The one ranking the structure and retrieved lanes share, from the query stack.

``rank_files(ctx)`` turns a :class:`SourceContext` into a
:class:`~codelibrarian.query.locate.LocateRequest` — the task's keywords and
identifiers; with a change, its files, the identifiers on its ``+``/``-`` lines
and the names of the definitions its hunks touch — and runs
:func:`~codelibrarian.query.locate.locate` once per composition. Rule and
constraint documents (the rules and policy lanes carry them) and changed files
(the local lane carries them) are left out; sensitive paths are reported apart.

``LIBRARIAN_ABLATE`` (read by the service, passed in ``ctx.config``-free form as
``ctx.memo["ablate"]``) switches named signals off for the ablation benchmark.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ..query.locate import (
    Located,
    LocatedFile,
    LocateRequest,
    is_test_path,
    locate,
    rank_spans,
    variants,
)
from ..workspace.git import FileDiff
from .base import SourceContext
from .rules import find_rule_files

__all__ = [
    "FileRank",
    "Ranking",
    "changed_names",
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
        ranking = locate(
            ctx.store,
            request_for(ctx),
            ctx.memo.setdefault("shared", {}),
            has_file=ctx.has_file,
            sensitive=ctx.sensitive,
        )
    ctx.memo["ranking"] = ranking
    return ranking
