"""A third-party primitive and operator, as a plugin package would ship them."""

from __future__ import annotations

from typing import Any

from codelibrarian.techniques.operators import OperatorSpec, ParamSpec

LICENSE_SCAN: dict[str, Any] = {
    "id": "acme_license_scan",
    "name": "Scan licenses",
    "description": "List the licenses of the dependencies and flag incompatible ones.",
    "executor": "builtin",
    "category": "security",
    "instructions": "Read the dependency manifests and report each license.",
    "context": {"lanes": ["local"], "query": "licenses {task}", "budget": 1000, "role": "Reviewer"},
    "input": {"type": "object", "required": ["task"], "properties": {"task": {"type": "string"}}},
    "output": {
        "type": "object",
        "required": ["passed", "licenses"],
        "properties": {
            "passed": {"type": "boolean"},
            "licenses": {"type": "array", "items": {"type": "string"}},
        },
    },
    "contract": {"postconditions": [{"id": "listed", "when": "exists output.licenses"}]},
}

THROTTLE = OperatorSpec(
    "acme_throttle",
    "Run the body at most once per interval.",
    (ParamSpec("interval_ms", "int", "minimum time between runs", 1000, minimum=1),),
    min_children=1,
    max_children=1,
    children="the body",
)


def primitives() -> list[dict[str, Any]]:
    return [LICENSE_SCAN]


def broken() -> list[dict[str, Any]]:
    return [{**LICENSE_SCAN, "id": "acme_broken", "executor": "wizard"}]


def clash() -> list[dict[str, Any]]:
    return [{**LICENSE_SCAN, "id": "tp_bisect"}]
