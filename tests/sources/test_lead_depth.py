"""Depth in the lead file: when one file clearly leads, more of its spans are offered."""

from __future__ import annotations

from pathlib import Path

from codelibrarian.api import Librarian
from codelibrarian.query.locate import SIGNALS
from codelibrarian.sources.retrieved import LEAD_SPANS, SMALL_BUDGET
from codelibrarian.tokens import get_tokenizer
from tests.helpers import make_repo

AS_OF = 1_800_000_000
#: the line only the definition the task does not name holds
QUIET = "total = total * 77"


def _repo(tmp_path: Path) -> Path:
    """``ledger.py``: 36 definitions the task's words name and, last, one they do not
    (the one a change would touch); ``report.py`` names the words once."""
    steps = "".join(
        f"def ledger_balance_{j}(value):\n"
        f"    total = value + {j}\n"
        "    # ledger balance rounding\n"
        "    return total\n\n\n"
        for j in range(36)
    )
    quiet = f"def settle(value):\n    total = value\n    {QUIET}\n    return total\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/ledger.py": steps + quiet,
        "pkg/report.py": (
            "def summary(rows):\n    # a ledger summary\n    return len(rows)\n\n\n"
            "def header(title):\n    return title.upper()\n"
        ),
    }
    return make_repo(tmp_path / "r", files)


def test_a_leading_file_offers_its_weaker_definitions_too(
    tmp_path: Path,
) -> None:
    """At 8,000 tokens the ledger leads the report by far: its 37 definitions are all
    offered, so the one the task's words miss is shown, and the explanation's
    ``lead_depth`` stage says why. Switched off (``signals_off={"lead_depth"}``), with
    a change, or below 4,000 tokens, only the usual 24 spans of each file are offered
    and that definition is not shown."""
    repo = _repo(tmp_path)
    task = "Ledger balance rounding is off by one"

    def compose(
        ablate: str, budget: int = 8000, diff: str | None = None
    ) -> tuple[str, dict[str, str]]:
        with Librarian(repo) as lib:
            lib.index()
            result = lib.compose(
                task,
                budget=budget,
                diff_text=diff,
                as_of=AS_OF,
                record=False,
                signals_off={ablate} - {""},
            )
        assert get_tokenizer("gpt-4o").count(result.text) <= budget
        return result.text, dict(result.locate)

    text, stages = compose("")
    assert "of its spans offered" in stages["lead_depth"]
    assert f"up to {LEAD_SPANS}" in stages["lead_depth"]
    assert QUIET in text
    assert compose("") == (text, stages)  # deterministic

    text, stages = compose("lead_depth")
    assert "lead_depth" not in stages
    assert QUIET not in text
    assert "lead_depth" in SIGNALS

    text, stages = compose("", budget=SMALL_BUDGET - 1)
    assert "lead_depth" not in stages

    change = (
        "diff --git a/pkg/report.py b/pkg/report.py\n"
        "--- a/pkg/report.py\n+++ b/pkg/report.py\n"
        "@@ -6,2 +6,2 @@\n def header(title):\n-    return title.upper()\n"
        "+    return title.title()\n"
    )
    text, stages = compose("", diff=change)
    assert "lead_depth" not in stages
