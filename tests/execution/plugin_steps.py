"""Test primitives and their executors, shipped like a plugin package would ship them.

``test_noop`` does nothing; ``test_sleep`` sleeps (cooperatively: a timebox can stop
it, and it leaves a marker file saying so); ``test_think`` is an llm step and
``test_agent`` an agent step with small schemas.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

_CTX = {"lanes": ["local"], "query": "{task}", "budget": 400, "role": "Thinker"}
_TASK = {"type": "object", "required": ["task"], "properties": {"task": {"type": "string"}}}


def _prim(pid: str, executor: str, output: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "name": pid.replace("_", " "),
        "description": f"{pid}, for tests.",
        "executor": executor,
        "category": "analysis",
        "instructions": f"Do what {pid} does.",
        "context": dict(_CTX),
        "input": extra.pop("input", _TASK),
        "output": output,
        **extra,
    }


NOOP = _prim(
    "test_noop",
    "builtin",
    {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
)
SLEEP = _prim(
    "test_sleep",
    "builtin",
    {"type": "object", "required": ["slept_ms"], "properties": {"slept_ms": {"type": "integer"}}},
    input={
        "type": "object",
        "required": ["task"],
        "properties": {
            "task": {"type": "string"},
            "ms": {"type": "integer"},
            "marker": {"type": "string"},
        },
    },
)
THINK = _prim(
    "test_think",
    "llm",
    {
        "type": "object",
        "required": ["conclusion", "confidence"],
        "properties": {
            "conclusion": {"type": "string"},
            "confidence": {"type": "integer", "minimum": 0, "maximum": 1000},
        },
    },
    capabilities={"required": ["reasoning"]},
    contract={"postconditions": [{"id": "named", "when": 'output.conclusion != ""'}]},
)
AGENT = _prim(
    "test_agent",
    "agent",
    {
        "type": "object",
        "required": ["conclusion"],
        "properties": {"conclusion": {"type": "string"}, "score": {"type": "integer"}},
    },
    contract={"postconditions": [{"id": "named", "when": 'output.conclusion != ""'}]},
)


def primitives() -> list[dict[str, Any]]:
    return [NOOP, SLEEP, THINK, AGENT]


def _noop(ctx: Any) -> dict[str, Any]:
    return {"ok": True}


def _sleep(ctx: Any) -> dict[str, Any]:
    ms = int(ctx.input.get("ms", 0))
    marker = ctx.input.get("marker")
    started = time.monotonic()
    try:
        while (time.monotonic() - started) * 1000 < ms:
            ctx.token.sleep(0.01)
    except BaseException:
        if marker:
            # write then rename: the test polls for the file and must never read it half-written
            partial = Path(f"{marker}.partial")
            partial.write_text(f"stopped after {int((time.monotonic() - started) * 1000)} ms")
            partial.replace(marker)
        raise
    return {"slept_ms": ms}


def executors() -> dict[str, Any]:
    return {"test_noop": _noop, "test_sleep": _sleep}
