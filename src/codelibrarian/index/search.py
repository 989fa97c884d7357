"""BM25 search over the chunks, with the memos that make a warm process fast.

:class:`Bm25Search` is the search engine every backend's ``Storage.search`` and
``Storage.common_terms`` are: it holds no SQL and reads the full-text index through
the backend's :class:`~.storage.TextIndex` primitives (the scoring contract is
written there). What it adds, per index generation:

* **common terms**: a term found in more than :data:`COMMON_SHARE` of the chunks
  and more than :data:`COMMON_ROWS` of them is left out of a query (unless every
  term is): its idf is below ln 3, and scoring it costs a row for each chunk it is
  in (a one-letter identifier part can be in half of a large repository's chunks).
  Each term's row count is counted once (:meth:`Bm25Search.common_terms`).
* **term memos**: a query's score is the sum of its terms' addends in query order,
  so a term's scores, once read, serve every later query of the generation that
  names it. A query is summed from them (:func:`best_rows`) when that pays, else the
  backend scores it whole (:meth:`TextIndex.best_chunks`); both give the same
  floats to the last bit, so the same hits.

Scores are ``round(score x 1000)`` integers, higher is better; ties are broken by
path, then line, then chunk id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .records import ChunkHit
from .tokenize import query_terms

if TYPE_CHECKING:
    from .storage import TermScores, TextIndex

__all__ = ["BM25_WEIGHTS", "COMMON_ROWS", "COMMON_SHARE", "Bm25Search", "best_rows"]

#: BM25 column weights: path, symbols, body, parts (path and symbol names count more)
BM25_WEIGHTS = (4.0, 6.0, 1.0, 1.0)
#: a search leaves out a term found in more than this share of the chunks (numerator,
#: denominator) and in more than :data:`COMMON_ROWS` of them: FTS5's idf of such a
#: term, ln((N - n + 0.5) / (n + 0.5)), is below ln 3 = 1.1 (0.24 at 44%), while
#: scoring it costs a row for each chunk it is in (about 2.5 us a row)
COMMON_SHARE = (1, 4)
#: below this many rows a term is always scored: in a repository of a few thousand
#: chunks a common term (the project's own name) still ranks, and costs little
COMMON_ROWS = 20_000
#: document frequencies an engine remembers (per index generation) before starting again
_DF_MEMO_MAX = 50_000
#: most (chunk, score) pairs an engine remembers for the terms it read (16 bytes each)
_TERM_MEMO_ROWS = 2_000_000
#: reading a term's scores costs about this much more per row than scoring it inside
#: the whole query (numerator, denominator: 1.2-1.5 measured at 20,000 files, summing included)
_READ_COST = (3, 2)
#: most rows a query reads term by term when some of its terms are not remembered: a
#: heavier query goes to the backend whole, so reading never makes a slow call slower
_READ_ROWS = 25_000
#: chunk ids up to this many times the rows being summed are summed in a dense array
_DENSE_SPAN = 8


def best_rows(parts: Sequence[TermScores], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk id, score)`` by score descending, then id, where a chunk's
    score is its terms' scores added from 0.0 in the order of ``parts``: FTS5's order of
    addition, so the float is FTS5's to the last bit (a term a chunk lacks adds 0.0
    there, which changes no sum)."""
    import numpy as np

    parts = [(ids, s) for ids, s in parts if len(ids)]
    if not parts or k <= 0:
        return []
    size = sum(len(ids) for ids, _ in parts)
    top = max(int(ids[-1]) for ids, _ in parts)
    if top < _DENSE_SPAN * size + 1024:
        total = np.zeros(top + 1, dtype=np.float64)
        seen = np.zeros(top + 1, dtype=bool)
        for ids, s in parts:
            total[ids] += s  # ids are distinct within a term: one addition per chunk
            seen[ids] = True
        rows = np.flatnonzero(seen)
        scores = total[rows]
    else:
        rows, inverse = np.unique(np.concatenate([ids for ids, _ in parts]), return_inverse=True)
        scores = np.zeros(len(rows), dtype=np.float64)
        at = 0
        for ids, s in parts:
            scores[inverse[at : at + len(ids)]] += s
            at += len(ids)
    if len(rows) > k:
        kth = np.partition(-scores, k - 1)[k - 1]
        keep = -scores <= kth  # every row tied with the k-th too: ids decide below
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:k]
    return list(zip(rows[order].tolist(), scores[order].tolist(), strict=True))


def _hit_order(h: ChunkHit) -> tuple[int, str, int, int, int]:
    return (-h.score, h.path, h.start_line, h.end_line, h.chunk_id)


