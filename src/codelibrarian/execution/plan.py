"""What the engine runs: a compiled composition with each step's executor, role and cost.

:class:`RunPlan` is the engine core's whole view of the technique library: the
composition tree (steps and operator nodes with their ids), and for every step the
primitive's executor kind, the agent role its context is built for and the tokens
its context may cost (the recipe's budget, reserved under ``budget_cap`` before the
step is dispatched; builtin steps run over the index without a context and cost 0).

A run stores its composition as a table in the form of the packaged compositions
(``[root]`` with ``children``; every step with its explicit id), so a run can be
resumed even after the library or the program file changed:
:func:`composition_table` writes it and :func:`compiled_from_table` reads it back
through the library's own checked reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..techniques.predicates import Predicate
from ..techniques.strata import ExecutionPolicy
from ..techniques.tree import Node, OperatorNode, Step, preorder, thaw

if TYPE_CHECKING:
    from ..techniques.lcl import CompiledComposition
    from ..techniques.registry import Library

__all__ = [
    "INTERPRETED",
    "RunPlan",
    "StepInfo",
    "compiled_from_table",
    "composition_table",
    "plan_for",
]

#: the operators the engine has an interpreter for
INTERPRETED: frozenset[str] = frozenset(
    {
        "sequence",
        "parallel",
        "conditional",
        "loop",
        "gate",
        "retry",
        "circuit_breaker",
        "fallback",
        "quorum",
        "consensus",
        "timebox",
        "budget_cap",
    }
)


@dataclass(frozen=True, slots=True)
class StepInfo:
    """One step as the engine sees it."""

    step_id: str
    primitive: str
    executor: str
    role: str
    #: tokens reserved under budget caps before dispatch (the context budget)
    reserve: int
    params: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class RunPlan:
    """A composition ready to run (see the module docstring)."""

    composition_id: str
    root: Node
    steps: Mapping[str, StepInfo]
    stratum: str
    policy: ExecutionPolicy
    patterns: tuple[str, ...] = ()

    @property
    def unsupported(self) -> tuple[str, ...]:
        """Operator nodes the engine has no interpreter for (their node ids)."""
        return tuple(
            n.node_id
            for n in preorder(self.root)
            if isinstance(n, OperatorNode) and n.operator not in INTERPRETED
        )

    def node(self, node_id: str) -> Node | None:
        for n in preorder(self.root):
            if (isinstance(n, Step) and n.step_id == node_id) or (
                isinstance(n, OperatorNode) and n.node_id == node_id
            ):
                return n
        return None


def plan_for(compiled: CompiledComposition, library: Library) -> RunPlan:
    """The run plan of a compiled composition: each step's executor, role and reserve."""
    steps: dict[str, StepInfo] = {}
    for sid, step in sorted(compiled.steps.items()):
        prim = library.primitives[step.primitive]
        reserve = 0 if prim.executor == "builtin" else prim.context.budget
        steps[sid] = StepInfo(
            sid, step.primitive, prim.executor, prim.context.role, reserve, step.params
        )
    return RunPlan(
        compiled.composition.id,
        compiled.root,
        steps,
        compiled.stratum,
        compiled.policy,
        tuple(compiled.composition.metadata.patterns),
    )


def _node_table(node: Node) -> dict[str, Any]:
    if isinstance(node, Step):
        out: dict[str, Any] = {"primitive": node.primitive, "id": node.step_id}
        if node.params:
            out["params"] = thaw(node.params)
        return out
    params: dict[str, Any] = {}
    for key, value in node.params.items():
        # resolved or derived values the reader would refuse as input
        if value is None or key == "threshold_pm":
            continue
        params[key] = value.text if isinstance(value, Predicate) else thaw(value)
    table: dict[str, Any] = {"operator": node.operator}
    if params:
        table["params"] = params
    table["children"] = [_node_table(c) for c in node.children]
    return table


def composition_table(compiled: CompiledComposition) -> dict[str, Any]:
    """The compiled composition as a composition table (reads back to the same tree)."""
    c = compiled.composition
    meta = c.metadata
    return {
        "id": c.id,
        "name": c.name or c.id,
        "description": c.description or c.id,
        "actions": list(meta.actions),
        "domains": list(meta.domains),
        "scopes": list(meta.scopes),
        "patterns": list(meta.patterns),
        "root": _node_table(c.root),
        "relationships": [r.to_dict() for r in c.relationships],
    }


def compiled_from_table(table: Mapping[str, Any], library: Library) -> CompiledComposition:
    """Read a stored composition table back and compile it (``LclError`` when it no
    longer checks against the library)."""
    from ..techniques.composition import Composition, Metadata, Relationship, read_node
    from ..techniques.diagnostics import Diagnostic, LclError, Loc, raise_if_errors
    from ..techniques.lcl import compile_composition
    from ..techniques.reader import Reader

    diags: list[Diagnostic] = []
    reader = Reader(dict(table["root"]), positions=None, diags=diags, source="run.json")
    root = read_node(reader, library.operators, library.primitives)
    raise_if_errors(diags)
    if root is None:  # pragma: no cover - read_node reports why
        raise LclError([Diagnostic("lcl_empty", "the stored composition has no root", Loc())])
    rels = tuple(
        Relationship(r["source"], r["kind"], r["target"], r["rationale"], r["weight_per_mille"])
        for r in table.get("relationships", ())
    )
    meta = Metadata(
        tuple(table.get("actions", ())),
        tuple(table.get("domains", ())),
        tuple(table.get("scopes", ())),
        tuple(table.get("patterns", ())),
    )
    comp = Composition(
        str(table["id"]), str(table["name"]), str(table["description"]), root, rels, meta, "run"
    )
    return compile_composition(comp, library=library)
