"""Token counts must equal bpe-openai's own, on real source and on long texts."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import warnings
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.errors import UsageError
from codelibrarian.tokens import (
    ENCODINGS,
    SAFETY_FACTORS,
    BpeTokenizer,
    ScaledTokenizer,
    Tokenizer,
    count_joined,
    count_pieces,
    encoding_for_model,
    fit_prefix,
    get_tokenizer,
    prefix_fits,
)

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@cache
def _corpus() -> tuple[tuple[str, str], ...]:
    """~200 real source files from the standard library, picked deterministically."""
    files = sorted(
        p
        for p in STDLIB.rglob("*.py")
        if "site-packages" not in p.parts and "test" not in p.parts and p.is_file()
    )
    step = max(1, len(files) // 200)
    picked = files[::step][:200]
    return tuple(
        (str(p.relative_to(STDLIB)), p.read_text(encoding="utf-8", errors="replace"))
        for p in picked
    )


@cache
def _ref(encoding: str) -> Any:
    """bpe-openai's own Encoding, loaded independently of codelibrarian.tokens."""
    with warnings.catch_warnings():  # its data loader uses a deprecated importlib API
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding(encoding)


def _reference_count(encoding: str, text: str) -> int:
    return len(_ref(encoding).encode_ordinary(text))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_counts_equal_bpe_openai_on_200_real_source_files(encoding: str) -> None:
    corpus = _corpus()
    assert len(corpus) >= 150
    tok = BpeTokenizer(encoding)
    mismatches = [
        name for name, text in corpus if tok.count(text) != _reference_count(encoding, text)
    ]
    assert mismatches == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_exact_on_a_long_text_below_the_library_limits(encoding: str) -> None:
    """700k characters of real source, counted whole by both."""
    text = "".join(t for _, t in _corpus())[:700_000]
    assert BpeTokenizer(encoding).count(text) == _reference_count(encoding, text)


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_over_one_million_characters_matches_line_aligned_reference(encoding: str) -> None:
    """bpe-openai's wrapper refuses >= 1M chars; the reference encodes file-sized pieces
    that each start at a marker line, so no pre-token can span two of them."""
    pieces: list[str] = []
    while sum(map(len, pieces)) < 2_500_000:
        pieces += [f"# file {len(pieces)}: {name}\n{text}\n" for name, text in _corpus()]
    text = "".join(pieces)
    assert len(text) > 1_000_000
    expected = sum(_reference_count(encoding, p) for p in pieces)
    tok = BpeTokenizer(encoding)
    assert tok.count(text) == expected
    assert len(tok.encode(text)) == expected
    assert tok.decode(tok.encode(text[:200_000])) == text[:200_000]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_dense_text_over_the_200k_token_limit(encoding: str) -> None:
    """bpe-openai's wrapper raises past 200,000 tokens per call; we must not.

    The reference counts blocks that end at ";\n" and start with a letter, a
    boundary no pre-token crosses."""
    block = "x = {'k': [1, 2, 3]};\n" * 1000
    tail = "é∂ƒ©˙∆˚¬…" * 5000
    text = block * 40 + tail
    expected = 40 * _reference_count(encoding, block) + _reference_count(encoding, tail)
    assert expected > 200_000
    assert BpeTokenizer(encoding).count(text) == expected


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_long_lines_without_newlines(encoding: str) -> None:
    """Minified text (one 150k-character line) is counted exactly."""
    data = {f"key_{i}": [i, f"value {i}", {"nested": i * 3.5}] for i in range(4000)}
    text = json.dumps(data)
    assert "\n" not in text
    assert len(text) > 150_000
    assert BpeTokenizer(encoding).count(text) == _reference_count(encoding, text)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_run_with_no_boundary_at_all(encoding: str) -> None:
    text = "prefix line\n" + "a" * 120_000 + "\nsuffix"
    assert BpeTokenizer(encoding).count(text) == _reference_count(encoding, text)


