"""Context packs: Local Context Packs (LCP), handoffs, runs, and the sliding WindowComposer.

Local Context Packs (seed 003; see docs/packs.md): :mod:`.lcp` (schema),
:mod:`.budgets` (scope classes x capability multipliers), :mod:`.ladder` (the
context ladder over the composer's lanes), :mod:`.anchors` (knowledge
navigator), :mod:`.bloat` (guards and computed checks), :mod:`.runs` (run
store and ``resources://`` resolver), :mod:`.handoff`. The WindowComposer
(seed 002) is in :mod:`.window`.

Names load on first use: importing :mod:`.window` does not load the LCP schema
models or the run store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .budgets import CAPABILITY_MULTIPLIERS, SCOPE_BUDGETS, budget_for, classify_scope
    from .handoff import DiffRef, HandoffPackage, parse_handoff
    from .lcp import (
        AGENTS,
        CAPABILITIES,
        SCOPE_CLASSES,
        Anchor,
        BloatChecks,
        LadderRecord,
        LocalContextPack,
        MicroSummary,
        RungRecord,
        parse_pack,
        schema_text,
        write_schemas,
    )
    from .runs import RunStore, resolve_resource
    from .window import (
        ComposedWindow,
        ComposedWindowSlot,
        SaopEnvelope,
        WindowBudget,
        WindowComposer,
    )

__all__ = [
    "AGENTS",
    "CAPABILITIES",
    "CAPABILITY_MULTIPLIERS",
    "SCOPE_BUDGETS",
    "SCOPE_CLASSES",
    "Anchor",
    "BloatChecks",
    "ComposedWindow",
    "ComposedWindowSlot",
    "DiffRef",
    "HandoffPackage",
    "LadderRecord",
    "LocalContextPack",
    "MicroSummary",
    "RunStore",
    "RungRecord",
    "SaopEnvelope",
    "WindowBudget",
    "WindowComposer",
    "budget_for",
    "classify_scope",
    "parse_handoff",
    "parse_pack",
    "resolve_resource",
    "schema_text",
    "write_schemas",
]

#: name -> submodule; imported on first use, so importing one submodule stays cheap
_EXPORTS: dict[str, str] = {
    "AGENTS": "lcp",
    "Anchor": "lcp",
    "BloatChecks": "lcp",
    "CAPABILITIES": "lcp",
    "CAPABILITY_MULTIPLIERS": "budgets",
    "ComposedWindow": "window",
    "ComposedWindowSlot": "window",
    "DiffRef": "handoff",
    "HandoffPackage": "handoff",
    "LadderRecord": "lcp",
    "LocalContextPack": "lcp",
    "MicroSummary": "lcp",
    "RunStore": "runs",
    "RungRecord": "lcp",
    "SCOPE_BUDGETS": "budgets",
    "SCOPE_CLASSES": "lcp",
    "SaopEnvelope": "window",
    "WindowBudget": "window",
    "WindowComposer": "window",
    "budget_for": "budgets",
    "classify_scope": "budgets",
    "parse_handoff": "handoff",
    "parse_pack": "lcp",
    "resolve_resource": "runs",
    "schema_text": "lcp",
    "write_schemas": "lcp",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
