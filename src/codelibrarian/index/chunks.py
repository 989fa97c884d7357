"""Symbol-aligned chunks with exact token counts.

A file becomes:

* one chunk per top-level function (or other non-container definition spanning
  several lines);
* for each class-like definition with members: a header chunk (the class's lines
  up to its first member, then every member's signature) and one chunk per member;
* ``module`` chunks for the remaining top-level lines (imports, constants,
  script code), one per contiguous run.

Any chunk over ``max_tokens`` is cut at line boundaries into pieces that each fit
(counted exactly). Files without a grammar, or that failed to parse, are cut the
same way into ``text`` chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..tokens import BpeTokenizer, Tokenizer
from ..workspace.files import content_hash
from .records import ChunkData, Symbol
from .tokenize import parts_text

__all__ = ["build_chunks"]

_CONTAINERS = frozenset({"class", "interface", "struct", "trait", "enum", "object", "module"})


def build_chunks(
    path: str,
    text: str,
    symbols: Sequence[Symbol],
    tokenizer: Tokenizer,
    max_tokens: int,
    *,
    plain_kind: str = "text",
) -> tuple[ChunkData, ...]:
    """Chunks of one file; with no ``symbols``, line-cut chunks of kind ``plain_kind``."""
    lines = text.splitlines(keepends=True)
    n = len(lines)
    if n == 0:
        return ()
    ordered = sorted(
        (s for s in symbols if s.start_line <= n),
        key=lambda s: (s.start_line, -s.end_line, s.name, s.kind),
    )
    ctx = _Chunker(lines, ordered, path, tokenizer, max_tokens)
    if not ordered:
        ctx.piece(1, n, symbol=None, kind=plain_kind, names="")
        return tuple(ctx.out)
    covered = [False] * (n + 1)
    for s in _children(None, ordered):
        start, end = s.start_line, min(s.end_line, n)
        if start == end and s.kind not in _CONTAINERS:
            continue  # one-liners (constants, prototypes) stay in the module chunk
        while start > 1 and not covered[start - 1] and _is_lead(lines[start - 2]):
            start -= 1  # the doc comment / decorators just above belong to the definition
        for k in range(start, end + 1):
            covered[k] = True
        ctx.emit(s, start, None)
    run_start = 0
    for k in range(1, n + 2):
        inside = k <= n and not covered[k]
        if inside and run_start == 0:
            run_start = k
        elif not inside and run_start:
            ctx.piece(run_start, k - 1, symbol=None, kind="module", names="")
            run_start = 0
    ctx.out.sort(key=lambda c: (c.start_line, c.end_line, c.symbol or "", c.kind))
    return tuple(ctx.out)


def _children(parent: Symbol | None, pool: Sequence[Symbol]) -> list[Symbol]:
    """Direct children of ``parent`` among ``pool`` (sorted by position), by containment."""
    inside = [
        m
        for m in pool
        if m is not parent
        and (
            parent is None or (parent.start_line <= m.start_line and m.end_line <= parent.end_line)
        )
    ]
    direct: list[Symbol] = []
    for m in inside:  # pool is sorted by (start, -end): an outer symbol comes first
        if direct and direct[-1].start_line <= m.start_line and m.end_line <= direct[-1].end_line:
            continue
        direct.append(m)
    return direct


class _Chunker:
    """Cuts one file's lines into chunks; collects them in ``out``."""

    def __init__(
        self,
        lines: Sequence[str],
        ordered: Sequence[Symbol],
        path: str,
        tokenizer: Tokenizer,
        max_tokens: int,
    ) -> None:
        self.lines = lines
        self.ordered = ordered
        self.path = path
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.within = _bounded_counter(tokenizer)
        self.out: list[ChunkData] = []

    def emit(self, s: Symbol, start: int, owner: str | None) -> None:
        """Chunks for ``s`` (from ``start``, which may include its doc comment)."""
        lines = self.lines
        end = min(s.end_line, len(lines))
        qual = f"{owner}.{s.name}" if owner else s.name
        names = f"{s.name} {owner}" if owner else s.name
        members = _children(s, self.ordered) if s.kind in _CONTAINERS else []
        if not members:
            self.piece(start, end, symbol=qual, kind=s.kind, names=names)
            return
        first_member = members[0].start_line
        head = "".join(lines[start - 1 : first_member - 1])
        indent = _indent_of(lines[first_member - 1])
        sigs = "".join(f"{indent}{m.signature}\n" for m in members)
        header_names = " ".join([names, *sorted({m.name for m in members})])
        self.piece(start, end, symbol=qual, kind=s.kind, names=header_names, text=head + sigs)
        for m in members:
            if m.start_line == m.end_line and m.kind not in {"method", "function"}:
                continue  # one-line fields and constants are in the header already
            m_start = m.start_line
            while m_start > first_member and _is_lead(lines[m_start - 2]):
                m_start -= 1
            self.emit(m, m_start, qual)

    def piece(
        self,
        start: int,
        end: int,
        *,
        symbol: str | None,
        kind: str,
        names: str,
        text: str | None = None,
    ) -> None:
        """Chunks for lines ``start..end`` (1-based, inclusive), split if over budget.

        ``text`` replaces the lines' own text (a class header with member signatures);
        its chunks still report the whole ``start..end`` span.
        """
        body = text if text is not None else "".join(self.lines[start - 1 : end])
        if not body.strip():
            return
        tokens = self.within(body, self.max_tokens)
        if tokens is not None:
            self.out.append(
                self._make(
                    start, end, symbol=symbol, kind=kind, body=body, tokens=tokens, names=names
                )
            )
            return
        sub = text.splitlines(keepends=True) if text is not None else self.lines
        lo, hi = (1, len(sub)) if text is not None else (start, end)
        synthesised = text is not None
        for first, last, part, count in self._split(sub, lo, hi):
            self.out.append(
                self._make(
                    start if synthesised else first,
                    end if synthesised else last,
                    symbol=symbol,
                    kind=kind,
                    body=part,
                    tokens=count,
                    names=names,
                )
            )

    def _split(self, lines: Sequence[str], start: int, end: int) -> list[tuple[int, int, str, int]]:
        """Line windows under the cap, each the longest that fits (exact counts).

        A window is searched between its first line and the line where it passes
        ``6 x max_tokens`` characters (no token is shorter than a character and code
        averages 3-4 per token), by binary search over exact counts.
        """
        out: list[tuple[int, int, str, int]] = []
        count = self.tokenizer.count
        within = self.within
        limit = self.max_tokens
        i = start
        while i <= end:
            hi, chars = i, 0
            while hi <= end and chars <= limit * 6:
                chars += len(lines[hi - 1])
                hi += 1
            hi -= 1
            body = "".join(lines[i - 1 : hi])
            tokens = within(body, limit)
            stop = hi
            if tokens is None and hi > i:
                lo_s, hi_s, stop = i + 1, hi - 1, i
                while lo_s <= hi_s:
                    mid = (lo_s + hi_s) // 2
                    got = within("".join(lines[i - 1 : mid]), limit)
                    if got is not None:
                        stop, lo_s, tokens = mid, mid + 1, got
                    else:
                        hi_s = mid - 1
                body = "".join(lines[i - 1 : stop])
                if stop == i:
                    tokens = within(body, limit)
            if tokens is None:  # one line over the cap (minified code, long text)
                out.extend((i, i, part, count(part)) for part in self._cut_line(body))
            elif body.strip():
                out.append((i, stop, body, tokens))
            i = stop + 1
        return out

    def _cut_line(self, text: str) -> list[str]:
        """Pieces of one long line, each within the cap, cut at whitespace where there is some.

        Each piece is guessed from the characters per token seen so far, checked with
        a bounded count (which stops at the cap) and shortened by a fifth until it
        fits: a few counts of about the cap per piece, so a one-line 900 KB file
        costs a fraction of a second instead of minutes. Pieces are within the cap,
        not always the longest that would fit.
        """
        parts: list[str] = []
        limit = self.max_tokens
        ratio = 4.0  # characters per token; adapts to the text
        pos, n = 0, len(text)
        while pos < n:
            size = max(1, int(limit * ratio))
            while True:
                piece = _at_space(text, pos, min(n, pos + size))
                got = self.within(piece, limit)
                if got is not None:
                    break
                size = max(1, len(piece) * 4 // 5)
            ratio = min(16.0, max(1.0, len(piece) / max(1, got)))
            if piece.strip():
                parts.append(piece)
            pos += len(piece)
        return parts

    def _make(
        self,
        start: int,
        end: int,
        *,
        symbol: str | None,
        kind: str,
        body: str,
        tokens: int,
        names: str,
    ) -> ChunkData:
        return ChunkData(
            start_line=start,
            end_line=end,
            symbol=symbol,
            kind=kind,
            text=body,
            tokens=tokens,
            content_hash=content_hash(body.encode("utf-8", "surrogatepass")),
            symbols=names,
            parts=parts_text(names, body),  # the path's parts join at decode_result
        )


def _bounded_counter(tokenizer: Tokenizer) -> Callable[[str, int], int | None]:
    """``f(text, limit)``: the exact count of ``text`` if it is at most ``limit``, else None.

    For bpe-openai encodings the Rust backend stops counting once past the limit,
    so testing a long text against the cap costs about the cap, not the text
    (chunks over the cap and the window search below are most of the counting).
    """
    if isinstance(tokenizer, BpeTokenizer):
        return tokenizer.count_till_limit

    def counted(text: str, limit: int) -> int | None:
        n = tokenizer.count(text)
        return n if n <= limit else None

    return counted


def _at_space(text: str, start: int, end: int) -> str:
    """``text[start:end]``, ended after its last whitespace in the final quarter if any."""
    if end >= len(text):
        return text[start:]
    cut = max(text.rfind(" ", start, end), text.rfind("\t", start, end))
    if cut >= start + (end - start) * 3 // 4:
        end = cut + 1
    return text[start:end]


_LEADS = ("#", "//", "/*", "*", "@", "--")


def _is_lead(line: str) -> bool:
    s = line.strip()
    return bool(s) and s.startswith(_LEADS)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]