_ALPHABET = st.sampled_from(
    [*"abcXYZ019_ \n\t/;'(){}.,\"#=+-*", "\r\n", "//", "'s", "é", "\u0301", "中", "🙂", "٣"]
)


@given(st.lists(_ALPHABET, min_size=1, max_size=200))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_counts_and_encodings_equal_the_reference_on_odd_text(
    encoding: str, parts: list[str]
) -> None:
    text = "".join(parts)
    tok = BpeTokenizer(encoding)
    assert tok.count(text) == _reference_count(encoding, text)
    assert tok.encode(text) == list(_ref(encoding).encode_ordinary(text))


def test_loading_the_tokenizer_does_not_import_the_slow_wrapper() -> None:
    """Counting loads only bpe-openai's compiled backend (see tokens._load_bindings)."""
    code = (
        "import sys; from codelibrarian.tokens import BpeTokenizer; "
        "assert BpeTokenizer().count('hello world') == 2; "
        "print('bpe_openai' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_surrogates_are_counted_like_bpe_openai() -> None:
    text = "ok \ud800 broken"
    assert BpeTokenizer().count(text) == _reference_count("o200k_base", text)


def test_empty_and_cache() -> None:
    tok = BpeTokenizer("cl100k_base")
    assert tok.count("") == 0
    assert tok.count("hello world") == tok.count("hello world") == 2
    assert tok.name == "cl100k_base"


def test_unknown_encoding() -> None:
    with pytest.raises(UsageError, match="unknown encoding"):
        BpeTokenizer("p50k_base")


# ---------------------------------------------------------------- model map


@pytest.mark.parametrize(
    ("model", "encoding", "factor"),
    [
        ("gpt-4o", "o200k_base", 1000),
        ("gpt-4o-mini", "o200k_base", 1000),
        ("gpt-4.1-nano", "o200k_base", 1000),
        ("gpt-5", "o200k_base", 1000),
        ("o3-mini", "o200k_base", 1000),
        ("o4-mini", "o200k_base", 1000),
        ("openai/gpt-4o", "o200k_base", 1000),
        ("gpt-4", "cl100k_base", 1000),
        ("gpt-4-turbo", "cl100k_base", 1000),
        ("gpt-3.5-turbo", "cl100k_base", 1000),
        ("azure:gpt-4", "cl100k_base", 1000),
        ("text-embedding-3-small", "cl100k_base", 1000),
        ("o200k_base", "o200k_base", 1000),
        ("CL100K_BASE", "cl100k_base", 1000),
        ("claude-3-5-sonnet-20240620", "o200k_base", 1350),
        ("claude-sonnet-4-20250514", "o200k_base", 1350),
        ("claude-opus-4-1-20250805", "o200k_base", 1350),
        ("claude-sonnet-4-6", "o200k_base", 1350),
        ("anthropic/claude-3.5-sonnet", "o200k_base", 1350),
        ("claude-opus-4-7", "o200k_base", 1800),
        ("claude-opus-4.7", "o200k_base", 1800),
        ("claude-5-sonnet", "o200k_base", 1800),
        ("claude", "o200k_base", 1800),
        ("gemini-2.5-pro", "o200k_base", 1200),
        ("google/gemma-3-27b-it", "o200k_base", 1200),
        ("ollama:llama3.2", "o200k_base", 1350),
        ("meta-llama/Llama-3.1-8B-Instruct", "o200k_base", 1350),
        ("qwen2.5-coder:7b", "o200k_base", 1350),
        ("deepseek-coder-v2", "o200k_base", 1350),
        ("my-own-finetune", "o200k_base", 1800),
    ],
)
def test_model_map(model: str, encoding: str, factor: int) -> None:
    assert encoding_for_model(model) == (encoding, factor)


def test_published_factors_cover_every_family() -> None:
    factors = set(SAFETY_FACTORS.values())
    assert factors == {1350, 1800, 1200}
    assert max(factors) == SAFETY_FACTORS["unknown"]
    assert all(f >= 1000 for f in factors)


def test_get_tokenizer_reuses_instances() -> None:
    assert get_tokenizer("gpt-4o") is get_tokenizer("gpt-4o-mini")
    assert get_tokenizer() is get_tokenizer("gpt-4o")
    claude = get_tokenizer("claude-sonnet-4-6")
    assert isinstance(claude, ScaledTokenizer)
    assert claude.name == "o200k_basex1350"
    assert isinstance(claude, Tokenizer)


def test_scaled_tokenizer_rounds_up() -> None:
    base = BpeTokenizer()
    scaled = ScaledTokenizer(base, 1350)
    assert base.count("hello") == 1
    assert scaled.count("hello") == 2  # 1.35 -> 2
    text = "hello" + " hello" * 19  # 20 tokens exactly
    assert base.count(text) == 20
    assert scaled.count(text) == 27  # exact multiple, no extra token
    assert scaled.count("") == 0
    assert ScaledTokenizer(base, 1001).count("hello" + " hello" * 999) == 1001
    with pytest.raises(UsageError):
        ScaledTokenizer(base, 999)


# ---------------------------------------------------------------- fit_prefix


def test_fit_prefix_cuts_at_the_last_line_that_fits() -> None:
    tok = BpeTokenizer()
    text = "".join(f"line number {i} with some words\n" for i in range(50))
    first_line = tok.count(text[: text.index("\n") + 1])
    for budget in (first_line, first_line + 1, 50, 123, 400):
        prefix = fit_prefix(tok, text, budget)
        assert text.startswith(prefix)
        assert tok.count(prefix) <= budget
        assert prefix.endswith("\n")
        if prefix != text:
            nxt = text[: text.index("\n", len(prefix)) + 1]
            assert tok.count(nxt) > budget
    assert fit_prefix(tok, text, 10_000) == text
    assert fit_prefix(tok, text, 0) == ""
    assert fit_prefix(tok, "", 10) == ""


def test_fit_prefix_falls_back_to_word_boundaries() -> None:
    tok = BpeTokenizer()
    text = "alpha beta gamma delta epsilon zeta eta theta\nsecond line\n"
    prefix = fit_prefix(tok, text, 3)
    assert prefix == "alpha beta gamma"
    assert fit_prefix(tok, "x" * 500, 3) == ""


def test_fit_prefix_with_scaled_tokenizer() -> None:
    tok = get_tokenizer("claude-opus-4-7")
    text = "".join(f"row {i}\n" for i in range(100))
    prefix = fit_prefix(tok, text, 40)
    assert tok.count(prefix) <= 40 < tok.count(text[: text.index("\n", len(prefix)) + 1])


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_count_till_limit_is_exact_up_to_the_limit(encoding: str) -> None:
    tok = BpeTokenizer(encoding)
    text = "".join(t for _, t in _corpus()[:3])
    n = tok.count(text)
    assert tok.count_till_limit(text, n) == n
    assert tok.count_till_limit(text, n + 10) == n
    assert tok.count_till_limit(text, n - 1) is None
    assert tok.count_till_limit("", 0) == 0


# --- counting a pack from its blocks -------------------------------------------------

_TRICKY = st.sampled_from(
    ["\n", "\n\n", " ", "  ", "\t", "/", "//", ")", "}", "#", "'s", "x", "Ab", "42", "é",
     "\u0301", "日本", "\r\n", "->", "```", "<file>", "def f():", "    return 1", "😀"]
)  # fmt: skip
_TEXT = st.lists(_TRICKY, max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(_TEXT, max_size=6), sep=st.sampled_from(["\n\n", "\n", "", " ", "\n---\n"]))
def test_a_joined_count_from_pieces_is_the_whole_texts_count(parts: list[str], sep: str) -> None:
    for encoding in ENCODINGS:
        tok = BpeTokenizer(encoding)
        assert tok.count_joined(parts, sep) == tok.count(sep.join(parts))
    scaled = ScaledTokenizer(BpeTokenizer(), 1350)
    assert count_joined(scaled, parts, sep) == scaled.count(sep.join(parts))


def test_a_joined_count_cuts_only_where_no_token_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    tok = BpeTokenizer()
    counted: list[str] = []
    real = tok.count_pieces

    def spy(text: str) -> int:
        counted.append(text)
        return real(text)

    monkeypatch.setattr(tok, "count_pieces", spy)
    blocks = ["## a.py\nx = 1\n", "// b.js\nlet y\n", "  indented\n", "## c.py\nz = 3\n"]
    assert tok.count_joined(blocks, "\n\n") == real("\n\n".join(blocks))
    # cut before "## c.py" only: "//" and leading spaces could join the piece before
    assert counted == [
        "## a.py\nx = 1\n\n\n// b.js\nlet y\n\n\n  indented\n\n\n",
        "## c.py\nz = 3\n",
    ]


# --- counting a text from its pieces --------------------------------------------------

_UNICODE_SPACE = st.sampled_from(["\u00a0", "\u2028", "\u3000", "\x0b", "\x0c", "\x85", "\x1c"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_TRICKY, _UNICODE_SPACE, st.just("\u22ee")), max_size=40))
def test_a_count_from_pieces_is_the_whole_texts_count(parts: list[str]) -> None:
    text = "".join(parts)
    for encoding in ENCODINGS:
        tok = BpeTokenizer(encoding)
        whole = _reference_count(encoding, text)
        assert tok.recount(text) == whole
        assert tok.count_pieces(text) == whole
        assert tok.count_pieces(text) == whole  # again, from the cache
        # the pieces are remembered: a text made of known pieces plus one new is exact too
        assert tok.count_pieces(text + "\nz = 1\n") == _reference_count(
            encoding, text + "\nz = 1\n"
        )
    scaled = ScaledTokenizer(BpeTokenizer(), 1350)
    assert count_pieces(scaled, text) == scaled.count(text) == scaled.recount(text)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_count_from_pieces_is_exact_on_real_source(encoding: str) -> None:
    tok = BpeTokenizer(encoding)
    for _, text in _corpus():
        assert tok.count_pieces(text) == _reference_count(encoding, text)


