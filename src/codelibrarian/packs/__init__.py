"""Context packs: Local Context Packs (LCP), handoffs, runs, and the sliding WindowComposer.

Local Context Packs (seed 003; see docs/packs.md): :mod:`.lcp` (schema),
:mod:`.budgets` (scope classes x capability multipliers), :mod:`.ladder` (the
context ladder over the composer's lanes), :mod:`.anchors` (knowledge
navigator), :mod:`.bloat` (guards and computed checks), :mod:`.runs` (run
store and ``resources://`` resolver), :mod:`.handoff`. The WindowComposer
(seed 002) is in :mod:`.window`.
"""

from __future__ import annotations

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
