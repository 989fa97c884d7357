"""What a diligent agent (or a local model) answers for each step of a bug hunt.

``answer(primitive, schema)`` is a value that conforms to the step's output
schema (the schema's own example, filled in) with the fields that matter set to
what the planted bug calls for: ``add`` in ``calc/ops.py`` subtracts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codelibrarian.providers.fake import example_for_schema

#: the repository with the planted bug: ``add`` was right, a later commit broke it
GOOD_OPS = (
    '"""Arithmetic helpers."""\n\n\n'
    "def add(a, b):\n"
    '    """Return the sum of a and b."""\n'
    "    return a + b\n\n\n"
    "def mul(a, b):\n"
    "    return a * b\n"
)
BUGGY_OPS = GOOD_OPS.replace("return a + b", "return a - b")
BUG_TASK = "add returns the wrong result: add(2, 3) gives -1 instead of 5"

_FIELDS: dict[str, dict[str, Any]] = {
    "tp_min_repro": {
        "reproducible": True,
        "deterministic": True,
        "command": "python -c 'from calc.ops import add; print(add(2, 3))'",
        "paths": ["calc/ops.py"],
        "conclusion": "add(2, 3) prints -1 every time",
    },
    "tp_hypothesis": {
        "top": "h1",
        "confidence": 900,
        "conclusion": "add subtracts its second argument",
    },
    "tp_bisect": {"converged": False, "candidates_remaining": 2, "conclusion": "not bisected"},
    "tp_root_cause": {
        "cause": "calc.ops.add returns a - b",
        "mechanism": ["add computes a - b", "so add(2, 3) is -1"],
        "confidence": 950,
        "paths": ["calc/ops.py"],
        "fix_direction": "return a + b",
        "conclusion": "the subtraction in add",
    },
    "tp_implement": {
        "completed": True,
        "changed_files": ["calc/ops.py"],
        "summary": "add returns a + b again",
        "paths": ["calc/ops.py"],
    },
    "tp_verify_plan": {"passed": True, "failures": 0, "conclusion": "tests/test_ops.py passes"},
}


def answer(primitive: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    value = example_for_schema(schema)
    assert isinstance(value, dict), schema
    fields = _FIELDS.get(primitive, {})
    value.update({k: v for k, v in fields.items() if k in value})
    if primitive == "tp_hypothesis" and value.get("hypotheses"):
        value["hypotheses"][0].update(
            {"id": "h1", "statement": "add subtracts b", "confidence": 900}
        )
    return value