def test_a_piece_starts_where_the_pretokenizer_starts_one() -> None:
    """Every cut point is a boundary of the backend's own pre-tokens, on real source."""
    from codelibrarian.tokens import _PIECE_START, _encoder

    checked = 0
    for encoding in ENCODINGS:
        enc = _encoder(encoding)
        for _, text in _corpus()[:60]:
            bounds = set()
            at = 0
            for token in enc.pretokenize(text):
                at += len(token)
                bounds.add(at)
            assert at == len(text)
            cuts = {m.end() for m in _PIECE_START.finditer(text)}
            assert cuts <= bounds
            checked += len(cuts)
    assert checked > 1000


def test_the_cut_pattern_is_the_whitespace_rule() -> None:
    """``[^\\s/]`` after a newline is exactly ``not ch.isspace() and ch != "/"``."""
    from codelibrarian.tokens import _PIECE_START

    for code in range(0x110000):
        ch = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        cut = _PIECE_START.search("a\n" + ch) is not None
        assert cut == (not ch.isspace() and ch != "/"), hex(code)


def test_pieces_are_counted_once_and_the_check_counts_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from codelibrarian import tokens

    tok = BpeTokenizer()
    seen: list[str] = []
    real = tokens._backend_count

    def spy(enc: object, text: str, limit: int | None) -> int | None:
        seen.append(text)
        return real(enc, text, limit)

    monkeypatch.setattr(tokens, "_backend_count", spy)
    block = "### a.py:1-9\n```python\nclass A:\n\u22ee\n    def f(self):\n        return 1\n```"
    assert tok.count_pieces(block) == _reference_count("o200k_base", block)
    assert seen == [
        "### a.py:1-9\n",
        "```python\n",
        "class A:\n",
        "\u22ee\n    def f(self):\n        return 1\n",
        "```",
    ]
    seen.clear()
    # another block showing the same excerpt: only its header is new
    other = block.replace("1-9", "1-12")
    assert tok.count_pieces(other) == _reference_count("o200k_base", other)
    assert seen == ["### a.py:1-12\n"]
    seen.clear()
    # the whole-text check never comes from the cache or from pieces
    assert tok.recount(other) == tok.count_pieces(other)
    assert seen == [other]


