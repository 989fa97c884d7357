"""The evaluator: total, exact and deterministic; well-typed values have their type."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from fractions import Fraction
from typing import Any

from hypothesis import given

from codelibrarian.techniques.predicates import MISSING, PType, evaluate, infer, parse
from codelibrarian.techniques.predicates.ast import Expr, unparse
from tests.techniques.strategies import SCHEMA, VALID_PREDICATES, environments, typed_exprs

ENV = {
    "codebase": {"has_tests": False, "file_count": 12, "languages": ["python", "go"]},
    "change": {"touches_auth": True, "present": True, "lines_changed": 40, "languages": []},
    "intent": {"keywords": ["flaky", "login"], "text": "why is login flaky"},
    "steps": {"tp_hypothesis": {"output": {"confidence": 0.8, "score": 3}}},
}


def test_semantics() -> None:
    assert evaluate("codebase.has_tests == false", ENV) is True
    assert evaluate("'go' in codebase.languages", ENV) is True
    assert evaluate("'log' in intent.text", ENV) is True
    assert evaluate("steps.tp_hypothesis.output.confidence == 0.8", ENV) is True  # exact
    assert evaluate("steps.tp_hypothesis.output.confidence > 0.79999", ENV) is True
    assert evaluate("[1, 2] == [1, 2.0]", ENV) is True


def test_missing_values() -> None:
    assert evaluate("exists steps.tp_bisect.output", ENV) is False
    assert evaluate("steps.tp_bisect.output.converged == true", ENV) is False
    assert evaluate("steps.tp_bisect.output.converged != true", ENV) is False
    assert evaluate("not steps.tp_bisect.output.converged", ENV) is True
    assert evaluate("steps.tp_bisect.output.converged", ENV) is MISSING
    assert evaluate("x == 1", {"x": None}) is False


def test_ill_typed_environments_never_raise() -> None:
    env: dict[str, Any] = {"a": {"b": "text"}, "n": float("nan"), "o": object()}
    for text in ("a.b > 1", "a.b.c == 1", "n == n", "o == o", "'x' in a", "1 in a.b", "not a"):
        assert evaluate(text, env) in (True, False, MISSING)


def _check_type(value: Any, t: PType) -> None:
    if value is MISSING:
        assert t.optional or t.kind == "any", f"{t} should not be missing"
        return
    if t.kind == "bool":
        assert isinstance(value, bool)
    elif t.kind == "int":
        assert isinstance(value, int) and not isinstance(value, bool)
    elif t.kind == "number":
        assert isinstance(value, int | Fraction) and not isinstance(value, bool)
    elif t.kind == "string":
        assert isinstance(value, str)
    elif t.kind == "list":
        assert isinstance(value, tuple)
        for item in value:
            if t.elem is not None:
                _check_type(item, t.elem)


@given(typed_exprs(), environments())
def test_well_typed_expressions_evaluate_to_their_type(expr: Expr, env: dict[str, Any]) -> None:
    text = unparse(expr)
    t, diags = infer(parse(text).expr, SCHEMA, text=text)
    assert not diags, [d.render() for d in diags]
    _check_type(evaluate(parse(text), env), t)


_SCRIPT = """
import json, sys
from codelibrarian.techniques.predicates import evaluate
from codelibrarian.techniques import lcl
env = json.loads(sys.argv[1])
texts = json.loads(sys.argv[2])
out = [repr(evaluate(t, env)) for t in texts]
out.append(json.dumps(lcl.compile("preset_security_review", facts=None).to_dict(), sort_keys=True))
out.append(json.dumps(lcl.compile("tc_root_cause_recovery").to_dict(), sort_keys=True))
print("\\n".join(out))
"""


def test_evaluation_and_compilation_are_deterministic_across_hash_seeds() -> None:
    digests = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _SCRIPT, json.dumps(ENV), json.dumps(list(VALID_PREDICATES))],
            env=env, capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        digests.add(hashlib.sha256(out.stdout.encode()).hexdigest())
    assert len(digests) == 1
