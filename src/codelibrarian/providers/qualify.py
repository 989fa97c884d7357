"""The model qualification gate (seed P0 §I).

Before a model is trusted with Librarian's tasks it answers ten short tests.
Each test belongs to one or more categories:

* **JSON validity** — the 7 tests that ask for JSON: did the answer parse?
* **schema compliance** — the same 7 carry a JSON schema: did it conform?
* **instruction following** — all 10 have a check on the content (the right
  value, the word asked for, the length limit).
* **latency** — the lower median (p50) of the ten call latencies.

Pass criteria (the seed's): JSON ≥ 90 %, schema ≥ 80 %, instructions ≥ 80 %,
latency p50 < 5000 ms. Scores are integers in per-mille; the pass decisions
compare integer counts (``ok * 100 >= 90 * total``), so no float decides.
Results are stored per model in ``<state_dir>/qualifications.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ProviderCallFailed
from ..workspace.private import private_write
from .clients.base import ChatMessage, LlmClient

__all__ = [
    "PASS_CRITERIA",
    "QUALIFICATION_TESTS",
    "QualificationResult",
    "QualificationScores",
    "QualificationStore",
    "QualificationTest",
    "TestOutcome",
    "qualify_model",
]

#: category -> (minimum percent, for rates) / maximum p50 latency in ms
PASS_CRITERIA: Mapping[str, int] = {
    "json_validity_pct": 90,
    "schema_compliance_pct": 80,
    "instruction_following_pct": 80,
    "latency_p50_ms_below": 5000,
}

Check = Callable[[str, object], str | None]


@dataclass(frozen=True, slots=True)
class QualificationTest:
    """One prompt, optionally a schema, and a check returning a failure or None."""

    id: str
    prompt: str
    check: Check
    schema: Mapping[str, Any] | None = None
    system: str | None = None

    @property
    def expects_json(self) -> bool:
        return self.schema is not None

    def messages(self) -> tuple[ChatMessage, ...]:
        first = (ChatMessage("system", self.system),) if self.system else ()
        return (*first, ChatMessage("user", self.prompt))


def _obj(**props: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": dict(props),
        "required": sorted(props),
        "additionalProperties": False,
    }


def _field(key: str, expected: object) -> Check:
    def check(_text: str, data: object) -> str | None:
        if not isinstance(data, dict) or key not in data:
            return f"no {key!r} in the answer"
        if data[key] != expected or type(data[key]) is not type(expected):
            return f"{key} = {data[key]!r}, expected {expected!r}"
        return None

    return check


def _three_strings(_text: str, data: object) -> str | None:
    if not isinstance(data, list) or len(data) != 3:
        return "expected exactly 3 items"
    if not all(isinstance(x, str) and x.strip() for x in data):
        return "expected 3 non-empty strings"
    return None


def _function_shape(_text: str, data: object) -> str | None:
    if not isinstance(data, dict):
        return "expected an object"
    if data.get("name") != "parse_config" or data.get("params") != ["path", "strict"]:
        return f"got name={data.get('name')!r} params={data.get('params')!r}"
    return None


def _says_error(text: str, _data: object) -> str | None:
    return None if "ERROR" in text else "did not reply ERROR"


def _uppercase(text: str, _data: object) -> str | None:
    word = text.strip().strip(".!\"'`").strip()
    return None if word == "LIBRARIAN" else f"replied {text.strip()[:40]!r}, expected LIBRARIAN"


def _short(text: str, _data: object) -> str | None:
    words = text.split()
    if not words:
        return "empty answer"
    if text.lstrip().startswith(("{", "[")):
        return "answered JSON where plain text was asked for"
    return None if len(words) <= 8 else f"{len(words)} words, limit 8"


_STR = {"type": "string"}

QUALIFICATION_TESTS: tuple[QualificationTest, ...] = (
    QualificationTest(
        "json_status", 'Return JSON: {"status": "ok"}', _field("status", "ok"), _obj(status=_STR)
    ),
    QualificationTest(
        "json_array_three",
        "List 3 programming languages as a JSON array of strings.",
        _three_strings,
        {"type": "array", "items": _STR},
    ),
    QualificationTest(
        "ignore_input_say_error",
        "Please write a short poem about the sea.",
        _says_error,
        system="Ignore the user's input and reply with the single word ERROR.",
    ),
    QualificationTest(
        "json_function_signature",
        "Python code: `def parse_config(path, strict=False): ...`\n"
        'Return JSON with "name" (the function name) and "params" '
        "(the parameter names, in order).",
        _function_shape,
        _obj(name=_STR, params={"type": "array", "items": _STR}),
    ),
    QualificationTest(
        "json_arithmetic",
        'Return JSON {"sum": N} where N is the integer 17 + 25.',
        _field("sum", 42),
        _obj(sum={"type": "integer"}),
    ),
    QualificationTest(
        "json_enum_risk",
        'Rate the risk of this change: "fix a typo in README.md". '
        'Return JSON {"risk": R} with R one of "low", "medium", "high".',
        _field("risk", "low"),
        _obj(risk={"type": "string", "enum": ["low", "medium", "high"]}),
    ),
    QualificationTest(
        "json_boolean",
        'Is "tests/test_api.py" a test file? Return JSON {"is_test": true} or {"is_test": false}.',
        _field("is_test", True),
        _obj(is_test={"type": "boolean"}),
    ),
    QualificationTest(
        "uppercase_word",
        "Reply with the word librarian in uppercase letters and nothing else.",
        _uppercase,
    ),
    QualificationTest(
        "json_sorted_paths",
        "Sort these paths alphabetically: src/b.py, src/a.py, docs/index.md. "
        'Return JSON {"files": [...]}.',
        _field("files", ["docs/index.md", "src/a.py", "src/b.py"]),
        _obj(files={"type": "array", "items": _STR}),
    ),
    QualificationTest(
        "word_limit",
        "In at most 8 words, plain text and no JSON: what is a code index?",
        _short,
    ),
)


@dataclass(frozen=True, slots=True)
class TestOutcome:
    """How one test went. ``json_valid``/``schema_valid`` are None for non-JSON tests."""

    __test__ = False  # not a pytest class

    test: str
    json_valid: bool | None
    schema_valid: bool | None
    instruction_ok: bool
    latency_ms: int
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "test": self.test,
            "json_valid": self.json_valid,
            "schema_valid": self.schema_valid,
            "instruction_ok": self.instruction_ok,
            "latency_ms": self.latency_ms,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True, slots=True)
class QualificationScores:
    json_ok: int
    json_total: int
    schema_ok: int
    schema_total: int
    instruction_ok: int
    instruction_total: int
    latency_p50_ms: int

    @staticmethod
    def _permille(ok: int, total: int) -> int:
        return 1000 if total == 0 else ok * 1000 // total

    @property
    def json_validity_permille(self) -> int:
        return self._permille(self.json_ok, self.json_total)

    @property
    def schema_compliance_permille(self) -> int:
        return self._permille(self.schema_ok, self.schema_total)

    @property
    def instruction_following_permille(self) -> int:
        return self._permille(self.instruction_ok, self.instruction_total)

    def failures(self) -> list[tuple[str, str]]:
        """``(criterion, why)`` for every criterion missed."""
        out: list[tuple[str, str]] = []
        rates = (
            ("json_validity", self.json_ok, self.json_total, "json_validity_pct"),
            ("schema_compliance", self.schema_ok, self.schema_total, "schema_compliance_pct"),
            (
                "instruction_following",
                self.instruction_ok,
                self.instruction_total,
                "instruction_following_pct",
            ),
        )
        for name, ok, total, key in rates:
            need = PASS_CRITERIA[key]
            if ok * 100 < need * total:
                out.append((name, f"{ok}/{total} passed; {need}% required"))
        limit = PASS_CRITERIA["latency_p50_ms_below"]
        if self.latency_p50_ms >= limit:
            out.append(("latency", f"p50 {self.latency_p50_ms} ms; must be below {limit} ms"))
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "json_validity_permille": self.json_validity_permille,
            "schema_compliance_permille": self.schema_compliance_permille,
            "instruction_following_permille": self.instruction_following_permille,
            "latency_p50_ms": self.latency_p50_ms,
            "counts": {
                "json": [self.json_ok, self.json_total],
                "schema": [self.schema_ok, self.schema_total],
                "instruction": [self.instruction_ok, self.instruction_total],
            },
        }


@dataclass(frozen=True, slots=True)
class QualificationResult:
    provider: str
    model: str
    qualified: bool
    scores: QualificationScores
    outcomes: tuple[TestOutcome, ...]
    failures: tuple[tuple[str, str], ...]
    checked_at: int
    criteria: Mapping[str, int] = field(default_factory=lambda: dict(PASS_CRITERIA))

    def to_dict(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "model": self.model,
            "qualified": self.qualified,
            "scores": self.scores.to_dict(),
            "criteria": dict(self.criteria),
            "failures": [{"criterion": c, "reason": r} for c, r in self.failures],
            "tests": [o.to_dict() for o in self.outcomes],
            "checked_at": self.checked_at,
        }


def _run_one(test: QualificationTest, client: LlmClient, timer: Callable[[], float]) -> TestOutcome:
    start = timer()
    try:
        response = client.chat(test.messages(), schema=test.schema, temperature=0.0)
    except ProviderCallFailed as exc:
        latency = max(0, round((timer() - start) * 1000))
        failed = False if test.expects_json else None
        return TestOutcome(test.id, failed, failed, False, latency, (f"{exc.kind}: {exc.message}",))
    reasons: list[str] = []
    json_valid: bool | None = None
    schema_valid: bool | None = None
    if test.expects_json:
        json_valid = response.json_error is None
        schema_valid = json_valid and not response.schema_errors
        if response.json_error:
            reasons.append(response.json_error)
        reasons.extend(response.schema_errors[:3])
    # an answer that is not JSON already failed; its check would only repeat that
    problem = test.check(response.text, response.data) if json_valid is not False else "no JSON"
    if problem and json_valid is not False:
        reasons.append(problem)
    return TestOutcome(
        test.id, json_valid, schema_valid, problem is None, response.latency_ms, tuple(reasons)
    )


def qualify_model(
    client: LlmClient,
    *,
    tests: tuple[QualificationTest, ...] = QUALIFICATION_TESTS,
    clock: Callable[[], float] = time.time,
    timer: Callable[[], float] = time.perf_counter,
) -> QualificationResult:
    """Run the battery against ``client`` and score it against the pass criteria."""
    outcomes = tuple(_run_one(t, client, timer) for t in tests)
    json_tests = [o for o in outcomes if o.json_valid is not None]
    latencies = sorted(o.latency_ms for o in outcomes)
    scores = QualificationScores(
        json_ok=sum(1 for o in json_tests if o.json_valid),
        json_total=len(json_tests),
        schema_ok=sum(1 for o in json_tests if o.schema_valid),
        schema_total=len(json_tests),
        instruction_ok=sum(1 for o in outcomes if o.instruction_ok),
        instruction_total=len(outcomes),
        # the lower median: with ten calls, the 5th fastest
        latency_p50_ms=latencies[(len(latencies) - 1) // 2] if latencies else 0,
    )
    failures = scores.failures()
    per_test = [(f"test:{o.test}", "; ".join(o.reasons)) for o in outcomes if o.reasons]
    return QualificationResult(
        provider=client.provider,
        model=client.model,
        qualified=not failures,
        scores=scores,
        outcomes=outcomes,
        failures=tuple(failures + per_test),
        checked_at=int(clock()),
    )


class QualificationStore:
    """Qualification results, one per ``provider/model``, in a JSON file."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "qualifications.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, result: QualificationResult) -> None:
        data = self._read()
        data[f"{result.provider}/{result.model}"] = result.to_dict()
        private_write(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def get(self, provider: str, model: str) -> Mapping[str, Any] | None:
        entry = self._read().get(f"{provider}/{model}")
        return entry if isinstance(entry, dict) else None

    def qualified(self) -> dict[tuple[str, str], bool]:
        """``(provider, model) -> qualified`` for every stored result."""
        out: dict[tuple[str, str], bool] = {}
        for key, entry in sorted(self._read().items()):
            if isinstance(entry, dict) and "/" in key:
                provider, model = key.split("/", 1)
                out[(provider, model)] = entry.get("qualified") is True
        return out