# --- counting prefixes of one text from its line pieces -------------------------------

_CODE_BITS = st.sampled_from(
    ["\n", "\n\n", "    ", "\t", "  ", " ", "/", "//", "):", "x", "def f():", "return 1", "# c",
     "\u22ee", "é", "\u00a0", "\u3000", "\r\n", "'s", "42", "```", "😀", "\x0c"]
)  # fmt: skip


def _line_ends(text: str) -> list[int]:
    return [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n"), len(text)]


@settings(max_examples=400, deadline=None)
@given(st.lists(_CODE_BITS, max_size=50).map("".join), st.integers(0, 40))
def test_prefixes_counted_from_line_pieces_fit_as_counted_whole(text: str, limit: int) -> None:
    from codelibrarian.tokens import _LINE_START

    for encoding in ENCODINGS:
        tok = BpeTokenizer(encoding)
        # the invariant itself: the line pieces' counts add up to the whole's
        cuts = [0, *(m.end() for m in _LINE_START.finditer(text)), len(text)]
        pieces = [text[a:b] for a, b in pairwise(cuts)]
        assert sum(_reference_count(encoding, p) for p in pieces) == _reference_count(
            encoding, text
        )
        fits = prefix_fits(tok, text, limit)
        ends = _line_ends(text)
        # asked in a search's order (middle first), then in order
        for end in [*ends[len(ends) // 2 :: -1], *ends]:
            assert fits(end) == (_reference_count(encoding, text[:end]) <= limit), end
        # at each prefix's own count and one below: the answer turns exactly there
        for end in ends:
            exact = _reference_count(encoding, text[:end])
            assert prefix_fits(tok, text, exact)(end)
            assert not prefix_fits(tok, text, exact - 1)(end) or end == 0
    scaled = ScaledTokenizer(BpeTokenizer(), 1350)
    fits = prefix_fits(scaled, text, limit)
    for end in _line_ends(text):
        assert fits(end) == (scaled.count(text[:end]) <= limit)


def test_prefixes_of_real_source_fit_as_counted_whole() -> None:
    tok = BpeTokenizer()
    for _, text in _corpus()[:40]:
        head = text[:20_000]
        ends = _line_ends(head)[::7]
        for limit in (50, 400, 1500):
            fits = prefix_fits(tok, head, limit)
            for end in ends:
                assert fits(end) == (tok.recount(head[:end]) <= limit)


def test_a_line_piece_starts_where_the_pretokenizer_starts_one() -> None:
    """Every line piece start (indented lines too) is a boundary of the backend's own
    pre-tokens, on real source."""
    from codelibrarian.tokens import _LINE_START, _encoder

    checked = 0
    for encoding in ENCODINGS:
        enc = _encoder(encoding)
        crafted = [
            "x\n  \ny\n",
            "a):\n    //b\n",
            "x\n\t\ty",
            "x\n \t\n  y",
            "a\n\u00a0b",
            "):\n/x",
        ]
        for text in [*(t for _, t in _corpus()[:60]), *crafted]:
            bounds = set()
            at = 0
            for token in enc.pretokenize(text):
                at += len(token)
                bounds.add(at)
            cuts = {m.end() for m in _LINE_START.finditer(text)}
            assert cuts <= bounds, text[:80]
            checked += len(cuts)
    assert checked > 10_000
