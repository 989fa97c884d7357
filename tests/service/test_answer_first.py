"""Answer first, finish later: compose and query run on a partial index and say so (#18)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.config import Config, IndexConfig
from codelibrarian.index.indexer import index_workspace
from codelibrarian.index.priority import first_files
from tests.helpers import make_repo, wait_gone


def _filler(i: int) -> str:
    return "".join(
        f"def routine_{i}_{j}(count: int) -> int:\n    return count + {j}\n\n\n" for j in range(12)
    )


INVOICE = (
    "class InvoiceLedger:\n"
    '    """Totals of invoices, with the tax rounding rules."""\n\n'
    "    def invoice_total(self, lines):\n"
    "        subtotal = sum(line.amount for line in lines)\n"
    "        return round_tax(subtotal)\n\n\n"
    "def round_tax(amount):\n"
    "    return round(amount * 1.2, 2)\n"
)
FILES = {
    **{f"pkg/filler_{i:02d}.py": _filler(i) for i in range(60)},
    "pkg/billing/invoice.py": INVOICE,
    "README.md": "# Ledger\n",
}
TASK = "fix the rounding of the invoice total tax"
SMALL = Config(index=IndexConfig(first_files=8, background=False))


def _progress(root: Path) -> tuple[int, int]:
    with sqlite3.connect(root / ".librarian" / "index.db") as conn:
        row = conn.execute("SELECT COUNT(*), COALESCE(SUM(stage = 2), 0) FROM files").fetchone()
    return int(row[0]), int(row[1])


def test_first_files_puts_the_task_first_and_is_bounded(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", FILES)
    paths = sorted(FILES)
    chosen = first_files(root, paths, TASK, limit=5)
    assert chosen[0] == "pkg/billing/invoice.py"
    assert len(chosen) <= 5
    named = first_files(root, paths, TASK, limit=5, must=["pkg/filler_07.py"])
    assert named[0] == "pkg/filler_07.py" and "pkg/billing/invoice.py" in named
    assert first_files(root, paths, TASK, limit=5) == chosen  # deterministic
    assert first_files(root, paths, "the and of", limit=5) == []  # nothing to go on


def test_compose_answers_before_the_index_is_done_and_says_what_was_missing(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", FILES)
    with Librarian(root, SMALL) as lib:
        result = lib.compose(TASK, budget=2000, as_of=1_767_225_600)
    assert "pkg/billing/invoice.py" in result.files  # the file the task is about is there
    assert "def invoice_total" in result.text
    codes = [d.code for d in result.degraded]
    assert codes == ["unverified_by_trace(index_partial)"]
    listed, parsed = _progress(root)
    assert listed == len(FILES) and parsed < listed
    assert f"cover {parsed} of {listed} files" in result.degraded[0].detail
    assert result.to_dict()["degraded"][0]["reason"] == "index_partial"
    # the next calls continue (no background process here), until nothing is missing
    for _ in range(20):
        with Librarian(root, SMALL) as lib:
            later = lib.compose(TASK, budget=2000, as_of=1_767_225_600)
        if not later.degraded:
            break
    assert not later.degraded
    assert _progress(root) == (len(FILES), len(FILES))
    # and what it ends with is what a full index gives
    full = make_repo(tmp_path / "full", FILES)
    index_workspace(full)
    with Librarian(full) as lib:
        assert lib.compose(TASK, budget=2000, as_of=1_767_225_600).text == later.text


def test_query_records_the_partial_index_as_a_trace(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", FILES)
    with Librarian(root, SMALL) as lib:
        result = lib.query(TASK, limit=3)
    assert result.paths[0] == "pkg/billing/invoice.py"
    assert "unverified_by_trace(index_partial)" in [t.code for t in result.pipeline.traces]
    assert "index_partial" in str(result.to_dict()["traces"])


@pytest.mark.slow
def test_the_rest_is_finished_in_the_background(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", FILES)
    cfg = Config(index=IndexConfig(first_files=8, background=True))
    with Librarian(root, cfg) as lib:
        result = lib.compose(TASK, budget=2000, as_of=1_767_225_600)
    assert "being indexed in the background (pid" in result.degraded[0].detail
    deadline = time.monotonic() + 60
    while _progress(root)[1] < len(FILES) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _progress(root) == (len(FILES), len(FILES))
    # the background run ends after writing the last file: wait for it to be gone
    pid = int(result.degraded[0].detail.rsplit("(pid ", 1)[1].split(")", 1)[0])
    assert wait_gone({pid}, 60.0) == set(), "the background run did not end"
    with Librarian(root, cfg) as lib:
        assert not lib.compose(TASK, budget=2000, as_of=1_767_225_600).degraded


def test_a_complete_index_is_not_listed_again_by_a_new_process(tmp_path: Path) -> None:
    """The stamp of a complete index lets a fresh session skip the listing."""
    root = make_repo(tmp_path / "r", FILES)
    with Librarian(root) as lib:
        lib.compose(TASK, budget=1000)
    calls: list[str] = []
    with Librarian(root) as lib:
        original = lib._ws.index

        def spy(**kw: object) -> object:
            calls.append("index")
            return original(**kw)  # type: ignore[arg-type]

        lib._ws.index = spy  # type: ignore[method-assign]
        lib.compose(TASK, budget=1000)
        assert calls == []
        (root / "pkg" / "filler_03.py").write_text(_filler(3) + "X = 1\n")
        lib.compose(TASK, budget=1000)
        assert calls == ["index"]


def _parsed(root: Path) -> set[str]:
    with sqlite3.connect(root / ".librarian" / "index.db") as conn:
        rows = conn.execute("SELECT path FROM files WHERE stage = 2").fetchall()
    return {str(r[0]) for r in rows}


def test_a_given_diff_chooses_its_files_and_their_users_first(tmp_path: Path) -> None:
    caller = (
        "from pkg.billing.invoice import round_tax\n\n\ndef monthly(v):\n    return round_tax(v)\n"
    )
    files = {**FILES, "pkg/zz_reports/monthly.py": caller}
    diff = (
        "diff --git a/pkg/billing/invoice.py b/pkg/billing/invoice.py\n"
        "--- a/pkg/billing/invoice.py\n"
        "+++ b/pkg/billing/invoice.py\n"
        "@@ -8,2 +8,2 @@ def invoice_total(self, lines):\n"
        " def round_tax(amount):\n"
        "-    return round(amount * 1.2, 2)\n"
        "+    return round(amount * 1.25, 2)\n"
    )
    task = "apply the reviewer's suggestion"  # no word of it names a file
    # without the diff, nothing in the task chooses: path order, and the user is not
    # among the first files (this clone first: a parse cache shared by clones would
    # otherwise count the other clone's parses)
    plain = make_repo(tmp_path / "plain", files)
    with Librarian(plain, SMALL) as lib:
        lib.compose(task, budget=2000, as_of=1_767_225_600)
    assert "pkg/zz_reports/monthly.py" not in _parsed(plain)
    root = make_repo(tmp_path / "r", files)
    with Librarian(root, SMALL) as lib:
        lib.compose(task, budget=2000, diff_text=diff, as_of=1_767_225_600)
    parsed = _parsed(root)
    assert {"pkg/billing/invoice.py", "pkg/zz_reports/monthly.py"} <= parsed
    assert len(parsed) < len(files)
