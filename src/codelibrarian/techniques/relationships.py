"""Checks of relationship edges against a composition tree.

========== =============================================================================
kind        checked
========== =============================================================================
requires    ``A requires B``: A present and B absent is an **error**; B only present
            under a condition (or as a fallback alternative) is a warning
inhibits    both present is flagged (a warning naming both steps)
precedes    both present and B runs before A is an **error** (``follows`` is the mirror)
substitutes both present is a warning, unless they are alternatives of one fallback or
            voters of one quorum/consensus — which is what substitutes are for
enables,    informational: recorded, shown, used by planning; not checked
amplifies
========== =============================================================================

A step is *certainly* present when nothing between it and the root can skip it
(no conditional, no gate, no fallback alternative after the first); otherwise it
is *maybe* present. Cycles among ``precedes``/``follows`` edges are
errors when the library is loaded (:func:`find_cycle`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .composition import Relationship
from .diagnostics import Diagnostic, Loc
from .tree import Node, OperatorNode, Step

__all__ = ["Presence", "check_relationships", "find_cycle", "presence"]

Presence = Mapping[str, str]  # primitive -> "certain" | "maybe"


def _walk(root: Node) -> list[tuple[Step, tuple[tuple[OperatorNode, int], ...]]]:
    """Every step in preorder with its ancestors (node, child index)."""
    out: list[tuple[Step, tuple[tuple[OperatorNode, int], ...]]] = []
    stack: list[tuple[Node, tuple[tuple[OperatorNode, int], ...]]] = [(root, ())]
    while stack:
        node, anc = stack.pop()
        if isinstance(node, Step):
            out.append((node, anc))
            continue
        for i in range(len(node.children) - 1, -1, -1):
            stack.append((node.children[i], (*anc, (node, i))))
    return out


def _skippable(anc: Sequence[tuple[OperatorNode, int]]) -> bool:
    for node, i in anc:
        if node.operator in ("conditional", "gate"):
            return True
        if node.operator == "fallback" and i > 0:
            return True
    return False


def presence(root: Node) -> dict[str, str]:
    out: dict[str, str] = {}
    for step, anc in _walk(root):
        state = "maybe" if _skippable(anc) else "certain"
        if out.get(step.primitive) != "certain":
            out[step.primitive] = state
    return out


def _alternatives(root: Node, a: str, b: str) -> bool:
    """Are ``a`` and ``b`` children of one fallback, quorum or consensus?"""
    for step_a, anc_a in _walk(root):
        if step_a.primitive != a:
            continue
        for step_b, anc_b in _walk(root):
            if step_b.primitive != b:
                continue
            shared = {id(n) for n, _ in anc_a} & {id(n) for n, _ in anc_b}
            for node, _ in anc_a:
                if id(node) in shared and node.operator in ("fallback", "quorum", "consensus"):
                    return True
    return False


def _first_index(order: Sequence[Step], primitive: str) -> int:
    return next((i for i, s in enumerate(order) if s.primitive == primitive), -1)


def _parallel_siblings(root: Node, a: str, b: str) -> bool:
    walked = _walk(root)
    for step_a, anc_a in walked:
        if step_a.primitive != a:
            continue
        for step_b, anc_b in walked:
            if step_b.primitive != b:
                continue
            for (na, ia), (nb, ib) in zip(anc_a, anc_b, strict=False):
                if na is not nb:
                    break
                if ia != ib:
                    if na.operator in ("parallel", "quorum", "consensus"):
                        return True
                    break
    return False


def check_relationships(
    root: Node, relationships: Iterable[Relationship], *, where: Loc | None = None
) -> list[Diagnostic]:
    """Diagnostics for every declared edge that the tree violates (module docstring)."""
    present = presence(root)
    order = [s for s, _ in _walk(root)]
    diags: list[Diagnostic] = []
    for rel in sorted(relationships, key=lambda r: (r.kind, r.source, r.target)):
        loc = rel.loc if rel.loc.source or where is None else where
        a, b = rel.source, rel.target
        if a not in present:
            continue
        why = f" ({rel.rationale})" if rel.rationale else ""
        if rel.kind == "requires":
            if b not in present:
                diags.append(
                    Diagnostic(
                        "lcl_requires_missing",
                        f"{a} requires {b}, which is not in the composition{why}",
                        loc,
                        (b,),
                    )
                )
            elif present[b] == "maybe" and present[a] == "certain":
                diags.append(
                    Diagnostic(
                        "lcl_requires_conditional",
                        f"{a} requires {b}, which may be skipped (it is under a condition)",
                        loc,
                        severity="warning",
                    )
                )
        elif b not in present:
            continue
        elif rel.kind == "inhibits":
            diags.append(
                Diagnostic(
                    "lcl_inhibits_pair",
                    f"{a} inhibits {b} and both are in the composition{why}",
                    loc,
                    severity="warning",
                )
            )
        elif rel.kind in ("precedes", "follows"):
            first, then = (a, b) if rel.kind == "precedes" else (b, a)
            if _first_index(order, then) < _first_index(order, first) and not _parallel_siblings(
                root, first, then
            ):
                diags.append(
                    Diagnostic(
                        "lcl_order_violated",
                        f"{first} must run before {then}, but {then} comes first{why}",
                        loc,
                    )
                )
        elif rel.kind == "substitutes" and not _alternatives(root, a, b):
            diags.append(
                Diagnostic(
                    "lcl_substitutes_pair",
                    f"{a} and {b} substitute for each other; using both is redundant "
                    "unless they are fallback alternatives or voters",
                    loc,
                    severity="warning",
                )
            )
    return diags


def find_cycle(relationships: Iterable[Relationship]) -> tuple[str, ...] | None:
    """A cycle among ordering edges (``precedes``/``follows``), or None."""
    graph: dict[str, set[str]] = {}
    for rel in relationships:
        if rel.kind == "precedes":
            graph.setdefault(rel.source, set()).add(rel.target)
        elif rel.kind == "follows":
            graph.setdefault(rel.target, set()).add(rel.source)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> tuple[str, ...] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return (*path[path.index(m) :], m)
            if m not in state:
                found = visit(m)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None
