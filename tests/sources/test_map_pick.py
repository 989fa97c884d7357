"""The map's choice of definitions per file, from a table kept per index generation.

``_pick`` ranks only the definitions whose name shares a keyword and fills up in the
table's order; it must choose what sorting every definition by (keywords shared,
kind, line, name) chooses, ties as the index lists them. ``split_identifier`` finds
an identifier's parts in one pass; it must find what splitting at ``_ . / -`` first
and then at case changes finds.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.index.records import Symbol
from codelibrarian.sources.structure import _KIND_ORDER, _FileSymbols, _name_parts, _pick
from codelibrarian.trigger import _CAMEL, split_identifier

WORDS = ("json", "Decoder", "HTTP", "parse", "v2", "x", "URL", "load", "İ", "ß", "9")
SEPARATORS = ("", "_", ".", "/", "-", "__", "$", ":", " ")


def by_pieces(token: str) -> list[str]:
    """The splitting rule written the long way: pieces first, then parts of each."""
    parts: list[str] = []
    for piece in re.split(r"[_./-]+", token):
        parts.extend(m.group(0).lower() for m in _CAMEL.finditer(piece))
    return [p for p in parts if p]


names = st.lists(
    st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), min_size=1, max_size=4
).map(lambda xs: "".join(w + s for w, s in xs)) | st.text(max_size=24)


@settings(max_examples=400, deadline=None)
@given(names)
def test_one_pass_split_finds_the_pieces_parts(token: str) -> None:
    assert split_identifier(token) == by_pieces(token)


def reference(symbols: list[Symbol], keywords: frozenset[str], per_file: int) -> list[Symbol]:
    def key(s: Symbol) -> tuple[int, int, int, str]:
        shared = len(_name_parts(s.name) & keywords)
        return (-shared, _KIND_ORDER.get(s.kind, 2), s.start_line, s.name)

    top = sorted(symbols, key=key)[:per_file]
    return sorted(top, key=lambda s: (s.start_line, s.name))


symbol = st.builds(
    lambda name, kind, line, end: Symbol(name, kind, None, "a.py", line, line + end, ""),
    names,
    st.sampled_from(("class", "function", "method", "enum", "struct", "variable")),
    st.integers(1, 12),
    st.integers(0, 3),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(symbol, max_size=30),
    st.frozensets(st.sampled_from([w.lower() for w in WORDS] + ["decoder_x", "nothing"])),
    st.integers(1, 6),
)
def test_pick_from_the_table_is_the_full_sort(
    symbols: list[Symbol], keywords: frozenset[str], per_file: int
) -> None:
    got = _pick(_FileSymbols.of(symbols), keywords, per_file)
    # the same objects, not only equal ones: ties keep the index's order
    assert [id(s) for s in got] == [id(s) for s in reference(symbols, keywords, per_file)]
