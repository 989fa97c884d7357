"""Focus windows: the lines a change or task names are shown, not only a definition's start."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from codelibrarian.api import Librarian
from codelibrarian.composer.excerpt import ELISION, render_excerpt
from codelibrarian.sources.excerpts import (
    WINDOW,
    focus_excerpt,
    focus_from_index,
    numbered,
    prose_lines,
    word_lines,
    word_lines_of,
)
from codelibrarian.tokens import Tokenizer, get_tokenizer
from tests.helpers import make_repo

AS_OF = 1_800_000_000


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return get_tokenizer("gpt-4o")


def test_focus_scores_weigh_the_change_s_names_and_split_identifiers() -> None:
    rows = [
        "limit = read_timeout(value)",
        "return parseHTTPHeader(raw)",
        "nothing here",
        "old_name = read_timeout + old_name",
    ]
    index = word_lines(rows)
    assert index["header"] == (2,) and index["parsehttpheader"] == (2,)  # parts and whole
    focus = focus_from_index(index, strong=("read_timeout",), weak=("header", "value"))
    # line 1: the whole identifier (strong, 2) and "value" (weak, 1); each word counts once
    assert focus == {1: 3, 2: 1, 4: 2}
    assert focus_from_index(index, ()) == {}


def test_focus_excerpt_takes_the_best_lines_first_with_their_signatures(
    tok: Tokenizer,
) -> None:
    rows = [f"    filler_{n} = compute({n})" for n in range(1, 201)]
    rows[39] = "def handle_request(request):"
    rows[59] = "    timeout = request.read_timeout + pool_timeout"  # two strong words
    rows[149] = "def close_pool(pool):"
    rows[159] = "    pool.drain(read_timeout)"  # one strong word
    focus = focus_from_index(word_lines(rows), strong=("read_timeout", "pool_timeout"))
    assert focus == {60: 4, 160: 2}
    frames = {60: (40,), 160: (150,)}
    first = {40, *range(60 - WINDOW, 60 + WINDOW + 1)}
    one = tok.count(render_excerpt(numbered(rows, [], sorted(first))))
    small = focus_excerpt(tok, rows, focus, one + 2, frame_of=frames)
    assert {n for n, _ in small} == first  # the best line's window and its signature
    wide = focus_excerpt(tok, rows, focus, 2 * one + 20, frame_of=frames)
    assert {40, 60, 150, 160} <= {n for n, _ in wide}
    assert render_excerpt(wide).count(ELISION + "\n") >= 2  # gaps are marked, not hidden
    assert tok.count(render_excerpt(wide)) <= 2 * one + 20
    assert focus_excerpt(tok, rows, focus, 3, frame_of=frames) == ()
    # only lines scoring at least `least` count: the one-word line is left out
    assert {n for n, _ in focus_excerpt(tok, rows, focus, 10_000, least=3)} == first - {40}


def _stage(k: int) -> str:
    rows = [f"def stage_{k}(records, settings):"]
    rows += [f"    step_{n} = transform_{n}(records, {n} + {k})" for n in range(1, 14)]
    rows += [f"    limit_{k} = settings.retry_budget_seconds * {k}"]
    rows += [f"    after_{n} = finish_{n}(records, {n} + {k})" for n in range(1, 14)]
    rows += [f"    return limit_{k}", "", ""]
    return "\n".join(rows) + "\n"


def test_a_diff_shows_the_lines_that_use_its_identifiers_in_another_file(
    tmp_path: Path,
) -> None:
    """At 2,000 tokens, a file the change ripples into shows the lines naming the
    change's identifiers mid-function, framed by their signatures: twelve functions use
    the new setting, about three fit whole."""
    consumer = "from pkg.settings import Settings\n\n\n" + "".join(_stage(k) for k in range(12))
    settings_py = "class Settings:\n    def __init__(self):\n        self.retries = 3\n"
    filler = {
        f"pkg/mod{i}.py": "".join(
            f"def helper_{i}_{j}(x):\n    return x + {j}\n\n" for j in range(30)
        )
        for i in range(8)
    }
    repo = make_repo(
        tmp_path / "r",
        {"pkg/settings.py": settings_py, "pkg/consumer.py": consumer, **filler},
    )
    diff = (
        "--- a/pkg/settings.py\n+++ b/pkg/settings.py\n"
        "@@ -1,3 +1,4 @@\n class Settings:\n     def __init__(self):\n"
        "         self.retries = 3\n+        self.retry_budget_seconds = 30\n"
    )
    tok = get_tokenizer("gpt-4o")
    with Librarian(repo) as lib:
        lib.index()
        packs = [
            lib.compose(
                "add a retry budget to the settings",
                budget=2000,
                as_of=AS_OF,
                diff_text=diff,
                record=False,
            )
            for _ in range(2)
        ]
    text = packs[0].text
    assert packs[1].text == text  # byte-identical for the same inputs
    assert tok.count(text) <= 2000
    shown = [
        k for k in range(12) if f"    limit_{k} = settings.retry_budget_seconds * {k}\n" in text
    ]
    # the focus windows come first (best lines, ties by line number): the first two uses,
    # whatever whole functions the equal-scored spans' tie-break adds (it is keyed by the
    # workspace's secret, so it differs between repositories)
    assert {0, 1} <= set(shown) and len(shown) >= 3, shown
    for k in shown:  # each window is framed by its function's signature
        assert f"def stage_{k}(records, settings):\n" in text


def test_focus_excerpt_keeps_the_most_windows_that_fit(tok: Tokenizer) -> None:
    """Whatever the cap, the excerpt is the longest run of best-first windows that fits."""
    rows = [f"    value_{n} = lookup_{n % 7}(table, {n})  # row {n}" for n in range(1, 121)]
    focus = {n: 1 + n % 5 for n in range(5, 120, 13)}
    order = sorted(focus, key=lambda n: (-focus[n], n))
    for cap in (10, 90, 260, 5000):
        got = focus_excerpt(tok, rows, focus, cap)
        best: tuple[tuple[int, str], ...] = ()
        for k in range(len(order) + 1):
            lines = {x for n in order[:k] for x in range(n - WINDOW, n + WINDOW + 1)}
            trial = numbered(rows, [], sorted(lines))
            if tok.count(render_excerpt(trial)) <= cap:
                best = trial
            else:
                break
        assert got == best, cap


_PIECES = ("read", "Timeout", "HTTP", "header_", "x", "İ", "ς", "Σ", " ", "_", ".", "(", "7")
_PIECES += ("é", "X7", "12", "aB")
#: an ASCII file is searched by the identifiers around each place a word occurs
_ASCII_PIECES = tuple(p for p in _PIECES if p.isascii())
_WANTED = ("read", "timeout", "http", "header", "readtimeout", "x", "é", "", "7", "x7", "_")
_WANTED += ("7x", "d(", "12", "2x", "ab", "b", "a_b", "d.")


@given(
    rows=st.sampled_from((_PIECES, _ASCII_PIECES)).flatmap(
        lambda pieces: st.lists(
            st.lists(st.sampled_from(pieces), max_size=14).map("".join), max_size=12
        )
    ),
    wanted=st.lists(st.sampled_from(_WANTED), max_size=5),
)
@example(rows=["12x = x7 + 7x7", "aB_b.x12"], wanted=["12", "7", "x7", "b", "x"])
@settings(max_examples=300)
def test_the_words_of_a_task_are_found_as_the_whole_table_finds_them(
    rows: list[str], wanted: list[str]
) -> None:
    # the focus reads only the lines holding a wanted word: the same lines, per word,
    # as the whole-file table, whatever the case and non-ASCII characters around them,
    # digits leading a run, a word twice in one identifier or across two
    whole = word_lines(rows)
    want = {w.lower() for w in wanted}
    assert word_lines_of(rows, wanted) == {w: v for w, v in whole.items() if w in want}


def test_the_words_of_a_task_are_found_in_upper_case_and_inside_identifiers() -> None:
    rows = ["x = READ_TIMEOUT", "def parseHTTPHeader(): pass", "İstanbul header", "nothing"]
    found = word_lines_of(rows, ("Read", "header", "http", "absent"))
    assert found == {"read": (1,), "header": (2, 3), "http": (2,)}


def _prose_lines_by_rule(lines: tuple[tuple[int, str], ...]) -> frozenset[int]:
    """What ``prose_lines`` means, stated plainly: a docstring runs from a line that
    starts with triple quotes to the first later line holding them again (or to the
    end); a comment line starts with a comment marker."""
    out: set[int] = set()
    i = 0
    while i < len(lines):
        head = lines[i][1].strip()
        quote = head[:3]
        last = i
        if quote in ('"""', "'''") and quote not in head[3:]:
            later = [k for k in range(i + 1, len(lines)) if quote in lines[k][1]]
            last = later[0] if later else len(lines) - 1
        if last > i or quote in ('"""', "'''") or head.startswith(("#", "//", "/*", "*", "--")):
            out.update(number for number, _ in lines[i : last + 1])
        i = last + 1
    return frozenset(out)


@given(
    st.lists(
        st.lists(
            st.sampled_from(('"""', "'''", "#", "//", "*", "--", " ", "x = 1", '"', "'", "\t")),
            max_size=5,
        ).map("".join),
        max_size=15,
    )
)
def test_prose_lines_are_the_docstrings_and_comment_lines(rows: list[str]) -> None:
    lines = tuple(enumerate(rows, 1))
    assert prose_lines(lines) == _prose_lines_by_rule(lines)
