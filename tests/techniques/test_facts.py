"""The fact schema and fact files."""

from __future__ import annotations

import pytest

from codelibrarian.errors import UsageError
from codelibrarian.techniques.facts import FACTS_SCHEMA, default_facts, facts_from_mapping
from codelibrarian.techniques.predicates import typecheck


def test_every_fact_is_typed_and_has_a_default() -> None:
    paths = FACTS_SCHEMA.paths()
    defaults = default_facts()
    assert len(paths) == sum(len(v) for v in defaults.values())
    assert "change.touches_auth" in paths and "intent.keywords" in paths
    typecheck("change.touches_auth and codebase.has_tests", FACTS_SCHEMA)


def test_fact_files_are_checked() -> None:
    f = facts_from_mapping(
        {"codebase": {"has_tests": True}, "evidence": {"codebase.has_tests": ["t.py"]}}
    )
    assert f.env()["codebase"]["has_tests"] is True
    assert f.env()["change"]["present"] is False
    assert f.evidence == {"codebase.has_tests": ("t.py",)}
    with pytest.raises(UsageError, match=r"unknown fact codebase\.has_test"):
        facts_from_mapping({"codebase": {"has_test": True}})
    with pytest.raises(UsageError, match="must be int"):
        facts_from_mapping({"change": {"files_changed": "3"}})
    with pytest.raises(UsageError, match="unknown fact group"):
        facts_from_mapping({"repo": {}})
    assert facts_from_mapping({}).with_intent("fix the login").env()["intent"]["keywords"] == [
        "login"
    ]
