"""Building excerpt candidates: numbered, verbatim lines of a file under a token cap.

Helpers the lanes share so every excerpt is made the same way:

- :func:`numbered` — the lines of some ranges (plus frame lines), numbered;
- :func:`prose_lines` — which lines of a definition are prose (a docstring, a
  comment block), so "bodies beat prose" when room is short;
- :func:`fit_excerpt` — the longest excerpt within a cap: frame lines first,
  prose dropped before code, then the tail cut;
- :func:`word_lines` (:func:`word_lines_of` for a few words), :func:`focus_from_index`,
  :func:`focus_excerpt` — focus windows: which lines of a file name the words a
  change or task names, scored, and windows of ``WINDOW`` lines around the best of
  them, each with the signature of the definition it sits in, under a cap.

**Focus windows.** A file a change ripples into is often edited in several places,
each deep inside a function; whole definitions show one or two of them before the
budget runs out. A focus excerpt shows the lines most likely to change and their
frames, the gaps rendered as the elision marker. Scores are integers and the
order is total (score, then line number), so the same inputs give the same lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from operator import add

from ..composer.excerpt import prefix_ends, render_excerpt
from ..index.tokenize import identifier_parts, name_parts
from ..tokens import Tokenizer, prefix_fits

__all__ = [
    "WINDOW",
    "Excerpt",
    "fit_excerpt",
    "focus_excerpt",
    "focus_from_index",
    "numbered",
    "prose_lines",
    "word_lines",
    "word_lines_of",
]

#: lines shown either side of a focus line when an excerpt is cut to windows
WINDOW = 3
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: a run of the characters an identifier is made of, and a word made only of them
_RUN = re.compile(r"[A-Za-z0-9_]*")
_PIECE = re.compile(r"[a-z0-9_]+")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_DIGITS = frozenset("0123456789")

Excerpt = tuple[tuple[int, str], ...]

_COMMENT = ("#", "//", "/*", "*", "*/", "--", '"""', "'''", "///", "//!")
_QUOTES = ('"""', "'''")


def numbered(
    rows: Sequence[str], ranges: Iterable[tuple[int, int]], frame: Iterable[int] = ()
) -> Excerpt:
    """Lines ``a..b`` of every range and the frame lines, numbered, in line order."""
    picked: dict[int, str] = {}
    n = len(rows)
    for number in frame:
        if 1 <= number <= n:
            picked[number] = rows[number - 1]
    for a, b in ranges:
        for number in range(max(1, a), min(n, b) + 1):
            picked[number] = rows[number - 1]
    return tuple(sorted(picked.items()))


def prose_lines(lines: Excerpt) -> frozenset[int]:
    """Line numbers of docstrings and comment blocks within an excerpt."""
    out: set[int] = set()
    inside: str | None = None
    for number, text in lines:
        stripped = text.strip()
        if inside is not None:
            out.add(number)
            if inside in stripped:
                inside = None
            continue
        if stripped.startswith(_QUOTES):  # one test, then which of the two (no generator)
            opener = _QUOTES[0] if stripped.startswith(_QUOTES[0]) else _QUOTES[1]
            out.add(number)
            rest = stripped[len(opener) :]
            if opener not in rest:
                inside = opener
            continue
        if stripped.startswith(_COMMENT):
            out.add(number)
    return frozenset(out)


def _fits(tokenizer: Tokenizer, text: str, cap: int) -> bool:
    """Whether ``text`` counts at most ``cap`` tokens; an exact BPE tokenizer stops
    counting once past the cap (the trials of a cut are mostly far over it)."""
    till = getattr(tokenizer, "count_till_limit", None)
    if till is not None:
        return till(text, cap) is not None
    return tokenizer.count(text) <= cap


