"""Compositions: a tree of operators over primitive steps, with relationships and metadata.

A :class:`Composition` is what the execution engine walks: an id, a root
:data:`~.tree.Node`, the :class:`Relationship` edges the author declared
(checked by :mod:`.relationships`), and selection :class:`Metadata` (actions,
domains and scopes from :mod:`.vocabulary`, plus the patterns it realizes).

Packaged compositions are TOML (``techniques/data/compositions/*.toml``), written
either as a template over a list of primitives or as an explicit tree::

    id = "tc_root_cause_recovery"
    template = "iterative"
    primitives = ["tp_hypothesis", "tp_bisect", "tp_root_cause"]
    [template_params]
    max_iterations = 5

    # or
    [root]
    operator = "sequence"
    [[root.children]]
    primitive = "tp_min_repro"
    [[root.children]]
    operator = "retry"
    params = { attempts = 3 }
    ...

:func:`read_node` reads one node table; :func:`read_composition` a whole file.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic, Loc, closest
from .operators import OperatorSpec, build_operator
from .reader import Reader
from .templates import TEMPLATES, apply_template
from .tree import Node, OperatorNode, Step, freeze, steps_of
from .vocabulary import ACTIONS, DOMAINS, RELATIONSHIP_KINDS, SCOPES, RelationshipKind

__all__ = [
    "Composition",
    "Metadata",
    "Relationship",
    "read_composition",
    "read_metadata",
    "read_node",
    "read_relationship",
]


@dataclass(frozen=True, slots=True)
class Relationship:
    """``source kind target`` between primitives, with a rationale and a per-mille weight."""

    source: str
    kind: RelationshipKind
    target: str
    rationale: str = ""
    weight: int = 500
    loc: Loc = field(default_factory=Loc, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kind": self.kind,
            "target": self.target,
            "rationale": self.rationale,
            "weight_per_mille": self.weight,
        }


@dataclass(frozen=True, slots=True)
class Metadata:
    """What planning scores a composition or pattern by."""

    actions: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, list[str]]:
        return {
            "actions": list(self.actions),
            "domains": list(self.domains),
            "scopes": list(self.scopes),
            "patterns": list(self.patterns),
        }


@dataclass(frozen=True, slots=True)
class Composition:
    id: str
    name: str
    description: str
    root: Node
    relationships: tuple[Relationship, ...] = ()
    metadata: Metadata = field(default_factory=Metadata)
    origin: str = "builtin"
    loc: Loc = field(default_factory=Loc, compare=False)

    @property
    def steps(self) -> tuple[Step, ...]:
        return steps_of(self.root)

    @property
    def primitives(self) -> tuple[str, ...]:
        """Distinct primitive ids in first-use order."""
        return tuple(dict.fromkeys(s.primitive for s in self.steps))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "metadata": self.metadata.to_dict(),
            "root": self.root.to_dict(),
            "relationships": [r.to_dict() for r in self.relationships],
            "origin": self.origin,
        }


def read_metadata(r: Reader, *, require: bool = True) -> Metadata:
    return Metadata(
        actions=r.choices("actions", ACTIONS, required=require),
        domains=r.choices("domains", DOMAINS, required=require),
        scopes=r.choices("scopes", SCOPES, required=require),
        patterns=r.strs("patterns"),
    )


def read_relationship(r: Reader, primitives: Collection[str]) -> Relationship | None:
    r.only(("source", "kind", "target", "rationale", "weight"))
    source = r.text("source", required=True)
    target = r.text("target", required=True)
    kind = r.choice("kind", RELATIONSHIP_KINDS, required=True)
    for key, pid in (("source", source), ("target", target)):
        if pid:
            r.known(pid, primitives, key)
    if not (source and target and kind):
        return None
    if source == target:
        r.error("lcl_relationship_self", f"a primitive cannot {kind} itself", "target")
        return None
    return Relationship(
        source,
        kind,  # type: ignore[arg-type]
        target,
        r.text("rationale"),
        r.per_mille("weight", default=500),
        r.loc(),
    )


def read_node(
    r: Reader,
    operators: Mapping[str, OperatorSpec],
    primitives: Collection[str],
    *,
    depth: int = 0,
) -> Node | None:
    """One node table (``primitive = ...`` or ``operator = ...`` with ``children``)."""
    if depth > 32:
        r.error("lcl_too_deep", "compositions nest at most 32 operators deep")
        return None
    if "primitive" in r.data:
        r.only(("primitive", "id", "params"), what="in a step")
        pid = r.text("primitive", required=True)
        if not r.known(pid, primitives, "primitive"):
            return None
        explicit = r.text("id")
        params = r.table("params")
        return Step(
            pid,
            freeze(dict(params.data) if params else {}),
            step_id=explicit,
            explicit_id=bool(explicit),
            loc=r.loc("primitive"),
        )
    if "operator" not in r.data:
        r.error("lcl_missing_key", 'a node needs `primitive = "..."` or `operator = "..."`')
        return None
    r.only(("operator", "params", "children"), what="in an operator node")
    op = r.text("operator", required=True)
    spec = operators.get(op)
    if spec is None:
        r.error(
            "lcl_operator_not_found",
            f"unknown operator {op!r}; operators: {', '.join(sorted(operators))}",
            "operator",
            suggestions=closest(op, operators),
        )
        return None
    children = [
        n
        for c in r.tables("children")
        if (n := read_node(c, operators, primitives, depth=depth + 1)) is not None
    ]
    return operator_node(spec, r.raw("params", {}) or {}, children, r)


def operator_node(spec: OperatorSpec, raw: Any, children: list[Node], r: Reader) -> OperatorNode:
    """A validated operator node (arity and parameters) at ``r``'s position."""
    if not isinstance(raw, Mapping):
        r.error("lcl_wrong_type", "`params` must be a table")
        raw = {}
    key = "params" if "params" in r.data else "parameters"
    locs = {k: r.loc(key, k) for k in raw}
    node, diags = build_operator(spec, raw, children, loc=r.loc(), param_locs=locs)
    r.diags.extend(diags)
    return node


