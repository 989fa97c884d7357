"""Identifier splitting for full-text search.

``parseHTTPResponse_v2`` is indexed whole (FTS keeps ``_`` inside tokens) and as
its parts ``parse http response v2`` in a separate column, so a search for
either form finds it. Queries are split the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "identifier_parts",
    "identifiers",
    "name_parts",
    "name_parts_remembered",
    "name_parts_uncached",
    "parts_text",
    "query_terms",
]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# an upper run followed by Capital+lower (HTTPResponse -> HTTP Response), Capitalised
# words, lower runs, digit runs
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifier_parts(ident: str) -> list[str]:
    """Lower-cased camelCase / snake_case parts of ``ident`` (empty when it has one part)."""
    return list(_parts(ident))


@lru_cache(maxsize=131_072)
def _parts(ident: str) -> tuple[str, ...]:
    # no part holds or looks past a character outside [A-Za-z0-9], so one scan of the
    # whole identifier finds what a scan of each ``_``-separated piece finds
    parts = _PART.findall(ident)
    if len(parts) <= 1:
        return ()
    return tuple(" ".join(parts).lower().split(" "))  # parts are ASCII: one lower()


@lru_cache(maxsize=65_536)
def name_parts(name: str) -> frozenset[str]:
    """What a symbol name matches a task word by: each dotted piece lower-cased, and its parts.

    ``json.JSONDecoder`` -> ``{json, jsondecoder, decoder}``. The index stores these
    per symbol (``symbol_parts``) and ranking compares task words against them.
    """
    return name_parts_uncached(name)


def name_parts_uncached(name: str) -> frozenset[str]:
    """``name_parts`` computed afresh, touching no cache.

    What the index writer uses: it sees every symbol name of the repository once,
    and filling the query-time caches with them held ~35 MiB in the indexing
    process (the largest part of its growth during a cold index) for few hits.
    """
    out: set[str] = set()
    split = _parts.__wrapped__
    for piece in name.split("."):
        if piece:
            out.add(piece.lower())
            out.update(split(piece))
    return frozenset(out)


def name_parts_remembered(name: str) -> frozenset[str]:
    """``name_parts_uncached(name)``, each dotted piece's split read from (and kept in)
    the memos of :func:`parts_text`. What a parse worker uses for its symbols' names
    right after it chunked their file: the memos then hold most of its identifiers."""
    out: set[str] = set()
    for piece in name.split("."):
        if not piece:
            continue
        out.add(piece.lower())
        if piece in _PLAIN_MEMO:
            continue
        parts = _PARTS_MEMO.get(piece)
        if parts is None:
            parts = _parts.__wrapped__(piece)
            _remember(piece, parts)
        out.update(parts)
    return frozenset(out)


def identifiers(text: str) -> list[str]:
    """Identifiers in ``text``, in order of first appearance, without repeats."""
    return list(dict.fromkeys(_IDENT.findall(text)))


#: ``ident -> parts`` of compound identifiers, and the set of identifiers that have no
#: parts (one word: ``self``, ``return``, ``x``), for ``parts_text``. Plain containers,
#: not ``lru_cache``: it is called for every identifier of every chunk, where a cache
#: wrapper's bookkeeping costs more than the split. Most identifiers of a chunk are
#: plain, and a set difference (in C) drops the known ones before the Python loop.
#: Each is emptied when it reaches ``_MEMO_MAX`` entries (a worker's recent files
#: share their identifiers; what an old file left behind rarely helps).
_PARTS_MEMO: dict[str, tuple[str, ...]] = {}
_PLAIN_MEMO: set[str] = set()
_MEMO_MAX = 16_384


def parts_text(*texts: str) -> str:
    """The FTS ``parts`` column: the parts of every compound identifier, sorted, unique."""
    # no identifier spans a newline, so one scan of the joined texts finds the same set
    found = set(_IDENT.findall(texts[0] if len(texts) == 1 else "\n".join(texts)))
    plain = _PLAIN_MEMO
    memo = _PARTS_MEMO
    seen: set[str] = set()
    for ident in found - plain:
        parts = memo.get(ident)
        if parts is None:
            parts = _parts.__wrapped__(ident)
            _remember(ident, parts)
        if parts:
            seen.update(parts)
    return " ".join(sorted(seen))


def _remember(ident: str, parts: tuple[str, ...]) -> None:
    if not _MEMO_MAX:
        return
    if parts:
        if len(_PARTS_MEMO) >= _MEMO_MAX:
            _PARTS_MEMO.clear()
        _PARTS_MEMO[ident] = parts
    else:
        if len(_PLAIN_MEMO) >= _MEMO_MAX:
            _PLAIN_MEMO.clear()
        _PLAIN_MEMO.add(ident)


def query_terms(query: str) -> list[str]:
    """FTS terms for a free-text query: each word whole and its parts, lower-cased, unique."""
    terms: list[str] = []
    for word in _WORD.findall(query):
        terms.append(word.lower())
        terms.extend(identifier_parts(word))
    return sorted(set(terms))
