"""The composition tree: immutable nodes, stable ids, normalization.

A composition's structure is a tree whose nodes are either

* a :class:`Step` — one run of a primitive: its ``step_id`` (unique in the
  composition), the ``primitive`` id and bound ``params`` (static input values); or
* an :class:`OperatorNode` — an operator id, its validated ``params`` (defaults
  applied; predicates as :class:`Predicate` values) and ordered ``children``.

**Ids are derived, never random.** :func:`assign_ids` walks the tree in preorder:
a step's id is its primitive id the first time that primitive appears and
``<primitive>__<n>`` for its n-th appearance (unless the author gave an explicit
id); an operator node's id is ``<operator>#<n>`` (its n-th use in preorder). The
same tree always gets the same ids; editing one branch renumbers only repeats.

Everything is frozen: params are read-only mappings whose lists are tuples.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .diagnostics import Diagnostic, Loc
from .predicates import Predicate

__all__ = [
    "Node",
    "OperatorNode",
    "Step",
    "assign_ids",
    "freeze",
    "normalize",
    "preorder",
    "steps_of",
    "thaw",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def freeze(value: Any) -> Any:
    """A deeply read-only copy: mappings become sorted read-only mappings, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(value[k]) for k in sorted(value)})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Plain JSON-ready data (predicates as their text)."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    if isinstance(value, Predicate):
        return value.text
    return value


@dataclass(frozen=True, slots=True)
class Step:
    """One run of a primitive (see the module docstring)."""

    primitive: str
    params: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    step_id: str = ""
    explicit_id: bool = False
    loc: Loc = field(default_factory=Loc, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step_id, "primitive": self.primitive, "params": thaw(self.params)}


@dataclass(frozen=True, slots=True)
class OperatorNode:
    """An operator over ordered children (see the module docstring)."""

    operator: str
    params: Mapping[str, Any]
    children: tuple[Node, ...]
    node_id: str = ""
    loc: Loc = field(default_factory=Loc, compare=False)
    #: where each parameter was written (for errors found after the tree is built)
    param_locs: Mapping[str, Loc] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node_id,
            "operator": self.operator,
            "params": thaw(self.params),
            "children": [c.to_dict() for c in self.children],
        }


Node = Step | OperatorNode


def preorder(root: Node) -> Iterator[Node]:
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, OperatorNode):
            stack.extend(reversed(node.children))


def steps_of(root: Node) -> tuple[Step, ...]:
    return tuple(n for n in preorder(root) if isinstance(n, Step))


def assign_ids(root: Node) -> tuple[Node, list[Diagnostic]]:
    """The tree with every step and operator id assigned, and duplicate-id errors."""
    prim_count: dict[str, int] = {}
    op_count: dict[str, int] = {}
    seen: dict[str, Loc] = {}
    diags: list[Diagnostic] = []

    def visit(node: Node) -> Node:
        if isinstance(node, Step):
            n = prim_count.get(node.primitive, 0) + 1
            prim_count[node.primitive] = n
            sid = (
                node.step_id
                if node.explicit_id
                else (node.primitive if n == 1 else f"{node.primitive}__{n}")
            )
            if sid in seen:
                diags.append(
                    Diagnostic(
                        "lcl_duplicate_step",
                        f"two steps have the id {sid!r}; give one an explicit `id`",
                        node.loc,
                    )
                )
            seen[sid] = node.loc
            return replace(node, step_id=sid)
        k = op_count.get(node.operator, 0) + 1
        op_count[node.operator] = k
        node_id = f"{node.operator}#{k}"
        return replace(node, node_id=node_id, children=tuple(visit(c) for c in node.children))

    return visit(root), diags


def normalize(root: Node | None) -> tuple[Node | None, list[Diagnostic]]:
    """Flatten nested sequences, collapse one-child sequences/parallels, drop empty operators.

    Edits can leave such shapes behind (a removed step's parallel sibling); each
    dropped operator is reported as a warning. Returns None for an empty tree.
    """
    diags: list[Diagnostic] = []

    def visit(node: Node) -> Node | None:
        if isinstance(node, Step):
            return node
        results = [visit(child) for child in node.children]
        if node.operator == "conditional" and len(results) == 2 and results[0] is None:
            # the then-branch vanished: keep the else-branch under the negated condition
            when = node.params.get("when")
            if results[1] is not None and isinstance(when, Predicate):
                params = dict(node.params)
                params["when"] = when.negated()
                return replace(node, params=freeze(params), children=(results[1],))
        kids: list[Node] = []
        for got in results:
            if got is None:
                continue
            if (
                node.operator == "sequence"
                and isinstance(got, OperatorNode)
                and got.operator == "sequence"
            ):
                kids.extend(got.children)
            else:
                kids.append(got)
        if not kids:
            diags.append(
                Diagnostic(
                    "lcl_operator_emptied",
                    f"the {node.operator} operator lost all its children and was dropped",
                    node.loc,
                    severity="warning",
                )
            )
            return None
        if node.operator in ("sequence", "parallel") and len(kids) == 1:
            return kids[0]
        return replace(node, children=tuple(kids))

    return (visit(root) if root is not None else None), diags
