"""Codebase and change facts, computed from the index and the trigger (the shell side).

``techniques.facts`` declares the typed fact schema that conditions are checked
against; this module computes the values, deterministically, from

* the index — file paths and languages, import specs — for ``codebase.*``;
* the current change (parsed diffs) for ``change.*``;
* a few well-known files on disk (CI configuration lives in hidden folders the
  index skips) for ``codebase.has_ci``.

Each true fact carries evidence: up to five repository paths, sorted, that made it
true. The detection rules (path names, import prefixes, changed-line keywords) are
tables in :mod:`.fact_rules`: heuristics, stated so a reader can check why a fact is true.
Cost: two indexed queries and a pass over the paths — about 20–40 ms for a
2,000-file index (see benchmarks/RESULTS.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..techniques.facts import Facts, default_facts, intent_facts
from ..workspace.git import FileDiff
from .fact_rules import (
    AUTH_WORDS,
    CI_FILES,
    CODE_LANGUAGES,
    INPUT_WORDS,
    ROUTE_WORDS,
    SQL_WORDS,
    classify_import,
    is_dep_file,
    path_kinds,
)
from .languages import language_for

if TYPE_CHECKING:
    from .storage import RecordReader

__all__ = ["EVIDENCE_LIMIT", "change_facts", "codebase_facts", "compute_facts"]

EVIDENCE_LIMIT = 5


class _Evidence:
    def __init__(self) -> None:
        self._by: dict[str, set[str]] = {}

    def add(self, fact: str, path: str) -> None:
        self._by.setdefault(fact, set()).add(path)

    def has(self, fact: str) -> bool:
        return bool(self._by.get(fact))

    def paths(self, fact: str) -> set[str]:
        return self._by.get(fact, set())

    def export(self) -> dict[str, tuple[str, ...]]:
        return {k: tuple(sorted(v)[:EVIDENCE_LIMIT]) for k, v in sorted(self._by.items()) if v}


def _ranked_languages(languages: Iterable[str]) -> list[str]:
    counts = Counter(lang for lang in languages if lang not in ("text", ""))
    return [lang for lang, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def codebase_facts(
    store: RecordReader, *, root: Path | None = None, is_git: bool = False
) -> tuple[dict[str, Any], _Evidence]:
    """``codebase.*`` values and their evidence (see the module docstring)."""
    ev = _Evidence()
    files = store.files()
    paths = [f.path for f in files]
    code = {f.path for f in files if f.language in CODE_LANGUAGES}
    parsed = [f.language for f in files if f.language in CODE_LANGUAGES]
    kinds_of = {p: path_kinds(p) for p in paths}
    tests = [p for p in paths if "test" in kinds_of[p]]
    for p in tests:
        ev.add("codebase.has_tests", p)
    for p in paths:
        k = kinds_of[p]
        # names of data files and documents say little; code paths and schema files do
        trusted = p in code or "schema" in k
        if "auth" in k and p in code and "test" not in k:
            ev.add("codebase.has_auth", p)
        if "api" in k and trusted:
            ev.add("codebase.has_api", p)
        if "database" in k and trusted:
            ev.add("codebase.has_database", p)
        if "ui" in k:
            ev.add("codebase.has_ui", p)
    frameworks: set[str] = set()
    test_set = set(tests)
    seen: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    for path, spec, _line, resolved in store.import_specs():
        if resolved:  # a module of this repository, not a library
            continue
        got = seen.get(spec)
        if got is None:
            got = seen[spec] = classify_import(spec)
        framework, kinds = got
        if framework is not None:
            frameworks.add(framework)
            ev.add(f"codebase.frameworks.{framework}", path)
        if path not in test_set:
            for fact in kinds:
                ev.add(fact, path)
    docs = [p for p in paths if "docs" in kinds_of[p]]
    has_docs = any(p.lower().startswith(("docs/", "doc/")) for p in docs) or len(docs) >= 3
    if has_docs:
        for p in docs:
            ev.add("codebase.has_docs", p)
    if root is not None:
        for name in CI_FILES:
            if (root / name).exists():
                ev.add("codebase.has_ci", name)
    languages = _ranked_languages(parsed)
    values = {
        "languages": languages,
        "primary_language": languages[0] if languages else "",
        "file_count": len(paths),
        "test_file_count": len(tests),
        "has_tests": bool(tests),
        "frameworks": sorted(frameworks),
        "has_auth": ev.has("codebase.has_auth"),
        "has_api": ev.has("codebase.has_api"),
        "has_database": ev.has("codebase.has_database"),
        "has_ui": ev.has("codebase.has_ui"),
        "has_ci": ev.has("codebase.has_ci"),
        "has_docs": has_docs,
        "has_git": is_git,
    }
    return values, ev


def _changed_lines(diff: FileDiff) -> Iterable[str]:
    for hunk in diff.hunks:
        for line in hunk.lines:
            if line[:1] in "+-" and not line.startswith(("+++", "---")):
                yield line[1:]


def change_facts(
    changes: Sequence[FileDiff], *, codebase_evidence: _Evidence | None = None
) -> tuple[dict[str, Any], _Evidence]:
    """``change.*`` values and their evidence from the parsed diffs of the change."""
    ev = _Evidence()
    known = codebase_evidence or _Evidence()
    added = removed = 0
    paths = sorted({d.path for d in changes})
    for d in sorted(changes, key=lambda d: (d.path, d.old_path or "")):
        p = d.path
        k = path_kinds(p)
        lines = list(_changed_lines(d))
        for hunk in d.hunks:
            for line in hunk.lines:
                if line.startswith("+") and not line.startswith("+++"):
                    added += 1
                elif line.startswith("-") and not line.startswith("---"):
                    removed += 1
        text = "\n".join(lines)
        is_test = "test" in k
        is_code = language_for(p)[1] is not None
        if is_test:
            ev.add("change.touches_tests", p)
        if not is_test:
            auth_path = is_code and "auth" in k
            if auth_path or p in known.paths("codebase.has_auth") or AUTH_WORDS.search(text):
                ev.add("change.touches_auth", p)
            if INPUT_WORDS.search(text):
                ev.add("change.touches_input", p)
            if "api" in k or ROUTE_WORDS.search(text) or p in known.paths("codebase.has_api"):
                ev.add("change.touches_api", p)
            if "database" in k or SQL_WORDS.search(text):
                ev.add("change.touches_database", p)
        if "ui" in k:
            ev.add("change.touches_ui", p)
        if "config" in k:
            ev.add("change.touches_config", p)
        if is_dep_file(p):
            ev.add("change.touches_dependencies", p)
        if "docs" in k:
            ev.add("change.touches_docs", p)
    values = {
        "present": bool(paths),
        "files_changed": len(paths),
        "lines_added": added,
        "lines_removed": removed,
        "lines_changed": added + removed,
        "languages": _ranked_languages(language_for(p)[0] for p in paths if language_for(p)[1]),
    }
    for name in (
        "touches_auth", "touches_input", "touches_api", "touches_tests", "touches_database",
        "touches_ui", "touches_config", "touches_dependencies", "touches_docs",
    ):  # fmt: skip
        values[name] = ev.has(f"change.{name}")
    return values, ev


def compute_facts(
    store: RecordReader,
    changes: Sequence[FileDiff] = (),
    *,
    task: str = "",
    root: Path | None = None,
    is_git: bool = False,
) -> Facts:
    """All facts for one planning call: codebase, change and intent, with evidence."""
    values: dict[str, Mapping[str, Any]] = dict(default_facts())
    codebase, cev = codebase_facts(store, root=root, is_git=is_git)
    change, chev = change_facts(changes, codebase_evidence=cev)
    values["codebase"] = codebase
    values["change"] = change
    values["intent"] = intent_facts(task)
    evidence = {**cev.export(), **chev.export()}
    return Facts(values, evidence)
