"""The retrieved lane keeps every excerpt within its per-file cap."""

from __future__ import annotations

from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.sources.retrieved import per_file_cap
from codelibrarian.tokens import get_tokenizer
from codelibrarian.trigger import Trigger
from tests.helpers import make_repo

AS_OF = 1_800_000_000


def _big_class() -> str:
    """A class whose name and docstring match the task but whose methods do not."""
    methods = "".join(
        f"    def step_{i}(self, value: int) -> int:\n"
        + "".join(f"        value = value * {j + 2} + {i} - {j}\n" for j in range(12))
        + "        return value\n\n"
        for i in range(40)
    )
    return f'class LedgerRotator:\n    """Rotates ledger entries."""\n\n{methods}'


def test_a_class_chunk_is_cut_to_the_cap_not_rendered_whole(tmp_path: Path) -> None:
    """A class chunk's indexed text is its header and method signatures, far shorter
    than the class's line range, which is what the lane renders: the cap must be
    checked on the rendered lines. (The composer would shrink an oversized candidate
    later and hide the waste, so the candidates are checked before composition.)"""
    repo = make_repo(tmp_path / "repo", {"ledger.py": _big_class(), "README.md": "# ledger\n"})
    tok = get_tokenizer("gpt-4o")
    budget = 8000
    cap = per_file_cap(budget)
    assert tok.count(_big_class()) > 4 * cap
    trigger = Trigger.create("LedgerRotator rotates ledger entries", as_of=AS_OF)
    with Librarian(repo) as lib:
        lib.index()
        candidates, *_ = lib._gather(trigger, budget)
    excerpts = [c for c in candidates if c.kind == "semantic_match"]
    assert excerpts, "the ledger class should be retrieved"
    for cand in excerpts:
        assert tok.count(cand.text()) <= cap, (cand.lines, tok.count(cand.text()))
