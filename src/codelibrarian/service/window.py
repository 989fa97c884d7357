"""Sliding windows: the goal, a repository map and the agent's recent past under one
budget (:class:`~codelibrarian.packs.window.WindowComposer` decides what fits).

Every text passes a secret gate first: the goal and the records are the caller's
text, shown to a model again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gate import SecretGate
from ..packs.window import ComposedWindow, SaopEnvelope, WindowBudget, WindowComposer
from ..tokens import get_tokenizer
from .inspect import gated_map
from .workspace import WorkspaceSession


def gated_window(
    gate: SecretGate,
    goal: str,
    map_text: str,
    envelopes: Sequence[SaopEnvelope],
    *,
    budget: WindowBudget,
    max_recent: int,
    model: str | None,
) -> ComposedWindow:
    """The window of ``goal``, ``map_text`` and the newest ``envelopes`` that fit,
    every text cleaned by ``gate``."""
    goal, map_text = gate.clean_many((goal, map_text), surface="window")
    cleaned = [
        SaopEnvelope(e.id, gate.clean(e.content, surface="window", kind="envelope"), e.timestamp_ms)
        for e in envelopes
    ]
    return WindowComposer(budget, max_recent, get_tokenizer(model)).compose(goal, map_text, cleaned)


def workspace_window(
    ws: WorkspaceSession,
    goal: str,
    *,
    envelopes: Sequence[SaopEnvelope],
    map_text: str | None,
    budget: WindowBudget,
    max_recent: int,
    model: str | None,
    refresh: bool,
) -> ComposedWindow:
    """A window whose map defaults to the workspace's ranked repository map, rendered
    in ``min(map_budget, total)`` tokens (the index is built when missing); texts pass
    the workspace's own gate (its configured rules too)."""
    model = model or ws.config.compose.model
    if map_text is None:
        size = min(budget.map_budget, budget.total_budget)
        if size > 0:
            ws.ensure_index(refresh=refresh)
            map_text = gated_map(ws, ws.open_store(), get_tokenizer(model), size)
        else:
            map_text = ""
    return gated_window(
        ws.gate, goal, map_text, envelopes, budget=budget, max_recent=max_recent, model=model
    )
