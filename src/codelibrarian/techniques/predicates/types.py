"""Types of the predicate language and the environment schema they are checked against.

Types: ``bool``, ``int``, ``number`` (``int`` is a ``number``), ``string`` (optionally
with the allowed values, from a JSON Schema ``enum``), ``list<T>``, records (groups
of named fields: ``codebase``, ``steps.tp_bisect.output``) and ``any`` (JSON Schema
parts with no single type). A type may be *optional*: the value can be missing at
run time (every step output is optional — the step may not have run yet).

An **environment schema** is the root record: the facts (``codebase``, ``change``,
``intent``), plus ``input``/``output`` in contracts and ``steps`` in compositions.
:func:`schema_type` turns a JSON Schema (a primitive's output) into a type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

__all__ = [
    "ANY",
    "BOOL",
    "INT",
    "NUMBER",
    "STRING",
    "EnvSchema",
    "PType",
    "list_of",
    "record",
    "schema_type",
]

Kind = Literal["bool", "int", "number", "string", "list", "record", "any", "empty"]


@dataclass(frozen=True, slots=True)
class PType:
    kind: Kind
    optional: bool = False
    elem: PType | None = None
    fields: tuple[tuple[str, PType], ...] = ()
    enum: tuple[str, ...] = ()

    def field(self, name: str) -> PType | None:
        for key, t in self.fields:
            if key == name:
                return t
        return None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.fields)

    def required(self) -> PType:
        return replace(self, optional=False)

    def maybe(self) -> PType:
        return replace(self, optional=True)

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "number")

    @property
    def scalar(self) -> bool:
        return self.kind in ("bool", "int", "number", "string")

    def __str__(self) -> str:
        if self.kind == "list":
            inner = "list<" + (str(self.elem) if self.elem else "any") + ">"
        elif self.kind == "record":
            inner = "record{" + ", ".join(self.names) + "}"
        elif self.kind == "empty":
            inner = "list<?>"
        else:
            inner = self.kind
        return inner + ("?" if self.optional else "")


BOOL = PType("bool")
INT = PType("int")
NUMBER = PType("number")
STRING = PType("string")
ANY = PType("any")


def list_of(elem: PType) -> PType:
    return PType("list", elem=elem.required())


def record(
    fields: Mapping[str, PType] | Iterable[tuple[str, PType]], *, optional: bool = False
) -> PType:
    items = sorted(dict(fields).items())
    return PType("record", optional=optional, fields=tuple(items))


def _all_optional(t: PType) -> PType:
    """``t`` with itself and every nested field marked optional."""
    if t.kind == "record":
        return PType(
            "record", optional=True, fields=tuple((k, _all_optional(v)) for k, v in t.fields)
        )
    return t.maybe()


def schema_type(schema: Mapping[str, Any] | bool, *, depth: int = 0) -> PType:
    """The predicate type of values valid under a JSON Schema (``any`` where ambiguous)."""
    if not isinstance(schema, Mapping) or depth > 16:
        return ANY
    raw = schema.get("type")
    types = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, list) else []
    nullable = "null" in types
    types = [t for t in types if t != "null"]
    if not types and "enum" in schema:
        values = schema["enum"]
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            return PType("string", enum=tuple(sorted(values)))
        return ANY
    if len(types) != 1:
        return ANY.maybe() if nullable else ANY
    kind = types[0]
    out: PType
    if kind == "boolean":
        out = BOOL
    elif kind == "integer":
        out = INT
    elif kind == "number":
        out = NUMBER
    elif kind == "string":
        values = schema.get("enum")
        enum = (
            tuple(sorted(v for v in values if isinstance(v, str)))
            if isinstance(values, list)
            else ()
        )
        out = PType("string", enum=enum)
    elif kind == "array":
        out = list_of(schema_type(schema.get("items", {}), depth=depth + 1))
    elif kind == "object":
        props = schema.get("properties", {})
        if not isinstance(props, Mapping) or not props:
            return ANY.maybe() if nullable else ANY
        required = set(schema.get("required", ()) or ())
        fields = {}
        for name, sub in props.items():
            t = schema_type(sub, depth=depth + 1)
            fields[str(name)] = t if name in required else t.maybe()
        out = record(fields)
    else:
        out = ANY
    return out.maybe() if nullable else out


@dataclass(frozen=True, slots=True)
class EnvSchema:
    """The typed environment a predicate is checked against (a root record)."""

    root: PType

    @classmethod
    def of(cls, groups: Mapping[str, PType]) -> EnvSchema:
        return cls(record(groups))

    def extended(self, **groups: PType) -> EnvSchema:
        fields = dict(self.root.fields)
        fields.update(groups)
        return EnvSchema(record(fields))

    def with_steps(self, outputs: Mapping[str, Mapping[str, Any] | None]) -> EnvSchema:
        """Add ``steps.<id>.status`` and ``steps.<id>.output.*`` (all optional)."""
        status = PType("string", optional=True, enum=("failed", "skipped", "succeeded"))
        steps: dict[str, PType] = {}
        for step_id, schema in outputs.items():
            out = _all_optional(schema_type(schema)) if schema is not None else ANY.maybe()
            steps[step_id] = record({"status": status, "output": out}, optional=True)
        return self.extended(steps=record(steps))

    def paths(self) -> tuple[str, ...]:
        """Every leaf path, sorted (for suggestions and docs)."""
        out: list[str] = []

        def walk(prefix: str, t: PType) -> None:
            if t.kind == "record":
                for name, sub in t.fields:
                    walk(f"{prefix}.{name}" if prefix else name, sub)
            else:
                out.append(prefix)

        walk("", self.root)
        return tuple(sorted(out))
