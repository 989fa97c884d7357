"""``compile``: an LCL program (or a library composition) to a checked, immutable composition.

Steps: evaluate the program (conditionals decided when facts are given, else
left as ``conditional`` nodes), normalize the tree, assign stable step and node
ids, then check what only the whole tree can show:

* every step's bound params against its primitive's input schema;
* every operator condition (``loop.until``, ``gate.when``, ``conditional.when``)
  type-checks over the facts plus ``steps.<id>.status``/``.output.*`` of *this*
  composition, and reads only steps that have run when it is evaluated (earlier
  siblings in a sequence, the loop's own body for ``until``, earlier fallback
  alternatives) — otherwise ``lcl_step_not_yet_run``;
* voting operators' children produce the vote field;
* relationships (the library's, the composition's, the program's);
* the stratum, its execution policy, and the program's required stratum.

The result, :class:`CompiledComposition`, is what the execution engine walks:
``composition.root`` (steps and operator nodes with ids), ``steps`` by id, the
``stratum`` and ``policy``, the ``decisions`` taken on conditionals, and warnings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..composition import Composition, Metadata, Relationship
from ..diagnostics import Diagnostic, LclError, Loc, raise_if_errors
from ..facts import FACTS_SCHEMA, Facts
from ..predicates import Predicate, PredicateTypeError
from ..registry import Library, default_library
from ..relationships import check_relationships
from ..strata import (
    EXECUTION_POLICIES,
    STRATA,
    ExecutionPolicy,
    Stratum,
    StratumValidation,
    infer_stratum,
    stratum_reasons,
    validate_stratum,
)
from ..tree import Node, OperatorNode, Step, assign_ids, normalize, steps_of
from .ast import Program
from .evaluate import CompValue, Decision, Reducer

__all__ = ["CompiledComposition", "check_program", "compile_composition", "compile_program"]


@dataclass(frozen=True)
class CompiledComposition:
    """A compiled composition: the tree, its stratum and policy, and why it is so."""

    composition: Composition
    stratum: Stratum
    policy: ExecutionPolicy
    decisions: tuple[Decision, ...] = ()
    warnings: tuple[Diagnostic, ...] = ()
    stratum_reasons: tuple[tuple[str, str, str], ...] = ()
    required: StratumValidation | None = None
    steps: Mapping[str, Step] = field(default_factory=dict)

    @property
    def root(self) -> Node:
        return self.composition.root

    def to_dict(self) -> dict[str, Any]:
        c = self.composition
        return {
            "id": c.id,
            "name": c.name,
            "description": c.description,
            "metadata": c.metadata.to_dict(),
            "stratum": self.stratum,
            "stratum_reasons": [
                {"node": n, "stratum": s, "reason": r} for n, s, r in self.stratum_reasons
            ],
            "policy": self.policy.to_dict(),
            "required_stratum": None if self.required is None else self.required.to_dict(),
            "tree": c.root.to_dict(),
            "steps": [{"step": s.step_id, "primitive": s.primitive} for s in steps_of(c.root)],
            "relationships": [r.to_dict() for r in c.relationships],
            "decisions": [d.to_dict() for d in self.decisions],
            "warnings": [w.to_dict() for w in self.warnings],
        }


def _vote_field_ok(library: Library, node: Node, vote: str) -> bool:
    if isinstance(node, Step):
        p = library.primitives.get(node.primitive)
        if p is None:
            return True
        props = p.output_schema.get("properties", {})
        return vote in props
    return all(_vote_field_ok(library, c, vote) for c in node.children)


def _check_tree(library: Library, root: Node) -> list[Diagnostic]:
    """Step params, operator conditions and vote fields (see the module docstring)."""
    from jsonschema import Draft202012Validator

    diags: list[Diagnostic] = []
    steps = steps_of(root)
    outputs = {}
    for s in steps:
        p = library.primitives.get(s.primitive)
        outputs[s.step_id] = p.output_schema if p else None
        if p is None or not s.params:
            continue
        inputs = p.input_schema
        inputs.pop("required", None)
        for e in sorted(
            Draft202012Validator(inputs).iter_errors(_plain(s.params)), key=lambda e: e.message
        ):
            diags.append(Diagnostic("lcl_step_params", f"step {s.step_id}: {e.message}", s.loc))
    schema = FACTS_SCHEMA.with_steps(outputs)

    def check(pred: Predicate, node: OperatorNode, ran: frozenset[str], what: str) -> None:
        key = what.strip("`")
        where = node.param_locs.get(key, node.loc)
        try:
            pred.check(schema, where=where)
        except PredicateTypeError as exc:
            diags.extend(exc.diagnostics)
            return
        for sid in pred.steps:
            if sid not in ran:
                diags.append(
                    Diagnostic(
                        "lcl_step_not_yet_run",
                        f"{node.node_id} {what} reads steps.{sid}, which has not run when it is "
                        "evaluated (it is later, in a parallel branch, or elsewhere)",
                        where,
                    )
                )

    def visit(node: Node, ran: frozenset[str]) -> frozenset[str]:
        """Walk in run order; returns the steps that may have run after ``node``."""
        if isinstance(node, Step):
            return ran | {node.step_id}
        op, params = node.operator, node.params
        for key in ("when",):
            pred = params.get(key)
            if isinstance(pred, Predicate):
                check(pred, node, ran, f"`{key}`")
        if op in ("quorum", "consensus"):
            vote = str(params.get("vote_field") or "conclusion")
            for child in node.children:
                if not _vote_field_ok(library, child, vote):
                    diags.append(
                        Diagnostic(
                            "lcl_vote_field",
                            f"{node.node_id}: a voter does not produce the vote field {vote!r}; "
                            "set vote_field or use primitives whose output has it",
                            node.loc,
                        )
                    )
        after = ran
        if op in {"sequence", "fallback"}:
            cur = ran
            for child in node.children:
                cur = visit(child, cur)
            after = cur
        else:
            for child in node.children:
                after = after | visit(child, ran)
        until = params.get("until")
        if op == "loop" and isinstance(until, Predicate):
            check(until, node, after, "`until`")
        return after

    visit(root, frozenset())
    return diags


def _plain(value: Any) -> Any:
    from ..tree import thaw

    return thaw(value)


def _finish(
    library: Library,
    root: Node | None,
    *,
    cid: str,
    name: str,
    description: str,
    metadata: Metadata,
    relationships: tuple[Relationship, ...],
    origin: str,
    loc: Loc,
    diags: list[Diagnostic],
    decisions: tuple[Decision, ...],
    require: str | None,
) -> CompiledComposition:
    root, more = normalize(root)
    diags += more
    if root is None:
        diags.append(Diagnostic("lcl_empty", "the composition has no steps left", loc))
        raise LclError(diags)
    root, more = assign_ids(root)
    diags += more
    raise_if_errors(diags)
    diags += _check_tree(library, root)
    rels = (*library.relationships, *relationships)
    diags += check_relationships(root, rels, where=loc)
    rules = library.stratum_rules
    stratum = infer_stratum(root, rules=rules, self_modifying=library.self_modifying)
    required = None
    if require is not None:
        if require not in STRATA:
            diags.append(
                Diagnostic(
                    "lcl_bad_value",
                    f"unknown stratum {require!r}; strata: {', '.join(STRATA)}",
                    loc,
                )
            )
        else:
            required = validate_stratum(
                root,
                require,
                rules=rules,
                self_modifying=library.self_modifying,
            )
            for v in required.violations:
                diags.append(
                    Diagnostic(
                        "lcl_stratum_violation",
                        f"{v.node_id}: {v.reason}; fix: {v.suggested_fix}",
                        loc,
                    )
                )
    policy = EXECUTION_POLICIES[stratum]
    if policy.max_duration_ms is not None:
        for n in (x for x in _nodes(root) if x.operator == "timebox"):
            ms = n.params.get("duration_ms")
            if isinstance(ms, int) and ms > policy.max_duration_ms:
                diags.append(
                    Diagnostic(
                        "lcl_timebox_over_policy",
                        f"{n.node_id} allows {ms} ms but a {stratum} run is limited to "
                        f"{policy.max_duration_ms} ms",
                        n.loc,
                        severity="warning",
                    )
                )
    warnings = raise_if_errors(diags)
    composition = Composition(cid, name, description, root, relationships, metadata, origin, loc)
    return CompiledComposition(
        composition,
        stratum,
        policy,
        decisions,
        warnings,
        stratum_reasons(root, rules=rules, self_modifying=library.self_modifying),
        required,
        {s.step_id: s for s in steps_of(root)},
    )


def _nodes(root: Node) -> list[OperatorNode]:
    from ..tree import preorder

    return [n for n in preorder(root) if isinstance(n, OperatorNode)]


def _env(facts: Facts | Mapping[str, Any]) -> Mapping[str, Any]:
    return facts.env() if isinstance(facts, Facts) else facts


def compile_program(
    program: Program,
    *,
    library: Library | None = None,
    facts: Facts | Mapping[str, Any] | None = None,
) -> CompiledComposition:
    """Compile ``program``; with ``facts`` every ``when`` is decided now, without them
    conditionals stay in the tree for the engine. Raises :class:`LclError` listing
    every error."""
    lib = library or default_library()
    env = None if facts is None else _env(facts)
    reducer = Reducer(lib, None if env is None else (lambda p: p.holds(env)))
    value = reducer.as_comp(reducer.reduce(program.expr))
    diags = list(reducer.diags)
    raise_if_errors(diags)
    assert isinstance(value, CompValue)
    meta = program.metadata
    if not meta.patterns and value.patterns:
        meta = Metadata(meta.actions, meta.domains, meta.scopes, value.patterns)
    base_rels: tuple[Relationship, ...] = ()
    if value.base in lib.compositions:
        base = lib.compositions[value.base]
        base_rels = base.relationships
        if not (meta.actions or meta.domains or meta.scopes):
            meta = base.metadata
    elif value.base in lib.patterns and not (meta.actions or meta.domains or meta.scopes):
        p = lib.patterns[value.base].metadata
        meta = Metadata(p.actions, p.domains, p.scopes, meta.patterns)
    return _finish(
        lib,
        value.root,
        cid=program.name,
        name=program.name,
        description=program.description,
        metadata=meta,
        relationships=(*base_rels, *program.relationships),
        origin=program.source,
        loc=program.loc,
        diags=diags,
        decisions=tuple(reducer.decisions),
        require=program.require_stratum,
    )


def compile_composition(
    composition: Composition, *, library: Library | None = None
) -> CompiledComposition:
    """Check and compile a library composition (ids, stratum, policy)."""
    lib = library or default_library()
    return _finish(
        lib,
        composition.root,
        cid=composition.id,
        name=composition.name,
        description=composition.description,
        metadata=composition.metadata,
        relationships=composition.relationships,
        origin=composition.origin,
        loc=composition.loc,
        diags=[],
        decisions=(),
        require=None,
    )


def check_program(program: Program, *, library: Library | None = None) -> tuple[Diagnostic, ...]:
    """Every diagnostic of ``program`` (errors and warnings) without raising."""
    try:
        compiled = compile_program(program, library=library)
    except LclError as exc:
        return exc.diagnostics
    return compiled.warnings
