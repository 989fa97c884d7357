"""Golden output of compiling the seed's three presets (tree, stratum, policy, decisions).

Regenerate after an intended change with
``LIBRARIAN_UPDATE_GOLDEN=1 pytest tests/techniques/lcl/test_golden.py`` and review
the diff: it is what the execution engine will walk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codelibrarian.techniques import lcl
from codelibrarian.techniques.render import render_tree

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("LIBRARIAN_UPDATE_GOLDEN") == "1"
PRESETS = ("preset_quick_debug", "preset_security_review", "preset_zero_knowledge_bootstrap")
#: facts for the decided variant: an auth change in a codebase without tests
FACTS = {
    "codebase": {"has_tests": False, "languages": ["python"], "file_count": 40},
    "change": {"present": True, "touches_auth": True, "touches_input": False},
    "intent": {"text": "login sometimes fails", "keywords": ["login", "sometimes", "fails"]},
}


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; see the module docstring"


@pytest.mark.parametrize("name", PRESETS)
def test_golden_preset(name: str) -> None:
    compiled = lcl.compile(name)
    _check(f"{name}.json", json.dumps(compiled.to_dict(), indent=2, ensure_ascii=False) + "\n")
    decided = lcl.compile(name, facts=FACTS)
    _check(f"{name}.facts.txt", render_tree(decided.root) + "\n")
