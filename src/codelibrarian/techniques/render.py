"""Plain-text views of technique data: composition trees and catalog entries.

Used by the CLI and by the generated catalog (docs/techniques.md), so what a user
reads in the terminal and in the docs is the same text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .predicates import Predicate
from .tree import Node, Step

__all__ = ["render_params", "render_tree"]


def _value(v: Any) -> str:
    if isinstance(v, Predicate):
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple | list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def render_params(params: Mapping[str, Any]) -> str:
    """``key: value; ...`` for the parameters that are set, in name order."""
    parts = [f"{k}: {_value(v)}" for k, v in sorted(params.items()) if v is not None]
    return "; ".join(parts)


def render_tree(root: Node, *, ascii_only: bool = False) -> str:
    """An indented tree: operator nodes with their parameters, steps with their ids."""
    tee, last, bar = ("|- ", "`- ", "|  ") if ascii_only else ("├─ ", "└─ ", "│  ")
    lines: list[str] = []

    def label(node: Node) -> str:
        if isinstance(node, Step):
            same = node.step_id == node.primitive
            text = node.step_id if same else f"{node.step_id} ({node.primitive})"
            return text + (f"  [{render_params(node.params)}]" if node.params else "")
        params = render_params(node.params)
        return node.node_id + (f"  {params}" if params else "")

    def walk(node: Node, prefix: str, is_last: bool, top: bool) -> None:
        lines.append(label(node) if top else prefix + (last if is_last else tee) + label(node))
        if isinstance(node, Step):
            return
        child_prefix = "" if top else prefix + ("   " if is_last else bar)
        for i, child in enumerate(node.children):
            walk(child, child_prefix, i == len(node.children) - 1, False)

    walk(root, "", True, True)
    return "\n".join(lines)
