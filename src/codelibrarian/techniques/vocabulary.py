"""The closed vocabularies every technique, pattern and composition draws from.

Declared once here; the loader and the checker refuse anything outside them,
and planning (selection by action/domain/scope) scores against the same words.

* **archetypes** — the seed's nine composition archetypes (P5);
* **actions** — what a task asks to *do* (the verb of an intent);
* **domains** — what part of a system it is about; the first ten are the seed's
  codebase features (P6: auth, api, database, ui, testing, config,
  observability, integrations, performance, async), then a few cross-cutting ones;
* **scopes** — how wide the work is, the scope classes of Local Context Packs
  (``packs.budgets``: Tiny, Small, Medium, Large);
* **agent roles** — the seven LCP roles a step's context pack is built for;
* **executors** — who does a primitive's work.

``AGENT_ROLES`` and ``SCOPES`` mirror ``packs.lcp.AGENTS`` / ``SCOPE_CLASSES``
(importing ``packs`` here would load the pack machinery for a table of names;
a test keeps the two in step).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "ACTIONS",
    "AGENT_ROLES",
    "ARCHETYPES",
    "DOMAINS",
    "EXECUTORS",
    "RELATIONSHIP_KINDS",
    "SCOPES",
    "Executor",
    "RelationshipKind",
]

ARCHETYPES: tuple[str, ...] = (
    "investigation",  # understanding why something happened
    "verification",  # validating something is correct or safe
    "construction",  # building something new
    "transformation",  # changing existing code safely
    "analysis",  # understanding without changing
    "coordination",  # multi-agent or multi-step orchestration
    "recovery",  # fixing or healing something broken
    "optimization",  # improving performance or quality
    "evolution",  # meta-level self-improvement
)

ACTIONS: tuple[str, ...] = (
    "investigate",
    "debug",
    "verify",
    "review",
    "build",
    "refactor",
    "migrate",
    "analyze",
    "audit",
    "onboard",
    "design",
    "respond",
    "update",
    "optimize",
    "test",
    "document",
    "coordinate",
    "improve",
    "release",
)

DOMAINS: tuple[str, ...] = (
    # the seed's ten codebase features (P6)
    "auth",
    "api",
    "database",
    "ui",
    "testing",
    "config",
    "observability",
    "integrations",
    "performance",
    "async",
    # cross-cutting
    "general",
    "security",
    "dependencies",
    "architecture",
    "docs",
    "release",
    "accessibility",
    "process",
)

SCOPES: tuple[str, ...] = ("Tiny", "Small", "Medium", "Large")

AGENT_ROLES: tuple[str, ...] = (
    "Planner",
    "Thinker",
    "Implementer",
    "Verifier",
    "Reviewer",
    "Critical",
    "Supervisor",
)

Executor = Literal["builtin", "agent", "llm"]
#: builtin: runs over the index, no model; agent: the calling agent does the thinking;
#: llm: a provider model matched by capability may do it (the agent when none is available)
EXECUTORS: tuple[Executor, ...] = get_args(Executor)

RelationshipKind = Literal[
    "precedes", "follows", "requires", "enables", "inhibits", "amplifies", "substitutes"
]
RELATIONSHIP_KINDS: tuple[RelationshipKind, ...] = get_args(RelationshipKind)