def fit_excerpt(
    tokenizer: Tokenizer,
    lines: Excerpt,
    cap: int,
    *,
    keep: Iterable[int] = (),
) -> Excerpt:
    """The longest form of ``lines`` whose rendering fits ``cap`` tokens.

    Lines in ``keep`` (the frame) are kept first; then prose lines are dropped
    (last first), then the excerpt is cut from the end. Empty when even the
    frame does not fit.
    """
    if _fits(tokenizer, render_excerpt(lines), cap):
        return lines
    kept = frozenset(keep)
    prose = prose_lines(lines)
    code = tuple(x for x in lines if x[0] not in prose or x[0] in kept)
    whole = render_excerpt(code)
    if _fits(tokenizer, whole, cap):
        # put back as much prose as fits, in line order
        extra = [x for x in lines if x[0] in prose and x[0] not in kept]
        lo, hi = 0, len(extra)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            trial = tuple(sorted((*code, *extra[:mid])))
            if _fits(tokenizer, render_excerpt(trial), cap):
                lo = mid
            else:
                hi = mid - 1
        return tuple(sorted((*code, *extra[:lo])))
    lo, hi = 0, len(code)
    # a trial of ``mid`` lines at least past the last kept one is ``code[:mid]``, whose
    # rendering is a prefix of the whole code's (``prefix_ends``), counted from the
    # counts of its lines (``prefix_fits``: the same answers)
    ends = prefix_ends(code)
    prefix_fit = prefix_fits(tokenizer, whole, cap)
    past_kept = max((i + 1 for i, x in enumerate(code) if x[0] in kept), default=0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid >= past_kept:
            fits = prefix_fit(ends[mid])
        else:
            trial = tuple(x for i, x in enumerate(code) if i < mid or x[0] in kept)
            fits = _fits(tokenizer, render_excerpt(trial), cap)
        if fits:
            lo = mid
        else:
            hi = mid - 1
    out = tuple(x for i, x in enumerate(code) if i < lo or x[0] in kept)
    return out if any(x[0] not in kept for x in out) else ()


def word_lines(rows: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """Which lines (1-based) name each word: identifiers lower-cased, whole and in parts.

    A task's focus is then a few look-ups (:func:`focus_from_index`); for the few
    words of one task, :func:`word_lines_of` finds the same lines without the table.
    """
    found: dict[str, list[int]] = {}
    for number, text in enumerate(rows, 1):
        for word in _line_words(text):
            found.setdefault(word, []).append(number)
    return {w: tuple(v) for w, v in found.items()}


def _line_words(text: str) -> set[str]:
    """The words one line names (as :func:`word_lines` reads it)."""
    words: set[str] = set()
    for ident in _WORD.findall(text):
        words.update(name_parts(ident))
    return words


def _starts(rows: Sequence[str]) -> list[int]:
    """Offsets in ``"\\n".join(rows)`` where each row starts, and one past the end
    (the row lengths summed, plus one newline per row before it; no Python loop)."""
    return list(map(add, accumulate(map(len, rows), initial=0), range(len(rows) + 1)))


def word_lines_of(rows: Sequence[str], wanted: Iterable[str]) -> dict[str, tuple[int, ...]]:
    """:func:`word_lines` of ``rows`` kept to the ``wanted`` words (lower-cased), without
    reading every line's identifiers.

    Every word a line names is an identifier lower-cased, or a piece of one, so it is a
    substring of the line lower-cased. In an ASCII file each place a wanted word occurs
    (found by a search over the whole text, in C) lies in at most one identifier, the
    run of word characters around it less its leading digits; only that identifier is
    split, and the word counts for its line when it is one of the identifier's words.
    A task's focus needs a few words of a file: this costs a few searches and a split
    of the identifiers that hold them, not a split of every identifier on their lines
    (a common word such as ``path`` is on thousands of lines of a large file).
    """
    want = frozenset(w.lower() for w in wanted)
    if not want or not rows:
        return {}
    text = "\n".join(rows)
    if not text.isascii():
        return _word_lines_by_line(rows, want)
    # lower-casing ASCII keeps every offset: line starts from the rows' lengths
    low = text.lower()
    starts = _starts(rows)
    found: dict[str, tuple[int, ...]] = {}
    for word in want:
        # a word holding a character no identifier holds is nobody's word
        if not _PIECE.fullmatch(word):
            continue
        lines: list[int] = []
        at = low.find(word)
        while at != -1:
            begin = at
            while begin and low[begin - 1] in _WORD_CHARS:
                begin -= 1
            run = _RUN.match(low, at)  # the word's own characters at least
            end = run.end() if run is not None else at + len(word)
            head = begin
            while head < at and low[head] in _DIGITS:
                head += 1
            if head < at or low[head] not in _DIGITS:
                # the occurrence is inside the identifier text[head:end] (a leading
                # digit at ``at`` itself means the identifier starts further on)
                # its words: itself lower-cased and its parts (``name_parts`` of a name
                # without dots), read from the split's cache of plain tuples
                if word == low[head:end] or word in identifier_parts(text[head:end]):
                    number = bisect_right(starts, at)  # 1-based: starts[number - 1] <= at
                    lines.append(number)
                    at = low.find(word, starts[number])  # on to the next line
                    continue
                at = low.find(word, end)  # the same identifier, the same answer
            else:
                at = low.find(word, at + 1)
        if lines:
            found[word] = tuple(lines)
    return found


def _word_lines_by_line(rows: Sequence[str], want: frozenset[str]) -> dict[str, tuple[int, ...]]:
    """:func:`word_lines_of` for a text with non-ASCII characters (lower-casing may change
    its length): the lines holding a wanted word as a substring are read whole."""
    lows = [r.lower() for r in rows]  # a few characters lower to two
    low = "\n".join(lows)
    starts = _starts(lows)
    seen: set[int] = set()
    for word in want:
        if not word:
            continue
        at = low.find(word)
        while at != -1:
            number = bisect_right(starts, at)  # 1-based: starts[number - 1] <= at
            seen.add(number)
            at = low.find(word, starts[number])  # on to the next line
    found: dict[str, list[int]] = {}
    for number in sorted(seen):
        for word in _line_words(rows[number - 1]) & want:
            found.setdefault(word, []).append(number)
    return {w: tuple(v) for w, v in found.items()}


def focus_from_index(
    index: Mapping[str, Sequence[int]],
    strong: Iterable[str],
    weak: Iterable[str] = (),
) -> dict[int, int]:
    """Focus scores of a file's lines, from its :func:`word_lines`: 2 points per distinct
    ``strong`` word a line names, 1 per ``weak`` one. Lines naming none are left out."""
    out: dict[int, int] = {}
    strong_set = frozenset(w.lower() for w in strong)
    for word in sorted(strong_set):
        for number in index.get(word, ()):
            out[number] = out.get(number, 0) + 2
    for word in sorted(frozenset(w.lower() for w in weak) - strong_set):
        for number in index.get(word, ()):
            out[number] = out.get(number, 0) + 1
    return out


def focus_excerpt(
    tokenizer: Tokenizer,
    rows: Sequence[str],
    focus: Mapping[int, int],
    cap: int,
    *,
    frame_of: Mapping[int, tuple[int, ...]] | None = None,
    least: int = 1,
) -> Excerpt:
    """Windows of ``WINDOW`` lines around a file's best focus lines, within ``cap`` tokens.

    Focus lines scoring at least ``least`` are taken best first (score, then line
    number); each brings its window and its frame (``frame_of[line]``: the
    signature lines of the definition enclosing it). Empty when not even one
    window fits.
    """
    n = len(rows)
    best = sorted(
        (k for k, v in focus.items() if v >= least and 1 <= k <= n), key=lambda k: (-focus[k], k)
    )
    frames = frame_of or {}
    windows: list[tuple[int, ...]] = []
    for k in best:
        span = range(max(1, k - WINDOW), min(n, k + WINDOW) + 1)
        windows.append((*frames.get(k, ()), *span))

    def build(count: int) -> Excerpt:
        chosen: set[int] = set()
        for w in windows[:count]:
            chosen.update(w)
        return tuple((number, rows[number - 1]) for number in sorted(chosen))

    def fits(count: int) -> bool:
        return count == 0 or _fits(tokenizer, render_excerpt(build(count)), cap)

    # the most windows that fit: start from an estimate (about four characters a
    # token), then step to the exact answer, usually in one or two counts
    k = 0
    size = 0
    chosen: set[int] = set()
    for w in windows:
        size += sum(len(rows[n - 1]) + 5 for n in sorted(set(w) - chosen)) // 4
        if size > cap:
            break
        chosen.update(w)
        k += 1
    if fits(k):
        while k < len(windows) and fits(k + 1):
            k += 1
    else:
        while not fits(k - 1):
            k -= 1
        k -= 1
    return build(k)