class Bm25Search:
    """The search engine over one backend's :class:`~.storage.TextIndex` (one per store:
    its memos are of that store's index)."""

    def __init__(self, text: TextIndex) -> None:
        self.text = text
        # document frequency of each term searched, and the chunk count, for one generation
        self._df: dict[str, int] = {}
        self._df_gen: int | None = None
        self._df_total = 0
        #: each term read this generation: its chunk ids (ascending) and scores
        self._term_memo: dict[str, TermScores] = {}
        self._term_memo_rows = 0
        #: the terms searched this generation (a term searched again is worth reading)
        self._searched: set[str] = set()

    def search(self, query: str, limit: int = 20) -> list[ChunkHit]:
        """BM25 over chunks; integer scores (x1000, higher is better), ties by path then line.

        Terms found in more than :data:`COMMON_SHARE` of the chunks, and in more than
        :data:`COMMON_ROWS`, are left out (:meth:`common_terms`) unless every term is.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        common = set(self._common(terms))
        if len(common) < len(terms):
            terms = [t for t in terms if t not in common]
        if self._read_terms(terms):
            best = self._best_by_term(terms, limit * 4 + 50)
            if best is not None:
                return self._hits(best, limit)
        return self.search_whole(terms, limit)

    def search_whole(self, terms: Sequence[str], limit: int) -> list[ChunkHit]:
        """:meth:`search` of ``terms`` scored whole by the backend (what summing equals).

        Over-fetched, then ordered by the integer score with total tie-breaks."""
        rows = self.text.best_chunks(terms, limit * 4 + 50)
        hits = [
            ChunkHit(r[0], r[1], r[2], r[3], r[4], r[5], round(r[6] * 1000), r[7]) for r in rows
        ]
        hits.sort(key=_hit_order)
        return hits[:limit]

    def common_terms(self, query: str) -> list[str]:
        """The terms of ``query`` that :meth:`search` leaves out, sorted: each found in
        more than :data:`COMMON_SHARE` of the chunks and more than :data:`COMMON_ROWS`
        (by the backend's own count of the rows matching it), none when every term is."""
        terms = query_terms(query)
        common = self._common(terms)
        return common if len(common) < len(terms) else []

    def _read_terms(self, terms: Sequence[str]) -> bool:
        """Whether to sum the query from each term's own scores (:meth:`_best_by_term`)
        rather than have the backend score the whole query.

        Reading costs :data:`_READ_COST` times scoring a row inside the whole query, so
        a query is summed when the rows of its remembered terms, and of its terms
        searched before (likely to come again: read once, then remembered), pay for
        the extra cost of reading its terms never searched before, and when it reads
        at most :data:`_READ_ROWS` rows: the reads are paid by light calls, and a heavy
        call (a term in a fifth of the chunks, first seen) costs what it did. A
        one-call process sees every term once: its queries are scored whole. Only
        where :meth:`_common` counted the terms' rows (more chunks than
        :data:`COMMON_ROWS`; below that a whole query costs little).
        """
        df = self._df
        if self._df_total <= COMMON_ROWS or any(t not in df for t in terms):
            return False
        kept = again = fresh = 0
        for t in terms:
            if t in self._term_memo:
                kept += df[t]
            elif t in self._searched:
                again += df[t]
            else:
                fresh += df[t]
        if len(self._searched) > _DF_MEMO_MAX:
            self._searched.clear()
        self._searched.update(terms)
        num, den = _READ_COST
        return (
            kept + again > 0
            and again + fresh <= _READ_ROWS
            and fresh * num <= (kept + again + fresh) * den
        )

    def _best_by_term(self, terms: Sequence[str], k: int) -> list[tuple[int, float]] | None:
        """The ``k`` best ``(chunk id, score)`` of the query of ``terms``, best first
        (then by id), each score summed from the terms' own in query order: the
        backend's float to the last bit. None when a commit landed while the terms
        were read."""
        gen = self._df_gen
        parts = [self._term_scores(t) for t in terms]
        if self.text.generation() != gen:  # the terms straddle a commit: one query instead
            self._forget_scores()
            return None
        return best_rows(parts, k)

    def _term_scores(self, term: str) -> TermScores:
        """The chunks matching ``term`` (ascending ids) and the term's BM25 in each,
        remembered for the generation (least recently used out beyond
        :data:`_TERM_MEMO_ROWS` rows in all)."""
        got = self._term_memo.pop(term, None)
        if got is None:
            got = self.text.term_scores(term)
            self._term_memo_rows += len(got[0])
            while self._term_memo_rows > _TERM_MEMO_ROWS and self._term_memo:
                oldest = next(iter(self._term_memo))
                self._term_memo_rows -= len(self._term_memo.pop(oldest)[0])
        self._term_memo[term] = got  # most recently used last
        return got

    def _forget_scores(self) -> None:
        self._term_memo.clear()
        self._term_memo_rows = 0

    def _hits(self, best: Sequence[tuple[int, float]], limit: int) -> list[ChunkHit]:
        """The hits of the best ``(chunk id, score)`` rows as :meth:`search_whole` gives
        them: with their chunk's head, ordered by integer score and place."""
        heads = self.text.chunk_heads([i for i, _ in best])
        hits = [
            ChunkHit(i, *heads[i][:5], round(score * 1000), heads[i][5])
            for i, score in best
            if i in heads
        ]
        hits.sort(key=_hit_order)
        return hits[:limit]

    def _common(self, terms: Sequence[str]) -> list[str]:
        """Which of ``terms`` are in more than :data:`COMMON_SHARE` of the chunks and
        more than :data:`COMMON_ROWS` of them."""
        gen = self.text.generation()
        if gen != self._df_gen or len(self._df) > _DF_MEMO_MAX:
            self._df.clear()
            self._forget_scores()
            self._searched.clear()
            self._df_gen = gen
            self._df_total = self.text.chunk_count()
        if self._df_total <= COMMON_ROWS:
            return []  # no term is in more rows than there are: nothing to count
        num, den = COMMON_SHARE
        out = []
        for t in terms:
            df = self._df.get(t)
            if df is None:
                df = self._df[t] = self.text.term_count(t)
            if df > COMMON_ROWS and df * den > self._df_total * num:
                out.append(t)
        return out
