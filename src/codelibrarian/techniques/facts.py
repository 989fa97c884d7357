"""The typed environment conditions are checked against: codebase, change and intent facts.

This module is the *schema* and the value type; the facts themselves are computed
by the shell (``codelibrarian.index.facts``) from the index and the trigger,
deterministically. ``intent`` facts are pure and computed here from the task text.

===========================  ==============  =============================================
path                         type            meaning
===========================  ==============  =============================================
codebase.languages           list<string>    parsed languages, most files first
codebase.primary_language    string          the first of them ("" for none)
codebase.file_count          int             indexed files
codebase.test_file_count     int             files that look like tests
codebase.has_tests           bool            at least one test file
codebase.frameworks          list<string>    frameworks seen in imports and manifests
codebase.has_auth            bool            authentication/authorization code present
codebase.has_api             bool            HTTP/RPC endpoints or API schemas present
codebase.has_database        bool            database access, models or migrations present
codebase.has_ui              bool            user-interface components present
codebase.has_ci              bool            CI configuration present
codebase.has_docs            bool            a docs folder or several Markdown documents
codebase.has_git             bool            the workspace is a git repository
change.present               bool            there is a current change
change.files_changed         int             files in the change
change.lines_added           int             added lines
change.lines_removed         int             removed lines
change.lines_changed         int             added + removed
change.languages             list<string>    languages of the changed files
change.touches_auth          bool            a changed file or line is about auth
change.touches_input         bool            a change parses or handles external input
change.touches_api           bool            a change is in API routes/handlers/schemas
change.touches_tests         bool            a test file changed
change.touches_database      bool            migrations, SQL or models changed
change.touches_ui            bool            UI components changed
change.touches_config        bool            configuration files changed
change.touches_dependencies  bool            a dependency manifest or lock file changed
change.touches_docs          bool            documentation changed
intent.text                  string          the task as given
intent.keywords              list<string>    its search keywords (``trigger.derive_keywords``)
===========================  ==============  =============================================

Every fact is always present (``false``/``0``/empty when not found); evidence —
the paths that made a fact true — travels beside the values, never inside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..trigger import derive_keywords
from .predicates import BOOL, INT, STRING, EnvSchema, PType, list_of, record

__all__ = [
    "CHANGE_FACTS",
    "CODEBASE_FACTS",
    "FACTS_SCHEMA",
    "INTENT_FACTS",
    "Facts",
    "default_facts",
    "facts_from_mapping",
    "intent_facts",
]

_STRINGS = list_of(STRING)

CODEBASE_FACTS: Mapping[str, PType] = {
    "languages": _STRINGS,
    "primary_language": STRING,
    "file_count": INT,
    "test_file_count": INT,
    "has_tests": BOOL,
    "frameworks": _STRINGS,
    "has_auth": BOOL,
    "has_api": BOOL,
    "has_database": BOOL,
    "has_ui": BOOL,
    "has_ci": BOOL,
    "has_docs": BOOL,
    "has_git": BOOL,
}
CHANGE_FACTS: Mapping[str, PType] = {
    "present": BOOL,
    "files_changed": INT,
    "lines_added": INT,
    "lines_removed": INT,
    "lines_changed": INT,
    "languages": _STRINGS,
    "touches_auth": BOOL,
    "touches_input": BOOL,
    "touches_api": BOOL,
    "touches_tests": BOOL,
    "touches_database": BOOL,
    "touches_ui": BOOL,
    "touches_config": BOOL,
    "touches_dependencies": BOOL,
    "touches_docs": BOOL,
}
INTENT_FACTS: Mapping[str, PType] = {"text": STRING, "keywords": _STRINGS}

#: the environment schema of every ``when`` clause, pattern condition and gate
FACTS_SCHEMA = EnvSchema.of(
    {
        "codebase": record(CODEBASE_FACTS),
        "change": record(CHANGE_FACTS),
        "intent": record(INTENT_FACTS),
    }
)


def _zero(t: PType) -> Any:
    if t.kind == "bool":
        return False
    if t.kind == "int":
        return 0
    if t.kind == "string":
        return ""
    return []


def _defaults(spec: Mapping[str, PType]) -> dict[str, Any]:
    return {name: _zero(t) for name, t in spec.items()}


def default_facts() -> dict[str, dict[str, Any]]:
    """Every fact at its empty value (no files, no change, no task)."""
    return {
        "codebase": _defaults(CODEBASE_FACTS),
        "change": _defaults(CHANGE_FACTS),
        "intent": _defaults(INTENT_FACTS),
    }


def intent_facts(task: str) -> dict[str, Any]:
    """``intent.*`` for a task text (pure)."""
    return {"text": task, "keywords": list(derive_keywords(task))}


def _check_value(path: str, t: PType, value: Any) -> Any:
    ok = (
        (t.kind == "bool" and isinstance(value, bool))
        or (t.kind == "int" and isinstance(value, int) and not isinstance(value, bool))
        or (t.kind == "string" and isinstance(value, str))
        or (
            t.kind == "list"
            and isinstance(value, list | tuple)
            and all(isinstance(v, str) for v in value)
        )
    )
    if not ok:
        raise UsageError(
            f"fact {path} must be {t}, got {value!r}",
            hint="Fix the facts file; docs/lcl.md lists every fact and its type.",
        )
    return list(value) if t.kind == "list" else value


@dataclass(frozen=True, slots=True)
class Facts:
    """Fact values (``group -> name -> value``) and the evidence behind true facts.

    ``evidence`` maps a dotted fact (``codebase.has_auth``) to repository paths;
    it is for explanations shown locally and is never put into a ledger.
    """

    values: Mapping[str, Mapping[str, Any]]
    evidence: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def env(self) -> dict[str, Any]:
        """The plain nested mapping a predicate is evaluated against."""
        return {group: dict(values) for group, values in sorted(self.values.items())}

    def to_dict(self) -> dict[str, Any]:
        return {
            "facts": self.env(),
            "evidence": {k: list(v) for k, v in sorted(self.evidence.items())},
        }

    def with_intent(self, task: str) -> Facts:
        values = dict(self.values)
        values["intent"] = intent_facts(task)
        return Facts(values, self.evidence)


def facts_from_mapping(data: Mapping[str, Any], *, source: str = "facts") -> Facts:
    """Facts from a JSON/TOML document (``{"codebase": {...}, "change": {...}}``).

    Missing facts take their empty value; unknown groups or names are errors that
    list the valid ones (a typo must not silently read as ``false``).
    """
    out = default_facts()
    specs = {"codebase": CODEBASE_FACTS, "change": CHANGE_FACTS, "intent": INTENT_FACTS}
    body = data.get("facts", data) if isinstance(data.get("facts"), Mapping) else data
    for group, values in body.items():
        if group == "evidence":
            continue
        if group not in specs:
            raise UsageError(
                f"{source}: unknown fact group {group!r}",
                hint=f"Groups: {', '.join(specs)}.",
            )
        if not isinstance(values, Mapping):
            raise UsageError(f"{source}: {group} must be a table of facts")
        for name, value in values.items():
            spec = specs[group]
            if name not in spec:
                raise UsageError(
                    f"{source}: unknown fact {group}.{name}",
                    hint=f"{group} facts: {', '.join(spec)}.",
                )
            out[group][name] = _check_value(f"{group}.{name}", spec[name], value)
    evidence_raw = data.get("evidence", {})
    evidence = {
        str(k): tuple(str(p) for p in v)
        for k, v in (evidence_raw.items() if isinstance(evidence_raw, Mapping) else ())
        if isinstance(v, list | tuple)
    }
    return Facts(out, evidence)
