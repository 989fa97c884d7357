"""Deciding a composition on the codebase and change facts before it runs.

A library composition may hold ``conditional`` operator nodes. Those whose
condition reads only facts (``codebase.*``, ``change.*``, ``intent.*``) are
decided now, on the workspace's facts: the node is replaced by the branch taken
(or dropped when no branch is taken), and each decision is recorded with the
value and its effect. A condition that reads ``steps.*`` depends on what earlier
steps find, so it stays in the tree for the engine and is listed as *residual*.

A pattern is instantiated through LCL (its structure over the core primitives,
each optional primitive under its ``include_when``/``exclude_when`` condition),
with the same facts, so its decisions come from the LCL compiler itself.

Pure: facts in, a compiled composition and its decisions out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..techniques.predicates import Predicate
from ..techniques.tree import Node, Step, normalize

if TYPE_CHECKING:
    from ..techniques.facts import Facts
    from ..techniques.lcl import CompiledComposition
    from ..techniques.registry import Library

__all__ = ["PlanDecision", "compile_candidate"]


@dataclass(frozen=True, slots=True)
class PlanDecision:
    """A condition of the plan: where it is, what it says, its value now, what it did."""

    source: str
    when: str
    value: bool | None
    effect: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "when": self.when,
            "value": self.value,
            "effect": self.effect,
        }


def _names(node: Node) -> str:
    if isinstance(node, Step):
        return node.primitive
    return ", ".join(_names(c) for c in node.children)


def _decide(node: Node, env: Mapping[str, Any], out: list[PlanDecision]) -> Node | None:
    if isinstance(node, Step):
        return node
    when = node.params.get("when")
    if node.operator == "conditional" and isinstance(when, Predicate):
        where = f"{node.node_id or 'conditional'}"
        if when.steps:
            out.append(
                PlanDecision(where, when.text, None, "decided at run time: it reads step outputs")
            )
        else:
            value = when.holds(env)
            then = node.children[0] if node.children else None
            other = node.children[1] if len(node.children) > 1 else None
            chosen = then if value else other
            skipped = other if value else then
            if chosen is not None:
                effect = f"runs {_names(chosen)}"
                if skipped is not None:
                    effect += f" instead of {_names(skipped)}"
            else:
                effect = f"skips {_names(skipped)}" if skipped is not None else "nothing to run"
            out.append(PlanDecision(where, when.text, value, effect))
            return None if chosen is None else _decide(chosen, env, out)
    kids = [k for c in node.children if (k := _decide(c, env, out)) is not None]
    return replace(node, children=tuple(kids)) if kids else None


def compile_candidate(
    kind: str, cid: str, library: Library, facts: Facts
) -> tuple[CompiledComposition, tuple[PlanDecision, ...]]:
    """A composition (``kind="composition"``) or pattern, compiled and decided on ``facts``."""
    from ..techniques.lcl import compile as lcl_compile
    from ..techniques.lcl import compile_composition, compose

    if kind == "pattern":
        compiled = lcl_compile(compose(cid).use(cid).done(), facts=facts, library=library)
        decisions = tuple(
            PlanDecision(d.source, d.predicate, d.value, d.effect) for d in compiled.decisions
        )
        return compiled, decisions
    comp = library.composition(cid)
    first = compile_composition(comp, library=library)  # ids for the decisions' sources
    out: list[PlanDecision] = []
    root = _decide(first.root, facts.env(), out)
    root, _ = normalize(root)
    if root is None:  # every branch was skipped: an empty plan is no plan
        return first, tuple(out)
    decided = replace(comp, root=_strip_ids(root))
    return compile_composition(decided, library=library), tuple(out)


def _strip_ids(node: Node) -> Node:
    """Forget derived ids so the compiler assigns them afresh (explicit ids are kept)."""
    if isinstance(node, Step):
        return node if node.explicit_id else replace(node, step_id="")
    return replace(node, node_id="", children=tuple(_strip_ids(c) for c in node.children))
