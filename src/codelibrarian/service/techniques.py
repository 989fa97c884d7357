"""Workspace-side orchestration for technique workflows: facts and presets.

The technique library itself (``techniques/``) is pure; what needs the workspace
— the index and the current change for facts, ``.librarian/presets/`` and the
config for presets — is gathered here and handed to it.
"""

from __future__ import annotations

from ..index.facts import compute_facts
from ..techniques.facts import Facts
from ..workspace.presets import PresetStore
from .workspace import WorkspaceSession

__all__ = ["preset_store", "workspace_facts"]


def workspace_facts(
    ws: WorkspaceSession,
    task: str = "",
    *,
    base: str | None = None,
    diff_text: str | None = None,
    refresh: bool = True,
) -> Facts:
    """Codebase, change and intent facts of the workspace (index built or refreshed first)."""
    ws.ensure_index(refresh=refresh)
    trigger = ws.trigger(
        task or "facts", as_of=0, base=base, diff_text=diff_text, refreshed=refresh
    )
    return compute_facts(
        ws.open_store(), ws.changes(trigger), task=task, root=ws.root, is_git=ws.is_git()
    )


def preset_store(ws: WorkspaceSession) -> PresetStore:
    return PresetStore(ws.root, ws.config)
