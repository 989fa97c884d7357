"""Edits of a composition tree, addressed by step references.

A *reference* is a primitive id (every step of that primitive, the first one for
positions) or an explicit step id. A *path* is the tuple of child indices from
the root. Every function returns a new tree; nothing is mutated.

A *residual* edit (its condition is unknown until run time) wraps what it
changes in a ``conditional`` node — ``add X when P`` inserts
``conditional[P](X)``, ``remove X when P`` leaves ``conditional[not P](X)``,
``replace X by Y when P`` leaves ``conditional[P](Y, X)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..diagnostics import Loc
from ..predicates import Predicate
from ..tree import Node, OperatorNode, Step, freeze

__all__ = [
    "Path",
    "conditional",
    "find",
    "get",
    "insert",
    "matches",
    "replace_at",
    "sibling_group",
]

Path = tuple[int, ...]


def matches(step: Step, ref: str) -> bool:
    return step.primitive == ref or (step.explicit_id and step.step_id == ref)


def find(root: Node, ref: str) -> list[Path]:
    """Paths of every step matching ``ref``, in preorder."""
    out: list[Path] = []
    stack: list[tuple[Node, Path]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Step):
            if matches(node, ref):
                out.append(path)
            continue
        for i in range(len(node.children) - 1, -1, -1):
            stack.append((node.children[i], (*path, i)))
    return out


def get(root: Node, path: Path) -> Node:
    node = root
    for i in path:
        assert isinstance(node, OperatorNode)
        node = node.children[i]
    return node


def replace_at(root: Node, path: Path, new: Node | None) -> Node | None:
    """``root`` with the node at ``path`` replaced (None removes it; emptied operators stay
    for :func:`~..tree.normalize` to drop with a warning)."""
    if not path:
        return new
    assert isinstance(root, OperatorNode)
    i = path[0]
    child = replace_at(root.children[i], path[1:], new)
    kids = list(root.children)
    if child is None:
        del kids[i]
    else:
        kids[i] = child
    return replace(root, children=tuple(kids))


def conditional(
    when: Predicate, then: Node, otherwise: Node | None = None, *, loc: Loc
) -> OperatorNode:
    kids = (then,) if otherwise is None else (then, otherwise)
    return OperatorNode("conditional", freeze({"when": when}), kids, loc=loc)


def insert(root: Node, node: Node, position: str) -> tuple[Node, str | None]:
    """``(new root, error)`` after inserting ``node`` at ``position``."""
    if position in ("end", "start"):
        if isinstance(root, OperatorNode) and root.operator == "sequence":
            kids = [*root.children, node] if position == "end" else [node, *root.children]
            return replace(root, children=tuple(kids)), None
        kids2 = (root, node) if position == "end" else (node, root)
        return OperatorNode("sequence", freeze({}), kids2, loc=node.loc), None
    where, _, ref = position.partition(":")
    if where not in ("before", "after") or not ref:
        return root, f"position {position!r} must be end, start, before:<step> or after:<step>"
    paths = find(root, ref)
    if not paths:
        return root, f"position {position!r} names a step that is not in the composition"
    path = paths[0]
    if path:
        parent = get(root, path[:-1])
        assert isinstance(parent, OperatorNode)
        if parent.operator == "sequence":
            i = path[-1] + (1 if where == "after" else 0)
            kids3 = list(parent.children)
            kids3.insert(i, node)
            new = replace_at(root, path[:-1], replace(parent, children=tuple(kids3)))
            assert new is not None
            return new, None
    target = get(root, path)
    pair = (target, node) if where == "after" else (node, target)
    seq = OperatorNode("sequence", freeze({}), pair, loc=node.loc)
    new = replace_at(root, path, seq)
    assert new is not None
    return new, None


def _lift(root: Node, path: Path) -> Path:
    """See through a one-child conditional around a step (a residual addition)."""
    while path:
        parent = get(root, path[:-1])
        if (
            isinstance(parent, OperatorNode)
            and parent.operator == "conditional"
            and len(parent.children) == 1
        ):
            path = path[:-1]
            continue
        break
    return path


def sibling_group(root: Node, refs: Sequence[str]) -> tuple[Path | None, list[int], str | None]:
    """``(parent path, child indices, error)`` for the first steps matching ``refs``;
    the parent path is None when the one input is the root itself.

    They must be children of one operator (a one-child conditional around a step
    counts as the step) and, under a sequence, adjacent.
    """
    paths: list[Path] = []
    for ref in refs:
        found = find(root, ref)
        if not found:
            return (), [], f"{ref!r} is not a step of the composition"
        paths.append(_lift(root, found[0]))
    if any(not p for p in paths):
        if len(paths) > 1:
            return (), [], "an input is the whole composition; wrap it alone"
        return None, [], None
    parents = {p[:-1] for p in paths}
    if len(parents) != 1:
        return (), [], "the inputs are not siblings (they sit under different operators)"
    parent_path = paths[0][:-1]
    idx = sorted({p[-1] for p in paths})
    if len(idx) != len(paths):
        return (), [], "an input is named twice"
    parent = get(root, parent_path)
    assert isinstance(parent, OperatorNode)
    if parent.operator == "sequence" and idx != list(range(idx[0], idx[0] + len(idx))):
        return (), [], "the inputs are not adjacent in their sequence"
    return parent_path, idx, None
