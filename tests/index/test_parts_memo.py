"""The memos of the index's identifier splitting change no answer, only its cost.

``parts_text`` (every chunk's FTS ``parts`` column) remembers compound identifiers
and the set of one-word ones, each emptied when full; ``symbol_part_rows`` takes a
cold build's name memo. Both must give exactly what splitting afresh gives, whatever
the memo holds, whichever size bound applies, and in whatever order texts arrive.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.index import parse, schema, tokenize
from codelibrarian.index.schema import symbol_part_ords, symbol_part_rows
from codelibrarian.index.tokenize import name_parts_remembered, name_parts_uncached, parts_text
from codelibrarian.tokens import get_tokenizer

_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _reference_parts(*texts: str) -> str:
    """The column as specified: parts of every identifier with two or more, sorted, unique."""
    out: set[str] = set()
    for text in texts:
        for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
            parts = [
                p.lower() for piece in ident.split("_") if piece for p in _SPLIT.findall(piece)
            ]
            if len(parts) > 1:
                out.update(parts)
    return " ".join(sorted(out))


_ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,14}", fullmatch=True)
_junk = st.sampled_from([" ", "\n", "(", ").", ", ", "  # ", "123", "é", "=", "\t", "::"])
_text = st.lists(st.one_of(_ident, _junk), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.lists(_text, min_size=1, max_size=3), min_size=1, max_size=12),
    bound=st.sampled_from([0, 1, 3, 16_384]),
)
def test_parts_text_equals_a_fresh_split_whatever_the_memo_holds(
    texts: list[list[str]], bound: int
) -> None:
    saved = tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO
    tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO = bound, {}, set()
    try:
        for _ in range(2):  # the second pass reads what the first remembered
            for group in texts:
                assert parts_text(*group) == _reference_parts(*group)
        assert len(tokenize._PARTS_MEMO) <= bound
        assert len(tokenize._PLAIN_MEMO) <= bound
    finally:
        tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO = saved


def test_the_plain_set_holds_one_word_identifiers_only() -> None:
    saved = tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO
    tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO = 100, {}, set()
    try:
        assert parts_text("self.parseHTTPResponse_v2(x, json_decoder)") == (
            "2 decoder http json parse response v"
        )
        assert sorted(tokenize._PLAIN_MEMO) == ["self", "x"]
        assert set(tokenize._PARTS_MEMO) == {"parseHTTPResponse_v2", "json_decoder"}
        # remembered entries answer the same as fresh ones
        assert parts_text("x json_decoder self") == "decoder json"
    finally:
        tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO = saved


_name = st.lists(st.one_of(_ident, st.just(".")), min_size=1, max_size=4).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    files=st.lists(st.lists(_name, max_size=15), min_size=1, max_size=6),
    bound=st.sampled_from([1, 2, 16_384]),
)
def test_symbol_part_rows_with_a_memo_equal_rows_without(
    files: list[list[str]], bound: int
) -> None:
    saved = schema._NAME_MEMO_MAX
    schema._NAME_MEMO_MAX = bound
    try:
        memo: dict[str, frozenset[str]] = {}
        for file_id, names in enumerate(files, start=1):
            assert symbol_part_rows(file_id, names, memo) == symbol_part_rows(file_id, names)
            assert len(memo) <= bound
            assert all(memo[n] == name_parts_uncached(n) for n in memo)
    finally:
        schema._NAME_MEMO_MAX = saved


_odd_name = st.one_of(_name, st.text(max_size=12))


@settings(max_examples=200, deadline=None)
@given(
    files=st.lists(st.lists(_odd_name, max_size=15), min_size=1, max_size=6),
    bound=st.sampled_from([0, 1, 3, 16_384]),
    texts=st.lists(_text, max_size=4),
)
def test_name_parts_from_the_identifier_memos_equal_a_fresh_split(
    files: list[list[str]], bound: int, texts: list[str]
) -> None:
    """What a parse worker stores for ``symbol_parts`` (split through the memos that
    chunking filled) equals what the writer derives from the names, whatever the memos
    hold; and the payload carries the rows back unchanged, or None for a part holding a
    tab or newline (the writer then splits the names itself)."""
    saved = tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO
    tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO = bound, {}, set()
    try:
        for text in texts:
            parts_text(text)  # fills the memos as chunking does
        for file_id, names in enumerate(files, start=1):
            ords = symbol_part_ords(names, name_parts_remembered)
            assert [(p, file_id, o) for p, o in ords] == symbol_part_rows(file_id, names)
            packed = parse._pack_parts(tuple(ords))
            if any("\t" in p or "\n" in p for p, _ in ords):
                assert packed is None
            else:
                assert parse._unpack_parts(packed) == tuple(ords)
        assert len(tokenize._PARTS_MEMO) <= max(bound, 0)
    finally:
        tokenize._MEMO_MAX, tokenize._PARTS_MEMO, tokenize._PLAIN_MEMO = saved


def test_a_payload_without_name_part_rows_is_written_from_the_names(tmp_path: Path) -> None:
    """A ``FileData`` whose parse carried no name-part rows (None) gets the rows the
    writer derives, equal to those a parse carries."""
    from codelibrarian.index.store import SqliteStore

    source = b"class JsonDecoder:\n    def parse_HTTPResponse(self):\n        return 1\n"
    parsed = parse.parse_source(
        "pkg/json_tools.py", source, tokenizer=get_tokenizer("gpt-4o"), max_tokens=256
    )
    assert parsed.symbol_parts
    rows = []
    for data in (parsed, replace(parsed, path="pkg/other.py", symbol_parts=None)):
        with SqliteStore(tmp_path / f"{data.path.replace('/', '_')}.db") as store:
            store.write_files([(data, [])])
            rows.append(
                store._conn.execute(
                    "SELECT part, ords FROM symbol_parts ORDER BY part, ords"
                ).fetchall()
            )
    assert rows[0] == rows[1] != []
