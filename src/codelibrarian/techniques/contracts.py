"""Primitive contracts, the data side of seed 004 P18.

A :class:`Contract` holds three lists of :class:`Condition` — each an id, a
predicate and a sentence — plus, on the primitive, the input and output JSON
Schemas. The scopes differ by phase:

=============  ===================================================  ======================
phase          the predicate may read                               checked
=============  ===================================================  ======================
precondition   ``input.*`` and the facts (codebase, change, intent)  before the step runs
postcondition  the same plus ``output.*``                           after a successful run
invariant      ``input.*`` and the facts (not ``output``)           before *and* after
=============  ===================================================  ======================

:func:`check_contract` validates a contract at registration (schemas are valid
Draft 2020-12, ids unique, predicates parse and type-check in their phase's
scope). :class:`ContractValidator` is what the execution engine calls at run
time: every result names its condition id, a ledger-safe ``code`` and a
human ``reason`` (which may quote values, so it is for the local user only).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .diagnostics import Diagnostic, Loc
from .facts import FACTS_SCHEMA
from .predicates import EnvSchema, Predicate, PredicateTypeError, lookup, schema_type
from .predicates.evaluate import MISSING

if TYPE_CHECKING:
    from .primitives import Primitive

__all__ = [
    "Condition",
    "ConditionResult",
    "Contract",
    "ContractCheck",
    "ContractValidator",
    "Phase",
    "check_contract",
    "contract_scope",
]

Phase = Literal["precondition", "postcondition", "invariant"]
_SCHEMA_IDS: Mapping[Phase, str] = {
    "precondition": "input_schema",
    "postcondition": "output_schema",
    "invariant": "",
}


@dataclass(frozen=True, slots=True)
class Condition:
    id: str
    phase: Phase
    predicate: Predicate
    description: str = ""
    loc: Loc = field(default_factory=Loc, compare=False)

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "when": self.predicate.text, "description": self.description}


@dataclass(frozen=True, slots=True)
class Contract:
    preconditions: tuple[Condition, ...] = ()
    postconditions: tuple[Condition, ...] = ()
    invariants: tuple[Condition, ...] = ()

    def conditions(self) -> Iterator[Condition]:
        yield from self.preconditions
        yield from self.postconditions
        yield from self.invariants

    def to_dict(self) -> dict[str, Any]:
        return {
            "preconditions": [c.to_dict() for c in self.preconditions],
            "postconditions": [c.to_dict() for c in self.postconditions],
            "invariants": [c.to_dict() for c in self.invariants],
        }


def contract_scope(
    phase: Phase, input_schema: Mapping[str, Any], output_schema: Mapping[str, Any]
) -> EnvSchema:
    """The environment schema a condition of ``phase`` is checked against."""
    scope = FACTS_SCHEMA.extended(input=schema_type(input_schema))
    if phase == "postcondition":
        scope = scope.extended(output=schema_type(output_schema))
    return scope


def check_contract(
    contract: Contract,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any],
    *,
    loc: Loc,
    meta_check: bool = True,
) -> list[Diagnostic]:
    """Registration checks: valid schemas, unique ids, predicates well typed in scope.

    ``meta_check=False`` skips validating the schemas against the Draft 2020-12
    meta-schema (about 12 ms a schema); the built-ins do, because the test suite
    checks every built-in schema that way, and a process should not pay for it on
    every start. Plugins are always checked.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    diags: list[Diagnostic] = []
    for name, schema in (("input", input_schema), ("output", output_schema)):
        try:
            if meta_check:
                Draft202012Validator.check_schema(dict(schema))
        except SchemaError as exc:
            diags.append(
                Diagnostic(
                    "lcl_contract_schema",
                    f"the {name} schema is not valid JSON Schema: {exc.message}",
                    loc,
                )
            )
        if schema.get("type") != "object":
            diags.append(
                Diagnostic("lcl_contract_schema", f"the {name} schema must describe an object", loc)
            )
    seen: set[str] = set()
    for cond in contract.conditions():
        if cond.id in seen or cond.id in ("input_schema", "output_schema"):
            diags.append(
                Diagnostic(
                    "lcl_contract_duplicate", f"condition id {cond.id!r} is used twice", cond.loc
                )
            )
        seen.add(cond.id)
        scope = contract_scope(cond.phase, input_schema, output_schema)
        try:
            cond.predicate.check(scope, where=cond.loc)
        except PredicateTypeError as exc:
            diags.extend(exc.diagnostics)
    return diags


@dataclass(frozen=True, slots=True)
class ConditionResult:
    """One condition's verdict. ``code`` is safe for ledgers (no values); ``reason`` is not."""

    condition_id: str
    phase: Phase
    satisfied: bool
    code: str
    reason: str
    location: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "condition_id": self.condition_id,
            "phase": self.phase,
            "satisfied": self.satisfied,
            "code": self.code,
            "reason": self.reason,
            "location": self.location,
        }


