"""The test library (builtin steps plus the test plugin's) and its executors.

Kept apart from ``conftest`` so a worker process (``crash_worker``) can load it
without importing pytest.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

from codelibrarian.execution.builtins import builtin_executors
from codelibrarian.techniques.registry import OPERATOR_GROUP, PRIMITIVE_GROUP, Library, load_library

from . import plugin_steps

BUILTIN_P = EntryPoint(
    "builtin", "codelibrarian.techniques.data:builtin_primitives", PRIMITIVE_GROUP
)
BUILTIN_O = EntryPoint(
    "builtin", "codelibrarian.techniques.operators:builtin_operators", OPERATOR_GROUP
)
TEST_P = EntryPoint("steps", "tests.execution.plugin_steps:primitives", PRIMITIVE_GROUP)


def make_library() -> Library:
    return load_library(
        primitive_entry_points=[BUILTIN_P, TEST_P], operator_entry_points=[BUILTIN_O]
    )


LIBRARY = make_library()


def executors() -> dict[str, Any]:
    return {**builtin_executors(), **plugin_steps.executors()}


def compiled(tree: Any, cid: str = "test_flow") -> Any:
    """A compiled composition of a hand-built tree (steps of the test library)."""
    from codelibrarian.techniques.composition import Composition
    from codelibrarian.techniques.lcl.compile import compile_composition

    return compile_composition(Composition(cid, cid, cid, tree), library=LIBRARY)
