"""A small JSON Schema checker for the subset LLM output schemas use.

Supported keywords: ``type`` (one or a list), ``properties``, ``required``,
``additionalProperties: false``, ``items``, ``minItems``, ``maxItems``, ``enum``,
``const``, ``minLength``. Unknown keywords are ignored. Returns human-readable
problems (empty when the value conforms), in a deterministic order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["schema_problems"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),
    "integer": (int,),
}


def _is_type(value: object, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def schema_problems(value: object, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (an empty list when it conforms)."""
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(value, n) for n in names):
            return [f"{path}: expected {'/'.join(names)}, got {type(value).__name__}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: expected {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {list(schema['enum'])!r}")
    if isinstance(value, str) and len(value) < int(schema.get("minLength", 0)):
        problems.append(f"{path}: shorter than {schema['minLength']}")
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: missing required {key!r}")
        if schema.get("additionalProperties") is False:
            for key in sorted(k for k in value if k not in props):
                problems.append(f"{path}: unexpected property {key!r}")
        for key in sorted(props):
            if key in value:
                problems.extend(schema_problems(value[key], props[key], f"{path}.{key}"))
    if isinstance(value, list):
        if "minItems" in schema and len(value) < int(schema["minItems"]):
            problems.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > int(schema["maxItems"]):
            problems.append(f"{path}: more than {schema['maxItems']} items")
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                problems.extend(schema_problems(item, items, f"{path}[{i}]"))
    return problems
