"""Idle-time warming (service/warm.py): it fills caches, bounded, and never changes a pack."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.gate import SecretGate
from codelibrarian.service.warm import warm_steps
from codelibrarian.tokens import BpeTokenizer
from tests.helpers import commit_all, make_repo, write_files

RNG = random.Random(18)
#: a token-shaped secret (built at run time, never a real one) in a settings module
TOKEN = "ghp_" + "".join(RNG.choice("abcdefghijkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(36))


def _module(i: int) -> str:
    imports = "".join(f"from pkg import mod_{j:02d}\n" for j in range(i) if j % 7 == 0)
    funcs = "".join(
        f"def handle_{i}_{j}(order, invoice):\n"
        f'    """Route order {j} of batch {i} to the invoice ledger."""\n'
        f"    return invoice.total(order) + {j}\n\n\n"
        for j in range(6)
    )
    return imports + f"class Batch{i}:\n    size = {i}\n\n\n" + funcs


FILES = {
    **{f"pkg/mod_{i:02d}.py": _module(i) for i in range(24)},
    "pkg/__init__.py": "",
    "pkg/settings.py": (
        f'GITHUB_TOKEN = "{TOKEN}"\n\n\ndef ledger_token():\n    return GITHUB_TOKEN\n'
    ),
    "tests/test_mod_03.py": "from pkg import mod_03\n\n\ndef test_batch():\n    assert mod_03\n",
    "README.md": "# Ledger\n\nOrders, invoices and the ledger token.\n",
}
TASKS = (
    "route an order to the invoice ledger of batch 3",
    "where is the ledger token read",
    "batch sizes of the handlers",
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ledger", FILES)
    with Librarian(root) as lib:
        lib.index()
    return root


def _packs(lib: Librarian) -> list[str]:
    return [
        lib.compose(t, budget=1500, as_of=1767225600, use_cache=False, record=False).text
        for t in TASKS
    ]


def test_a_warmed_librarian_composes_byte_identical_packs(repo: Path) -> None:
    with Librarian(repo) as cold:
        expected = _packs(cold)
    assert not any(TOKEN in p for p in expected)  # the gate still redacts
    with Librarian(repo) as lib:
        steps = list(lib.warm())
        total = len(steps)
        assert steps[-1] == (total, total) and total == 28  # one step per indexed file
        memo = lib._ws.memo
        assert memo["warm.done"] is True
        assert len(memo["locate.spans"]) == total
        assert list(lib.warm()) == []  # finished: a new run costs nothing
        assert _packs(lib) == expected
    # the scans were saved for later processes (the span store persists them)
    assert (repo / ".librarian" / "cache" / "secret-spans.json").is_file()


def test_the_most_imported_files_come_first_and_the_word_bound_holds(repo: Path) -> None:
    with Librarian(repo) as lib:
        ws = lib._ws
        steps = warm_steps(ws, max_entries=1)
        next(steps)
        order = ws.memo["warm.order"]
        assert order[0] == "pkg/mod_00.py"  # imported by every seventh module
        list(steps)
        layouts = ws.memo["locate.spans"]
        # layouts stop once the bound is reached: the first file alone passes it
        assert list(layouts) == ["pkg/mod_00.py"]
        first = layouts["pkg/mod_00.py"]
        assert ws.memo["warm.entries"] == len(first.words) + len(first.parts) > 1
        with Librarian(repo) as cold:
            assert _packs(lib) == _packs(cold)


def test_warming_stops_when_the_index_moves_on_and_resumes_on_the_new_one(repo: Path) -> None:
    with Librarian(repo) as lib:
        steps = lib.warm()
        for _ in range(3):
            next(steps)
        first = lib._ws.memo
        assert first["warm.next"] == 3
        write_files(repo, {"pkg/mod_05.py": _module(5) + "\ndef refund(order):\n    return 0\n"})
        commit_all(repo, "refunds")
        lib.index()  # a new generation: the old memo (and its warm tables) is dropped
        assert list(steps) == []
        assert lib._ws.memo is not first
        again = list(lib.warm())
        assert again[0] == (1, 28) and again[-1] == (28, 28)
        layout = lib._ws.memo["locate.spans"]["pkg/mod_05.py"]
        assert any(p.chunk.symbol == "refund" for p in layout.parts)  # the changed content
        with Librarian(repo) as cold:
            assert _packs(lib) == _packs(cold)


def test_no_index_means_nothing_to_warm(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "bare", {"a.py": "x = 1\n"})
    with Librarian(root) as lib:
        assert list(lib.warm()) == []
    assert not (root / ".librarian").exists()


def test_a_warmed_source_gives_the_same_findings_and_a_changed_one_its_own() -> None:
    source = FILES["pkg/settings.py"]
    excerpt = source.splitlines()[0][:30]  # the token cut in half
    cold = SecretGate().scan(excerpt, source=source)
    gate = SecretGate()
    gate.warm_source(source)
    assert gate.scan(excerpt, source=source) == cold and cold  # found through the source
    changed = source.replace(TOKEN, "not-a-secret")
    gate.warm_source(changed)
    assert gate.scan(excerpt, source=changed) == SecretGate().scan(excerpt, source=changed)
    assert SecretGate(scan=False).scan(excerpt, source=source) == ()


def test_count_till_limit_from_the_count_cache_matches_the_tokenizer() -> None:
    texts = [FILES[p] for p in sorted(FILES)]
    cached, fresh = BpeTokenizer(), BpeTokenizer()
    for text in texts:
        cached.count(text)  # remembered by content
    for text in texts:
        n = fresh.count(text)
        for limit in (0, max(0, n - 1), n, n + 1, 10 * n + 5):
            assert cached.count_till_limit(text, limit) == (n if n <= limit else None)


def test_layout_bit_counts_match_counting_words_per_chunk() -> None:
    from codelibrarian.query.locate import _bit_counts

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)]
    for _ in range(50):
        chunks = [set(rng.sample(vocab, rng.randrange(0, 12))) for _ in range(rng.randrange(1, 90))]
        masks: dict[str, int] = {}
        for k, words in enumerate(chunks):
            for w in words:
                masks[w] = masks.get(w, 0) | (1 << k)
        terms = set(rng.sample(vocab, 8))
        counts = _bit_counts((masks.get(t, 0) for t in terms), len(chunks))
        assert counts == [len(terms & words) for words in chunks]


def test_an_exact_count_till_limit_is_remembered_as_the_count() -> None:
    tok, fresh = BpeTokenizer(), BpeTokenizer()
    text = FILES["pkg/mod_05.py"]
    n = fresh.count(text)
    assert tok.count_till_limit(text, n - 1) is None  # over: nothing learnt
    assert not tok._cache
    assert tok.count_till_limit(text, n + 50) == n  # exact: the count, remembered
    assert list(tok._cache.values()) == [n]
    assert tok.count(text) == n and tok.count_till_limit(text, n - 1) is None


def test_warming_reads_the_layouts_the_index_stored_and_builds_the_rest(repo: Path) -> None:
    from codelibrarian.index.indexer import update_paths
    from codelibrarian.query.locate import _WordTable

    # an edit re-indexed file by file leaves that file without a stored layout
    write_files(repo, {"pkg/mod_05.py": _module(5) + "\ndef refund(order):\n    return 0\n"})
    update_paths(repo, ["pkg/mod_05.py"])
    with Librarian(repo) as cold:
        expected = _packs(cold)
    with Librarian(repo) as lib:
        list(lib.warm())
        layouts = lib._ws.memo["locate.spans"]
        assert len(layouts) == 28
        built = [p for p, layout in layouts.items() if not isinstance(layout.words, _WordTable)]
        assert built == ["pkg/mod_05.py"]  # read from the index: every other file
        assert any(p.chunk.symbol == "refund" for p in layouts["pkg/mod_05.py"].parts)
        assert _packs(lib) == expected
