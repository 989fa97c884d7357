"""Technique primitives: the named steps a workflow is made of.

A :class:`Primitive` is pure data: id, name, description, who executes it
(``builtin`` over the index, the calling ``agent``, or a provider ``llm``),
instructions for whoever does the work, input and output JSON Schemas, a
:class:`~.contracts.Contract`, capability requirements (seed P21, the
``providers.capabilities`` type) and a :class:`~.recipe.ContextRecipe`.

Built-ins are TOML files in ``techniques/data/primitives/``; third parties
register more through the ``codelibrarian.primitives`` entry-point group
(see :mod:`.registry`). :func:`read_primitive` turns one TOML table into a
primitive, reporting every problem as a positioned diagnostic.

Ids are lowercase snake_case (``^[a-z][a-z0-9_]*$``) so they can appear in
predicate paths (``steps.tp_bisect.output.converged``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import LANES
from ..errors import UsageError
from ..providers.capabilities import CapabilityRequirements
from .contracts import Condition, Contract, Phase, check_contract
from .diagnostics import Diagnostic, Loc
from .facts import FACTS_SCHEMA
from .predicates import PredicateSyntaxError, PType, parse, schema_type
from .reader import Reader
from .recipe import ContextRecipe, check_recipe_path, parse_template
from .vocabulary import AGENT_ROLES, EXECUTORS, Executor

__all__ = ["ID_PATTERN", "Primitive", "check_recipe", "read_primitive"]

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
_KEYS = (
    "id", "name", "description", "executor", "category", "instructions", "input", "output",
    "contract", "capabilities", "context", "self_modifying",
)  # fmt: skip
_CONTRACT_KEYS: Mapping[str, Phase] = {
    "preconditions": "precondition",
    "postconditions": "postcondition",
    "invariants": "invariant",
}


def _canon(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Primitive:
    """One technique primitive (see the module docstring)."""

    id: str
    name: str
    description: str
    executor: Executor
    instructions: str
    input_schema_json: str
    output_schema_json: str
    contract: Contract
    capabilities: CapabilityRequirements
    context: ContextRecipe
    category: str = ""
    #: a primitive that rewrites the composition it runs in (puts it in the unrestricted stratum)
    self_modifying: bool = False
    #: where it came from: "builtin" or the entry point ("name = module:attr")
    origin: str = "builtin"
    loc: Loc = field(default_factory=Loc, compare=False)

    @property
    def input_schema(self) -> dict[str, Any]:
        """A fresh copy of the input JSON Schema."""
        value: dict[str, Any] = json.loads(self.input_schema_json)
        return value

    @property
    def output_schema(self) -> dict[str, Any]:
        """A fresh copy of the output JSON Schema."""
        value: dict[str, Any] = json.loads(self.output_schema_json)
        return value

    @property
    def output_type(self) -> PType:
        return schema_type(self.output_schema)

    def to_dict(self) -> dict[str, Any]:
        caps = self.capabilities
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "executor": self.executor,
            "category": self.category,
            "instructions": self.instructions,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "contract": self.contract.to_dict(),
            "capabilities": {
                "required": list(caps.required),
                "preferred": list(caps.preferred),
                "min_context_tokens": caps.min_context_tokens,
                "max_latency_ms": caps.max_latency_ms,
                "levels": dict(sorted(caps.levels.items())),
            },
            "context": self.context.to_dict(),
            "self_modifying": self.self_modifying,
            "origin": self.origin,
        }


def _read_capabilities(r: Reader | None) -> CapabilityRequirements:
    if r is None:
        return CapabilityRequirements()
    r.only(("required", "preferred", "min_context_tokens", "max_latency_ms", "levels"))
    from ..providers.capabilities import CAPABILITIES, LEVELS

    required = r.choices("required", CAPABILITIES)
    preferred = r.choices("preferred", CAPABILITIES)
    levels: dict[str, str] = {}
    lv = r.table("levels")
    if lv is not None:
        for cap in sorted(lv.data):
            if cap not in CAPABILITIES:
                lv.error("lcl_bad_value", f"unknown capability {cap!r}", cap)
                continue
            level = lv.choice(cap, LEVELS)
            if level:
                levels[cap] = level
    try:
        return CapabilityRequirements(
            required=required,  # type: ignore[arg-type]  # checked against CAPABILITIES above
            preferred=preferred,  # type: ignore[arg-type]
            min_context_tokens=r.integer("min_context_tokens", minimum=1),
            max_latency_ms=r.integer("max_latency_ms", minimum=1),
            levels=levels,  # type: ignore[arg-type]
        )
    except UsageError as exc:  # pragma: no cover - the vocabulary checks above come first
        r.error("lcl_bad_value", exc.message)
        return CapabilityRequirements()


def _read_recipe(r: Reader | None, where: Reader) -> ContextRecipe:
    if r is None:
        where.error("lcl_missing_key", "missing the [context] recipe (lanes, query, budget, role)")
        return ContextRecipe(lanes=("local",))
    r.only(("lanes", "query", "budget", "role", "files"))
    lanes = r.choices("lanes", LANES, required=True)
    query = r.text("query", default="{task}")
    _, problems = parse_template(query)
    for offset, message in problems:
        r.diags.append(
            Diagnostic("lcl_recipe_template", message, r.loc("query").shifted(1, offset + 1))
        )
    budget = r.integer("budget", required=True, minimum=200) or 3000
    role = r.choice("role", AGENT_ROLES, required=True) or "Implementer"
    return ContextRecipe(lanes=lanes, query=query, budget=budget, role=role, files=r.strs("files"))


def check_recipe(primitive: Primitive, outputs: Mapping[str, PType]) -> list[Diagnostic]:
    """Every placeholder and file path of a recipe names ``task``, a fact or a known output."""
    diags: list[Diagnostic] = []
    recipe = primitive.context
    facts = FACTS_SCHEMA.root
    parts, _ = parse_template(recipe.query)
    paths = [p for p in parts if isinstance(p, tuple)]
    paths += [tuple(f.split(".")) for f in recipe.files]
    for path in paths:
        d = check_recipe_path(path, facts=facts, outputs=outputs, loc=primitive.loc)
        if d is not None:
            diags.append(d)
    return diags


def _read_contract(r: Reader | None) -> Contract:
    if r is None:
        return Contract()
    r.only(_CONTRACT_KEYS)
    lists: dict[Phase, list[Condition]] = {"precondition": [], "postcondition": [], "invariant": []}
    for key, phase in _CONTRACT_KEYS.items():
        for c in r.tables(key):
            c.only(("id", "when", "description"))
            cid = c.text("id", required=True)
            text = c.text("when", required=True)
            if not cid or not text:
                continue
            if not ID_PATTERN.match(cid):
                c.error("lcl_bad_id", f"condition id {cid!r} must be lowercase snake_case", "id")
            try:
                pred = parse(text, where=c.loc("when"))
            except PredicateSyntaxError as exc:
                c.diags.extend(exc.diagnostics)
                continue
            lists[phase].append(Condition(cid, phase, pred, c.text("description"), c.loc("when")))
    return Contract(
        tuple(lists["precondition"]), tuple(lists["postcondition"]), tuple(lists["invariant"])
    )


def read_primitive(r: Reader, *, origin: str = "builtin") -> Primitive | None:
    """A primitive from its TOML table, or None when it has errors (all in ``r.diags``)."""
    before = len([d for d in r.diags if d.severity == "error"])
    r.only(_KEYS, what="in a primitive")
    pid = r.text("id", required=True)
    if pid and not ID_PATTERN.match(pid):
        r.error("lcl_bad_id", f"primitive id {pid!r} must match {ID_PATTERN.pattern}", "id")
    executor = r.choice("executor", EXECUTORS, required=True) or "agent"
    inp = r.table("input", required=True)
    out = r.table("output", required=True)
    input_schema = dict(inp.data) if inp else {"type": "object"}
    output_schema = dict(out.data) if out else {"type": "object"}
    contract = _read_contract(r.table("contract"))
    caps = _read_capabilities(r.table("capabilities"))
    recipe = _read_recipe(r.table("context"), r)
    if executor == "builtin" and caps.required:
        r.error(
            "lcl_builtin_needs_model",
            "a builtin primitive runs without a model; remove [capabilities].required",
            "capabilities",
        )
    r.diags.extend(
        check_contract(
            contract,
            input_schema,
            output_schema,
            loc=r.loc("contract"),
            meta_check=origin != "builtin",
        )
    )
    primitive = Primitive(
        id=pid,
        name=r.text("name", required=True),
        description=r.text("description", required=True),
        executor=executor,  # type: ignore[arg-type]
        instructions=r.text("instructions", required=True).strip(),
        input_schema_json=_canon(input_schema),
        output_schema_json=_canon(output_schema),
        contract=contract,
        capabilities=caps,
        context=recipe,
        category=r.text("category"),
        self_modifying=r.flag("self_modifying"),
        origin=origin,
        loc=r.loc(),
    )
    after = len([d for d in r.diags if d.severity == "error"])
    return primitive if after == before else None
