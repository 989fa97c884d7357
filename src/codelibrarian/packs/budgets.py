"""Pack budgets: scope classes times model-capability multipliers.

=========  ===========  ===========================================
scope      base tokens  typical change
=========  ===========  ===========================================
Tiny       1,500        at most 2 files and 80 changed lines
Small      3,000        3 to 6 files
Medium     6,000        several modules (top-level folders)
Large      12,000       cross-cutting
=========  ===========  ===========================================

The base is multiplied by the capability tag's multiplier (per-mille, integer
arithmetic, rounded down):

=================  ==========  ============================================
capability         multiplier  why
=================  ==========  ============================================
cheap_batch        500         summarizers: cheap, many calls, small input
fast_code          750         fast coding models: short, precise context
reasoning_high     1000        the reference tier
reasoning_ultra    1500        the richest tier gets fuller design snapshots
long_context       2000        long-context models can take the most
=================  ==========  ============================================

so ``fast_code < reasoning_high < reasoning_ultra`` holds for every scope. When
no scope is given it is classified from the current change (:func:`classify_scope`)
and, without a change, taken from the agent's role (:data:`ROLE_SCOPE`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from ..errors import UsageError
from ..workspace.git import FileDiff
from .lcp import AGENTS, CAPABILITIES, SCOPE_CLASSES

__all__ = [
    "CAPABILITY_MULTIPLIERS",
    "DEFAULT_CAPABILITY",
    "ROLE_SCOPE",
    "SCOPE_BUDGETS",
    "budget_for",
    "check_agent",
    "check_capability",
    "check_scope",
    "classify_scope",
]

SCOPE_BUDGETS: Mapping[str, int] = {"Tiny": 1500, "Small": 3000, "Medium": 6000, "Large": 12000}
CAPABILITY_MULTIPLIERS: Mapping[str, int] = {
    "cheap_batch": 500,
    "fast_code": 750,
    "reasoning_high": 1000,
    "reasoning_ultra": 1500,
    "long_context": 2000,
}
DEFAULT_CAPABILITY = "reasoning_high"

#: scope used when there is no change to classify
ROLE_SCOPE: Mapping[str, str] = {
    "Planner": "Tiny",
    "Thinker": "Medium",
    "Implementer": "Small",
    "Verifier": "Small",
    "Reviewer": "Small",
    "Critical": "Medium",
    "Supervisor": "Tiny",
}

_TINY_FILES, _TINY_LINES, _SMALL_FILES = 2, 80, 6


def _check(value: str, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise UsageError(f"unknown {what} {value!r}", hint=f"Use one of: {', '.join(allowed)}.")
    return value


def check_agent(agent: str) -> str:
    """``agent`` if it is one of the seven roles, else a :class:`UsageError`."""
    return _check(agent, AGENTS, "agent")


def check_scope(scope: str) -> str:
    return _check(scope, SCOPE_CLASSES, "scope class")


def check_capability(capability: str) -> str:
    return _check(capability, CAPABILITIES, "model capability")


def budget_for(scope: str, capability: str) -> int:
    """Token budget of a pack: the scope's base times the capability's multiplier."""
    base = SCOPE_BUDGETS[check_scope(scope)]
    return base * CAPABILITY_MULTIPLIERS[check_capability(capability)] // 1000


def _module(path: str) -> str:
    parts = path.split("/")
    if parts[0] in ("src", "lib", "pkg", "packages", "app") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else posixpath.dirname(path)


def classify_scope(changes: Sequence[FileDiff]) -> str | None:
    """Scope class of a change, or None without one.

    Tiny: at most 2 files and 80 changed lines; Small: at most 6 files within one
    module; Medium: more files within at most 3 modules; Large: anything wider.
    A module is the first folder (the first two under ``src/``, ``lib/``, ...).
    """
    paths = sorted({d.path for d in changes})
    if not paths:
        return None
    lines = sum(1 for d in changes for h in d.hunks for ln in h.lines if ln[:1] in "+-")
    modules = {_module(p) for p in paths}
    if len(paths) <= _TINY_FILES and lines <= _TINY_LINES:
        return "Tiny"
    if len(paths) <= _SMALL_FILES and len(modules) <= 1:
        return "Small"
    if len(modules) <= 3:
        return "Medium"
    return "Large"