@dataclass(frozen=True, slots=True)
class ContractCheck:
    primitive_id: str
    phase: Phase
    results: tuple[ConditionResult, ...]

    @property
    def satisfied(self) -> bool:
        return all(r.satisfied for r in self.results)

    @property
    def violations(self) -> tuple[ConditionResult, ...]:
        return tuple(r for r in self.results if not r.satisfied)

    def to_dict(self) -> dict[str, Any]:
        return {
            "primitive_id": self.primitive_id,
            "phase": self.phase,
            "satisfied": self.satisfied,
            "results": [r.to_dict() for r in self.results],
        }


def _show(value: Any) -> str:
    if value is MISSING:
        return "missing"
    if isinstance(value, tuple):
        return f"[{len(value)} items]"
    if isinstance(value, Mapping):
        return "{...}"
    text = json.dumps(value) if isinstance(value, bool | int | str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _json_path(parts: Sequence[Any], root: str) -> str:
    out = root
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


class ContractValidator:
    """Run-time contract checks (compiled schema validators are cached per primitive)."""

    def __init__(self) -> None:
        self._validators: dict[tuple[str, str], Any] = {}

    def _validator(self, primitive: Primitive, which: str) -> Any:
        from jsonschema import Draft202012Validator

        key = (primitive.id, which)
        if key not in self._validators:
            schema = primitive.input_schema if which == "input" else primitive.output_schema
            self._validators[key] = Draft202012Validator(schema)
        return self._validators[key]

    def _schema(self, primitive: Primitive, phase: Phase, value: Any) -> list[ConditionResult]:
        which = "input" if phase == "precondition" else "output"
        cid = _SCHEMA_IDS[phase]
        errors = sorted(
            self._validator(primitive, which).iter_errors(value),
            key=lambda e: (list(map(str, e.absolute_path)), str(e.validator), e.message),
        )
        if not errors:
            return [
                ConditionResult(cid, phase, True, "schema_ok", f"the {which} matches its schema")
            ]
        return [
            ConditionResult(
                cid,
                phase,
                False,
                f"schema_{e.validator}",
                f"{_json_path(list(e.absolute_path), which)}: {e.message}",
                _json_path(list(e.absolute_path), which),
            )
            for e in errors
        ]

    def _conditions(
        self, conditions: Sequence[Condition], env: Mapping[str, Any]
    ) -> list[ConditionResult]:
        out = []
        for cond in conditions:
            ok = cond.predicate.holds(env)
            if ok:
                out.append(
                    ConditionResult(cond.id, cond.phase, True, "holds", f"`{cond.predicate}` holds")
                )
                continue
            shown = ", ".join(
                f"{p} = {_show(lookup(env, p.split('.')))}" for p in cond.predicate.paths
            )
            reason = f"`{cond.predicate}` is false" + (f" ({shown})" if shown else "")
            if cond.description:
                reason += f": {cond.description}"
            out.append(ConditionResult(cond.id, cond.phase, False, "predicate_false", reason))
        return out

    @staticmethod
    def _env(facts: Mapping[str, Any], input_: Any, output: Any = MISSING) -> dict[str, Any]:
        env = {k: v for k, v in facts.items() if k in ("codebase", "change", "intent")}
        env["input"] = input_
        if output is not MISSING:
            env["output"] = output
        return env

    def check_preconditions(
        self, primitive: Primitive, input_: Mapping[str, Any], facts: Mapping[str, Any]
    ) -> ContractCheck:
        """Input schema, then every precondition (all are reported, not just the first)."""
        results = self._schema(primitive, "precondition", input_)
        results += self._conditions(primitive.contract.preconditions, self._env(facts, input_))
        return ContractCheck(primitive.id, "precondition", tuple(results))

    def check_postconditions(
        self,
        primitive: Primitive,
        input_: Mapping[str, Any],
        output: Mapping[str, Any],
        facts: Mapping[str, Any],
    ) -> ContractCheck:
        """Output schema, then every postcondition."""
        results = self._schema(primitive, "postcondition", output)
        env = self._env(facts, input_, output)
        results += self._conditions(primitive.contract.postconditions, env)
        return ContractCheck(primitive.id, "postcondition", tuple(results))

    def check_invariants(
        self, primitive: Primitive, input_: Mapping[str, Any], facts: Mapping[str, Any]
    ) -> ContractCheck:
        """Every invariant (call before the step and again, with fresh facts, after it)."""
        results = self._conditions(primitive.contract.invariants, self._env(facts, input_))
        return ContractCheck(primitive.id, "invariant", tuple(results))
