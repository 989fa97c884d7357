"""Retrieved lane: the spans where the change is likely to happen, from the query stack.

Files and spans come from :mod:`codelibrarian.query.locate` (via :mod:`.ranking`):
the top ``clamp(budget // TOKENS_PER_FILE, 4, 20)`` files (8 at 2,000 tokens), and
in each its spans — a function or method, a class's own lines (its header and
fields), a run of module-level lines — best first. Every span is an *excerpt*
candidate (``semantic_match``): its lines verbatim, framed by the first line of
the enclosing class, cut to ``clamp(budget * 45 / 100, 300, 1500)`` tokens (prose
dropped before code).
Excerpts of one file selected together render as one block (see
``composer.render``), so the pack shows the file's relevant parts in order,
the rest elided with ``⋮``.

relevance = the file's share of the best file's score (a change log's counts
``HISTORY_PERMILLE`` of it for a task not about releases: see ``history_permille``)
x (floor + (1000 - floor) x
the span's score within its file / 1000) / 1000, floor 350 (250 for a task without
a change below 4,000 tokens: see ``span_floor``); a span whose docstring or comments make up at
least a third of it (six lines or more) is offered as two candidates, its code
at that relevance and its prose at half of it, so under pressure bodies beat
prose. specificity 600; risk 300; recency from git. Each file offers its best
``_SPANS_PER_FILE`` spans; a first file that clearly leads offers ``LEAD_SPANS``
(``lead_depth``: a task without a change, from ``SMALL_BUDGET`` tokens).

A **focus excerpt** (``semantic_match``, discriminator ``focus``) per top file, when
the change or the task names identifiers: windows of ``excerpts.WINDOW`` lines
either side of the file's best lines by focus score (2 points per strong word a
line names, 1 per weak one; a line needs 2; at most
``FOCUS_WINDOWS`` lines), each framed by the first line of the definition it sits
in, cut to ``focus_cap(budget)`` tokens. Its relevance is the file's score share x
``FOCUS_RELEVANCE`` / 1000; the file's spans merge into the same block around it.
A file the change ripples into is often edited in several places deep inside
functions: whole spans reach one or two of them, the windows reach more.

``test_context`` (budgets of 4,000 tokens and more): tests related to the
changed files and the top five files, by import edges (the test imports the
file) or by naming (``test_foo.py``, ``foo_test.go``, ``foo.test.ts`` for
``foo``): the test's best-matching span (or its start) cut to half the cap.
relevance 200 + a fifth of the related file's score (changed files count 1000);
specificity 500; risk 300.

Sensitive files that match the task (or were asked for) appear as placeholder
candidates so the policy engine's exclusion is recorded; their content is never read.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import replace

from ..composer.excerpt import render_excerpt
from ..composer.types import Candidate
from ..query.locate import Span, Stage
from .base import PLACEHOLDER, SourceContext, clamp
from .excerpts import (
    Excerpt,
    _fits,
    fit_excerpt,
    focus_excerpt,
    focus_from_index,
    numbered,
    prose_lines,
    word_lines_of,
)
from .ranking import FileRank, is_test_path, rank_files, rank_spans, request_for

__all__ = [
    "RetrievedSource",
    "history_permille",
    "is_history",
    "per_file_cap",
    "span_floor",
    "span_relevance",
]

#: below this budget the lane offers no test_context (code of the files comes first)
_TESTS_FROM_BUDGET = 4000
_SPANS_PER_FILE = 24
_PROSE_SHARE = 3  # prose is split off when it is at least 1/3 of a span...
_PROSE_MIN = 6  # ...and at least this many lines
#: spans are offered, best first across files, until they hold this many budgets
_OFFER_BUDGETS = 3
#: a span's relevance is the file's share x (floor + (1000 - floor) x span score / 1000):
#: SPAN_FLOOR, or SPAN_FLOOR_INTENT_SMALL for a task without a change below
#: SMALL_BUDGET tokens, where a file's weak spans should not outrank another
#: file's strong one (with a change the file ranking is the better evidence)
SPAN_FLOOR = 350
SPAN_FLOOR_INTENT_SMALL = 250
SMALL_BUDGET = 4000
#: a task without a change, from SMALL_BUDGET tokens: the first file offers up to
#: LEAD_SPANS spans when its score is at least LEAD_PERMILLE / 1000 of the second's
#: (``lead_depth``; measured in benchmarks/ctxbench.md, "Edit recall lost, by definition")
LEAD_SPANS = 64
LEAD_PERMILLE = 1500
#: span candidates kept per index generation (a resident server's calls share them)
_SPAN_MEMO = 20_000


#: (strong, weak) words a focus excerpt opens windows around (``focus_words``)
FocusWords = tuple[tuple[str, ...], tuple[str, ...]]


def focus_words(ctx: SourceContext) -> FocusWords:
    """The words whose lines a focus excerpt shows: the change's identifiers and the
    task's identifiers (strong), the task's keywords and their singular forms (weak)."""
    cached = ctx.memo.get("retrieved.focus_words")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    request = request_for(ctx)
    strong = tuple(
        sorted(
            {w.lower() for w in request.diff_words}
            | {i.replace("/", ".").split(".")[-1].lower() for i in request.identifiers}
        )
    )
    weak = tuple(sorted(request.terms() - set(strong)))
    words = (strong, weak)
    ctx.memo["retrieved.focus_words"] = words
    return words


#: the focus excerpt's share of the budget (per mille; 0 turns it off) and relevance
FOCUS_PERMILLE = 150
FOCUS_RELEVANCE = 800
FOCUS_MAX = 600
#: a focus line names at least one strong word (2) or this many points of weak ones
FOCUS_LEAST = 2
#: focus lines a file's focus excerpt opens windows for at most (the best ones)
FOCUS_WINDOWS = 16


def focus_cap(budget: int) -> int:
    """Token cap of one file's focus excerpt (windows around the lines a change names)."""
    return clamp(budget * FOCUS_PERMILLE // 1000, 150, FOCUS_MAX)


#: one span's cap as a share of the budget (per mille), and budget tokens per top file
SPAN_CAP_PERMILLE = 450
TOKENS_PER_FILE = 250


def per_file_cap(budget: int) -> int:
    """Largest excerpt (tokens) one span may bring into the retrieved lane."""
    return clamp(budget * SPAN_CAP_PERMILLE // 1000, 300, 1500)


def span_floor(budget: int, mode: str) -> int:
    """The part of a file's share every span of it gets whatever its own score."""
    if mode == "intent" and budget < SMALL_BUDGET:
        return SPAN_FLOOR_INTENT_SMALL
    return SPAN_FLOOR


def lead_depth(ctx: SourceContext, top: tuple[FileRank, ...]) -> bool:
    """Whether the first ranked file offers ``LEAD_SPANS`` spans instead of the usual
    ``_SPANS_PER_FILE``: a task without a change, a budget of ``SMALL_BUDGET`` tokens
    or more, and a first file that scores ``LEAD_PERMILLE`` per mille of the second or
    more. When one file clearly holds the task, the definition to edit is more often
    one of its weaker spans (the task's words name its neighbours) than another
    file's best one; a large file has more definitions than the usual offer reaches.
    Recorded as the ``lead_depth`` stage of the explanation."""
    request = request_for(ctx)
    if (
        not top
        or request.mode != "intent"
        or ctx.budget < SMALL_BUDGET
        or "lead_depth" in request.off
    ):
        return False
    first = top[0].score
    second = top[1].score if len(top) > 1 else 0
    if first * 1000 < second * LEAD_PERMILLE:
        return False
    ranking = rank_files(ctx)
    lead = f"scores {first * 1000 // second} per mille of the second" if second else "is alone"
    stage = Stage(
        "lead_depth",
        f"the first ranked file {lead}: up to {LEAD_SPANS} of its spans offered "
        f"({_SPANS_PER_FILE} for each other file)",
    )
    ctx.memo["ranking"] = replace(ranking, stages=(*ranking.stages, stage))
    return True


def span_relevance(share: int, span_score: int, floor: int) -> int:
    """A span's relevance from its file's share of the best file's score and its own
    score within the file (all per mille)."""
    return share * (floor + (1000 - floor) * span_score // 1000) // 1000


#: a change log's (``CHANGELOG.md``, ``HISTORY.rst``, ``NEWS``...) file share counts this
#: much (per mille) for its excerpts, unless the task is about releases or the log
HISTORY_PERMILLE = 300
_HISTORY_NAMES = frozenset(
    {"changelog", "changes", "history", "news", "releases", "release-notes", "release_notes"}
)
_HISTORY_EXTS = frozenset({"", ".md", ".rst", ".txt", ".rdoc", ".markdown"})
_HISTORY_TASK = re.compile(r"change ?log|release|history|\bnews\b", re.IGNORECASE)


def is_history(path: str) -> bool:
    """Whether ``path`` is a change log by its name (in any folder)."""
    stem, ext = posixpath.splitext(posixpath.basename(path).lower())
    return stem in _HISTORY_NAMES and ext in _HISTORY_EXTS


def history_permille(task: str, path: str) -> int:
    """The share (per mille) of its file's score a file's excerpts keep: all of it, but
    for a change log in a task that is not about releases or the log. A log's entries
    repeat the words of the changes they record, so it ranks high for a code task
    while the code to change is elsewhere; when room is left it still comes in."""
    if not is_history(path) or _HISTORY_TASK.search(task):
        return 1000
    return HISTORY_PERMILLE


def _language(path: str) -> str | None:
    ext = posixpath.splitext(path)[1].lower().lstrip(".")
    return ext or None


def _stem(path: str) -> str:
    return posixpath.basename(path).split(".")[0].lower()


def _test_stems(path: str) -> str:
    stem = _stem(path)
    for prefix in ("test_", "tests_"):
        if stem.startswith(prefix):
            return stem[len(prefix) :]
    for suffix in ("_test", "_tests", "_spec"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _range_lines(rows: list[str], a: int, b: int) -> Excerpt:
    """``numbered(rows, [(a, b)])``: lines ``a..b`` numbered, sliced without a table
    (a test excerpt's range is up to two caps of lines)."""
    first = max(1, a)
    return tuple(enumerate(rows[first - 1 : max(first - 1, b)], start=first))


def _excerpt_candidate(
    ctx: SourceContext,
    path: str,
    fitted: Excerpt,
    *,
    kind: str = "semantic_match",
    discriminator: str = "",
    relevance: int,
    specificity: int = 600,
    content: str | None = None,
) -> Candidate:
    """A candidate showing ``fitted`` lines of ``path`` (risk 300, the file's recency);
    ``content``: their rendering, when the caller has it already."""
    return ctx.candidate(
        kind=kind,
        lane="retrieved",
        path=path,
        content=render_excerpt(fitted) if content is None else content,
        title=path,
        discriminator=discriminator,
        relevance=relevance,
        specificity=specificity,
        risk=300,
        recency_bucket=ctx.recency.get(path, 0),
        lines=(fitted[0][0], fitted[-1][0]),
        language=_language(path),
        excerpt=fitted,
    )


def _with_relevance(parts: list[tuple[int, Candidate]], relevance: int) -> list[Candidate]:
    """A span's candidates at ``relevance`` (each part's share of it): the same objects
    when they have it already, else copies that differ only in it (id, text and
    estimate do not depend on it)."""
    out: list[Candidate] = []
    for divisor, cand in parts:
        wanted = clamp(relevance // divisor)
        out.append(cand if cand.relevance == wanted else replace(cand, relevance=wanted))
    return out


class RetrievedSource:
    """Ranked spans of the top files (``semantic_match``) and their tests."""

    name = "retrieved"

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        ranking = rank_files(ctx)
        cap = per_file_cap(ctx.budget)
        out: list[Candidate] = []
        for path in ranking.sensitive:
            # stands for a matching sensitive file; the policy engine excludes it unread
            out.append(
                ctx.candidate(
                    kind="semantic_match",
                    lane="retrieved",
                    path=path,
                    content=PLACEHOLDER,
                    title=path,
                    relevance=500,
                    specificity=400,
                    risk=1000,
                )
            )
        top = ranking.top(clamp(ctx.budget // TOKENS_PER_FILE, 4, 20))
        best = max((f.score for f in top), default=0)
        offers: list[tuple[int, str, Span]] = []
        words = focus_words(ctx)
        deep = lead_depth(ctx, top)
        for place, rank in enumerate(top):
            limit = LEAD_SPANS if deep and place == 0 else _SPANS_PER_FILE
            spans = self._file_spans(ctx, rank, best, limit)
            offers.extend(spans)
            if FOCUS_PERMILLE and words[0]:
                out.extend(self._focus(ctx, rank, best, spans, words))
        # best spans first across files, until they hold a few budgets' worth of
        # tokens: the rest would never be chosen and only cost time downstream
        offers.sort(key=lambda o: (-o[0], o[1], o[2].start, o[2].chunk_id))
        room = ctx.budget * _OFFER_BUDGETS
        # a span's candidates depend only on these inputs and the file's lines, which
        # hold for the index generation: a resident server builds each one once, and
        # a span offered again at another relevance (another task) takes its new
        # relevance on the same excerpt (``_with_relevance``)
        made_before: dict[tuple[object, ...], list[tuple[int, Candidate]]] = ctx.memo.setdefault(
            "shared", {}
        ).setdefault("retrieved.spans", {})
        for relevance, path, span in offers:
            if room <= 0:
                break
            key = (
                path,
                span.start,
                span.end,
                span.own,
                span.frame,
                cap,
                ctx.recency.get(path, 0),
                ctx.tokenizer.name,
            )
            parts = made_before.get(key)
            if parts is None:
                parts = self._span(ctx, ctx.lines(path), span, relevance=relevance, cap=cap)
                if len(made_before) < _SPAN_MEMO:
                    made_before[key] = parts
            made = _with_relevance(parts, relevance)
            room -= sum(c.token_estimate for c in made)
            out.extend(made)
        if ctx.budget >= _TESTS_FROM_BUDGET:
            out.extend(self._tests(ctx, ranking.tests, ranking.top(5), cap // 2))
        return out

    @staticmethod
    def _focus(
        ctx: SourceContext,
        rank: FileRank,
        best: int,
        spans: list[tuple[int, str, Span]],
        words: FocusWords,
    ) -> list[Candidate]:
        """Windows around the file's lines that name the change's or task's identifiers.

        One excerpt per file: the best-scoring lines (2 per strong word, 1 per weak
        one, at least one strong word), each with ``WINDOW`` lines either side and
        the first line of the definition enclosing it as a frame, within
        ``focus_cap``. It counts like the file's best possible span.
        """
        rows = ctx.lines(rank.path)
        if not rows:
            return []
        # only the lines naming the task's words are read (``word_lines_of``): no
        # whole-file word table is built or kept per file
        index = word_lines_of(rows, (*words[0], *words[1]))
        scores = focus_from_index(index, *words)
        # only the lines a window could be opened for: the best ones, in a total order
        ranked = sorted(
            (n for n, v in scores.items() if v >= FOCUS_LEAST), key=lambda n: (-scores[n], n)
        )
        focus = {n: scores[n] for n in ranked[:FOCUS_WINDOWS]}
        if not focus:
            return []
        frame_of: dict[int, tuple[int, ...]] = {}
        # each line's owner: the smallest definition whose own lines hold it
        owned = sorted(
            (
                (s.end - s.start, s.start, a, b, s)
                for _, _, s in spans
                if s.kind != "module"
                for a, b in s.own
            ),
            key=lambda t: (t[0], t[1], t[2], t[3], t[4].chunk_id),
        )
        for number in ranked[:FOCUS_WINDOWS]:
            owner = None
            for _, _, a, b, s in owned:
                if a <= number <= b:
                    owner = s
                    break
            if owner is None:
                continue
            # the definition's first non-blank line (a chunk may start at a blank line)
            head = next((n for n in range(owner.start, number) if rows[n - 1].strip()), number)
            if head != number:
                frame_of[number] = (*owner.frame, head)
        share = rank.score * history_permille(ctx.trigger.task, rank.path) // best if best else 0
        relevance = share * FOCUS_RELEVANCE // 1000
        cap = focus_cap(ctx.budget)
        key = (
            rank.path,
            tuple(focus.items()),
            tuple(sorted(frame_of.items())),
            relevance,
            cap,
            ctx.recency.get(rank.path, 0),
            ctx.tokenizer.name,
        )
        # like the spans', the excerpt depends only on these and the file's lines
        made_before: dict[tuple[object, ...], list[Candidate]] = ctx.memo.setdefault(
            "shared", {}
        ).setdefault("retrieved.focus", {})
        made = made_before.get(key)
        if made is None:
            fitted = focus_excerpt(ctx.tokenizer, rows, focus, cap, frame_of=frame_of)
            made = []
            if fitted:
                made.append(
                    _excerpt_candidate(
                        ctx, rank.path, fitted, discriminator="focus", relevance=relevance
                    )
                )
            if len(made_before) < _SPAN_MEMO:
                made_before[key] = made
        return made

    @staticmethod
    def _file_spans(
        ctx: SourceContext, rank: FileRank, best: int, limit: int = _SPANS_PER_FILE
    ) -> list[tuple[int, str, Span]]:
        """``(relevance, path, span)`` for the file's best spans."""
        rows = ctx.lines(rank.path)
        if not rows or ctx.store is None:
            return []
        spans = rank_spans(
            ctx.store,
            request_for(ctx),
            rank,
            quoted_chunks=rank_files(ctx).quoted_chunks,
            shared=ctx.memo.setdefault("shared", {}),
            limit=limit,
        )
        share = rank.score * history_permille(ctx.trigger.task, rank.path) // best if best else 0
        floor = span_floor(ctx.budget, request_for(ctx).mode)
        return [(span_relevance(share, span.score, floor), rank.path, span) for span in spans]

    @staticmethod
    def _span(
        ctx: SourceContext,
        rows: list[str],
        span: Span,
        *,
        relevance: int,
        cap: int,
    ) -> list[tuple[int, Candidate]]:
        """The span's candidates, each with the divisor of ``relevance`` it was given
        (1 for the code, 2 for split-off prose)."""
        path = span.path
        lines = numbered(rows, span.own, span.frame)
        prose = prose_lines(lines) - set(span.frame)
        parts: list[tuple[str, Excerpt, int]] = []
        body_count = len(lines) - len(span.frame)
        if len(prose) >= _PROSE_MIN and len(prose) * _PROSE_SHARE >= body_count:
            first = lines[len(span.frame)][0] if body_count > 0 else 0
            keep = {*span.frame, first}
            code = tuple(x for x in lines if x[0] not in prose or x[0] in keep)
            told = tuple(x for x in lines if x[0] in prose or x[0] in keep)
            parts = [("", code, 1), ("prose", told, 2)]
        else:
            parts = [("", lines, 1)]
        out: list[tuple[int, Candidate]] = []
        for tag, excerpt, divisor in parts:
            # most spans fit whole (``fit_excerpt``'s first trial): rendered once, for
            # the count and the candidate
            text = render_excerpt(excerpt)
            content: str | None = text
            fitted = excerpt
            if not _fits(ctx.tokenizer, text, cap):
                fitted = fit_excerpt(ctx.tokenizer, excerpt, cap, keep=span.frame)
                content = None
            if not fitted:
                continue
            made = _excerpt_candidate(
                ctx,
                path,
                fitted,
                discriminator=f"{span.start}-{span.end}{tag}",
                relevance=relevance // divisor,
                content=content,
            )
            out.append((divisor, made))
        return out

    def _tests(
        self,
        ctx: SourceContext,
        tests: tuple[FileRank, ...],
        top: tuple[FileRank, ...],
        cap: int,
    ) -> list[Candidate]:
        targets: dict[str, int] = dict.fromkeys(ctx.changed_paths, 1000)
        for rank in top:
            targets.setdefault(rank.path, rank.score)
        if not targets:
            return []
        by_stem: dict[str, list[str]] = defaultdict(list)
        for path in targets:
            by_stem[_stem(path)].append(path)
        shared = ctx.memo.setdefault("shared", {})
        # the workspace's test files, and by the stem they test (per index generation)
        known: tuple[dict[str, list[str]], frozenset[str]] | None = shared.get("retrieved.tests")
        if known is None:
            stems: dict[str, list[str]] = defaultdict(list)
            for p in ctx.files:
                if is_test_path(p):
                    stems[_test_stems(p)].append(p)
            known = (dict(stems), frozenset(p for paths in stems.values() for p in paths))
            shared["retrieved.tests"] = known
        test_files, listed = known
        imports: dict[str, set[str]] = defaultdict(set)
        # only the edges into the targets: the index answers them from its resolved column
        for src, dst in ctx.store.imports_into(targets) if ctx.store is not None else ():
            if is_test_path(src):
                imports[src].add(dst)
        ranked = {t.path: t for t in tests}
        fits: dict[tuple[object, ...], Excerpt] = shared.setdefault("retrieved.test_fits", {})
        related: dict[str, int] = {}
        # the test files linked to a target: by an import edge, or by naming its stem
        linked: dict[str, set[str]] = {}
        for stem, paths in by_stem.items():
            for path in test_files.get(stem, ()):
                linked.setdefault(path, set()).update(paths)
        for path, dsts in imports.items():
            if path in listed:
                linked.setdefault(path, set()).update(dsts)
        for path, dsts in linked.items():
            if not ctx.sensitive(path):
                related[path] = max(targets[p] for p in dsts)
        out: list[Candidate] = []
        for path in sorted(related, key=lambda p: (-related[p], p))[:5]:
            rows = ctx.lines(path)
            if not rows or not any(r.strip() for r in rows):
                continue
            found = ranked.get(path)
            hit = found.hits[0] if found and found.hits else None
            # no matching chunk: the start of the file (a bounded slice, then cut to cap)
            a, b = (hit.start_line, hit.end_line) if hit else (1, min(len(rows), cap * 2))
            # the fitted lines depend only on these and the file's lines (fixed for the
            # index generation, as for the spans above): a resident server fits each once
            key = (path, a, b, cap, ctx.tokenizer.name)
            fitted = fits.get(key)
            if fitted is None:
                fitted = fit_excerpt(ctx.tokenizer, _range_lines(rows, a, b), cap)
                if len(fits) < _SPAN_MEMO:
                    fits[key] = fitted
            if not fitted:
                continue
            out.append(
                _excerpt_candidate(
                    ctx,
                    path,
                    fitted,
                    kind="test_context",
                    relevance=200 + related[path] // 5,
                    specificity=500,
                )
            )
        return out
