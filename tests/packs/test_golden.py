"""Golden files for a pack and a handoff (fixed as_of, secret and run id).

Regenerate after an intended change with
``LIBRARIAN_UPDATE_GOLDEN=1 pytest tests/packs/test_golden.py`` and review the
diff: every line of it is a change agents will see.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from codelibrarian.api import Librarian
from tests.packs.conftest import CRITERIA, TASK

GOLDEN = Path(__file__).parent / "golden"
AS_OF = 1_800_000_000
UPDATE = os.environ.get("LIBRARIAN_UPDATE_GOLDEN") == "1"


def _check(name: str, text: str) -> None:
    """Compare a compact or indented JSON file with its indented golden twin."""
    pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    path = GOLDEN / name
    if UPDATE:
        path.write_text(pretty, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert pretty == expected, f"{name} changed; see the module docstring to regenerate"


def test_golden_pack_and_handoff(repo: Path) -> None:
    with Librarian(repo) as lib:
        pack = lib.pack(
            "Implementer",
            TASK,
            acceptance=CRITERIA,
            constraints=["no new dependencies"],
            run_id="golden-run",
            task_id="T-42",
            as_of=AS_OF,
        )
        handoff = lib.handoff(
            "golden-run",
            "Implementer",
            "Verifier",
            notes=["post() sends the body through _send"],
            risks=["a retried POST may be sent twice"],
            evidence=["pytest -q: 1 passed"],
            as_of=AS_OF + 60,
        )
    text = pack.path.read_text(encoding="utf-8")
    # the file on disk is the compact form of the golden document
    golden = json.loads((GOLDEN / "implementer.lcp.json").read_text(encoding="utf-8"))
    if not UPDATE:
        assert text == json.dumps(golden, ensure_ascii=False, separators=(",", ":")) + "\n"
    _check("implementer.lcp.json", text)
    _check("implementer-to-verifier.handoff.json", handoff.path.read_text(encoding="utf-8"))
    journal = (repo / ".librarian/runs/golden-run/journal.md").read_text(encoding="utf-8")
    if UPDATE:
        (GOLDEN / "journal.md").write_text(journal, encoding="utf-8")
    assert journal == (GOLDEN / "journal.md").read_text(encoding="utf-8")