def read_composition(
    r: Reader,
    operators: Mapping[str, OperatorSpec],
    primitives: Collection[str],
    *,
    origin: str = "builtin",
) -> Composition | None:
    before = sum(1 for d in r.diags if d.severity == "error")
    r.only(
        ("id", "name", "description", "actions", "domains", "scopes", "patterns", "template",
         "primitives", "template_params", "root", "relationships"),
        what="in a composition",
    )  # fmt: skip
    cid = r.text("id", required=True)
    root: Node | None = None
    if "root" in r.data:
        if "template" in r.data:
            r.error(
                "lcl_conflict",
                "give either `root` or `template` + `primitives`, not both",
                "template",
            )
        tree = r.table("root")
        root = read_node(tree, operators, primitives) if tree else None
    else:
        name = r.choice("template", tuple(TEMPLATES), required=True)
        prims = r.strs("primitives", required=True)
        for i, p in enumerate(prims):
            r.known(p, primitives, "primitives", i)
        params = r.table("template_params")
        if name and not any(d.severity == "error" for d in r.diags[before:]):
            root, diags = apply_template(
                name, prims, dict(params.data) if params else {}, loc=r.loc("template")
            )
            r.diags.extend(diags)
    rels = [
        rel
        for t in r.tables("relationships")
        if (rel := read_relationship(t, primitives)) is not None
    ]
    meta = read_metadata(r)
    after = sum(1 for d in r.diags if d.severity == "error")
    if root is None or after > before:
        if root is None and after == before:
            r.diags.append(Diagnostic("lcl_empty", "the composition has no steps", r.loc()))
        return None
    return Composition(
        cid,
        r.text("name", required=True),
        r.text("description", required=True),
        root,
        tuple(rels),
        meta,
        origin,
        r.loc(),
    )
