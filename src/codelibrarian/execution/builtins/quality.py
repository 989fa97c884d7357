"""Builtin checks: secrets, test gaps, risk, debt markers and documentation gaps.

* ``tp_secret_scan`` — the workspace secret scanner over the changed files (or
  every indexed file); findings name the path, line and rule, never the value.
  A changed file on a sensitive path (``.env``, keys...) is a finding too.
* ``tp_test_gap_analysis`` — a public definition is *tested* when a test file
  uses its name; the others are gaps. Coverage is in thousandths.
* ``tp_risk_scan`` — per file: churn (commits touching it among the last 300) ×
  centrality (PageRank over the index's graph) × size of the change (changed
  lines), as the integer cube root of the three per-mille factors, plus flagged
  risks (secrets and sensitive paths: high; danger zones, large changes,
  dependency manifests, migrations, untested changed definitions: medium/low).
  The change's risk is the highest file risk, raised to 900 by any high-severity
  risk and to 500 by any medium one; it passes when no risk is high.
* ``tp_debt_inventory`` — TODO/FIXME/HACK/deprecated markers and oversized
  definitions.
* ``tp_doc_gap_analysis`` — public definitions without a docstring or doc
  comment, and the Markdown files that mention the focus modules.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Any

from ...sources.ranking import is_test_path
from ...workspace.secrets import is_sensitive_path, scan_text
from . import BuiltinContext, BuiltinFn
from .analysis import _DEF_KINDS, _spans, changed_symbols

__all__ = ["EXECUTORS"]

_MEDIUM_RULES = ("generic", "password", "url_credentials")
_MANIFESTS = frozenset(
    {
        "package.json",
        "package-lock.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "go.mod",
        "go.sum",
        "cargo.toml",
        "cargo.lock",
        "gemfile",
        "gemfile.lock",
        "pom.xml",
        "build.gradle",
        "yarn.lock",
        "poetry.lock",
    }
)
_MAX_BYTES = 1_048_576


def _read(ctx: BuiltinContext, path: str) -> str | None:
    p = ctx.root / path
    try:
        if not p.is_file() or p.stat().st_size > _MAX_BYTES:
            return None
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _severity(rule: str) -> str:
    return "medium" if rule.startswith(_MEDIUM_RULES) else "high"


def _scope_files(ctx: BuiltinContext, scope: str) -> list[str]:
    if scope == "workspace":
        return sorted(f.path for f in ctx.store.files())
    return list(ctx.changed_paths)


def secret_scan(ctx: BuiltinContext) -> dict[str, Any]:
    scope = str(ctx.input.get("scope", "change"))
    limit = int(ctx.input.get("max_findings", 200))
    files = _scope_files(ctx, scope)
    findings: list[dict[str, Any]] = []
    scanned = 0
    for path in files:
        ctx.check()
        rule = is_sensitive_path(path)
        if rule is not None:
            findings.append(
                {"path": path, "line": 1, "rule": f"sensitive_path:{rule}", "severity": "high"}
            )
        text = _read(ctx, path)
        if text is None:
            continue
        scanned += 1
        for f in scan_text(text):
            findings.append(
                {"path": path, "line": f.line, "rule": f.rule, "severity": _severity(f.rule)}
            )
    findings.sort(key=lambda f: (f["path"], f["line"], f["rule"]))
    return {
        "passed": not findings,
        "files_scanned": scanned,
        "finding_count": len(findings),
        "findings": findings[:limit],
        "paths": sorted({f["path"] for f in findings}),
        "truncated": len(findings) > limit,
    }


def _test_uses(ctx: BuiltinContext) -> dict[str, set[str]]:
    """name -> the test files that use it."""
    uses: dict[str, set[str]] = defaultdict(set)
    for r in ctx.store.references():
        if is_test_path(r.path):
            uses[r.name].add(r.path)
    return uses


def _focus(ctx: BuiltinContext) -> list[str]:
    given = [str(f) for f in ctx.input.get("files", ()) or ()]
    if given:
        return sorted(set(given))
    changed = [p for p in ctx.changed_paths if not is_test_path(p)]
    if changed:
        return changed
    return sorted(f.path for f in ctx.store.files() if not is_test_path(f.path))


def test_gap_analysis(ctx: BuiltinContext) -> dict[str, Any]:
    uses = _test_uses(ctx)
    untested: list[dict[str, str]] = []
    tested: list[dict[str, Any]] = []
    for path in _focus(ctx):
        ctx.check()
        for s in ctx.store.symbols(path=path):
            if s.kind not in _DEF_KINDS or s.name.startswith("_") or s.kind == "constant":
                continue
            tests = sorted(uses.get(s.name, ()))
            if tests:
                tested.append({"path": path, "symbol": s.name, "tests": tests[:20]})
            else:
                untested.append({"path": path, "symbol": s.name, "kind": s.kind})
    total = len(tested) + len(untested)
    return {
        "untested": untested[:1000],
        "tested": tested[:1000],
        "tests": sorted({t for x in tested for t in x["tests"]}),
        "coverage_per_mille": 1000 if total == 0 else len(tested) * 1000 // total,
        "paths": sorted({u["path"] for u in untested})[:200],
    }


def _icbrt(n: int) -> int:
    lo, hi = 0, 1001
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid * mid * mid <= n:
            lo = mid
        else:
            hi = mid - 1
    return lo


def risk_scan(ctx: BuiltinContext) -> dict[str, Any]:
    import pathspec

    from ...index.repomap import rank_files
    from ...workspace.git import recent_commits

    scope = str(ctx.input.get("scope", "change"))
    changes = {d.path: d for d in ctx.changes}
    files = _scope_files(ctx, scope)
    try:
        commits = recent_commits(ctx.root, limit=300)
    except Exception:  # outside git there is no churn to read
        commits = ()
    churn: dict[str, int] = defaultdict(int)
    for c in commits:
        for f in c.files:
            churn[f] += 1
    ctx.check()
    ranks = rank_files(ctx.store)
    top = max(ranks.values(), default=1) or 1
    zones = [pathspec.GitIgnoreSpec.from_lines([p]) for p in ctx.config.policy.danger_zones]
    uses = _test_uses(ctx) if changes else {}
    risks: list[dict[str, str]] = []
    file_risk: dict[str, int] = {}
    for path in files:
        ctx.check()
        d = changes.get(path)
        lines = sum(len(h.lines) for h in d.hunks) if d else 0
        churn_pm = min(1000, churn.get(path, 0) * 50)
        central_pm = ranks.get(path, 0) * 1000 // top
        size_pm = min(1000, lines * 1000 // 300) if d else 500
        file_risk[path] = _icbrt(churn_pm * central_pm * size_pm)
        rule = is_sensitive_path(path)
        if rule is not None:
            risks.append(
                {
                    "path": path,
                    "kind": "sensitive_path",
                    "severity": "high",
                    "reason": f"matches the sensitive-path rule {rule}",
                }
            )
        text = _read(ctx, path)
        found = scan_text(text) if text else ()
        if found:
            risks.append(
                {
                    "path": path,
                    "kind": "secret",
                    "severity": "high",
                    "reason": f"{len(found)} secret finding(s) ({found[0].rule})",
                }
            )
        if any(z.match_file(path) for z in zones):
            risks.append(
                {
                    "path": path,
                    "kind": "danger_zone",
                    "severity": "medium",
                    "reason": "in a configured danger zone",
                }
            )
        if churn.get(path, 0) >= 15:
            risks.append(
                {
                    "path": path,
                    "kind": "churn",
                    "severity": "medium",
                    "reason": f"changed in {churn[path]} of the last {len(commits)} commits",
                }
            )
        if lines > 300:
            risks.append(
                {
                    "path": path,
                    "kind": "large_change",
                    "severity": "medium",
                    "reason": f"{lines} changed lines",
                }
            )
        name = PurePosixPath(path).name.lower()
        if name in _MANIFESTS or name.startswith("requirements"):
            risks.append(
                {
                    "path": path,
                    "kind": "dependency_change",
                    "severity": "medium",
                    "reason": "a dependency manifest",
                }
            )
        if "migration" in path.lower():
            risks.append(
                {
                    "path": path,
                    "kind": "migration",
                    "severity": "medium",
                    "reason": "a schema migration",
                }
            )
        if d is not None and not is_test_path(path):
            changed = changed_symbols(ctx.store.symbols(path=path), _spans(d, ctx.root))
            bare = [s.name for s in changed if not s.name.startswith("_") and s.name not in uses]
            if bare:
                risks.append(
                    {
                        "path": path,
                        "kind": "untested",
                        "severity": "low",
                        "reason": f"{len(bare)} changed definition(s) no test uses",
                    }
                )
    overall = max(file_risk.values(), default=0)
    severities = {r["severity"] for r in risks}
    if "high" in severities:
        overall = max(overall, 900)
    elif "medium" in severities:
        overall = max(overall, 500)
    risks.sort(
        key=lambda r: ({"high": 0, "medium": 1, "low": 2}[r["severity"]], r["path"], r["kind"])
    )
    return {
        "passed": "high" not in severities,
        "risk_per_mille": min(1000, overall),
        "risks": risks[:500],
        "paths": sorted(file_risk, key=lambda p: (-file_risk[p], p))[:50],
    }  # fmt: skip


_MARKERS = re.compile(r"\b(TODO|FIXME|HACK|XXX|@deprecated|DEPRECATED|deprecated)\b")
_KIND = {"todo": "todo", "xxx": "todo", "fixme": "fixme", "hack": "hack"}


def debt_inventory(ctx: BuiltinContext) -> dict[str, Any]:
    limit = int(ctx.input.get("max_items", 200))
    large = int(ctx.input.get("large_symbol_lines", 120))
    items: list[dict[str, Any]] = []
    for f in ctx.store.files():
        ctx.check()
        text = _read(ctx, f.path)
        if text is None or ctx.is_sensitive(f.path):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = _MARKERS.search(line)
            if m:
                word = m.group(1).lower().lstrip("@")
                kind = _KIND.get(word, "deprecated")
                items.append({"path": f.path, "line": n, "kind": kind, "text": line.strip()[:200]})
    for s in ctx.store.symbols():
        if s.kind in _DEF_KINDS and s.end_line - s.start_line + 1 >= large:
            items.append(
                {
                    "path": s.path,
                    "line": s.start_line,
                    "kind": "large_symbol",
                    "text": f"{s.name}: {s.end_line - s.start_line + 1} lines"[:200],
                }
            )
    items.sort(key=lambda i: (i["path"], i["line"], i["kind"]))
    return {
        "items": items[:limit],
        "paths": sorted({i["path"] for i in items})[:200],
        "item_count": len(items),
    }


def doc_gap_analysis(ctx: BuiltinContext) -> dict[str, Any]:
    focus = (
        _focus(ctx)
        if ctx.input.get("files")
        else [f.path for f in ctx.store.files() if not is_test_path(f.path)]
    )
    undocumented: list[dict[str, str]] = []
    total = 0
    for path in focus:
        ctx.check()
        for s in ctx.store.symbols(path=path):
            if s.kind not in _DEF_KINDS or s.name.startswith("_") or s.kind == "constant":
                continue
            total += 1
            if not s.doc:
                undocumented.append({"path": path, "symbol": s.name, "kind": s.kind})
    stems = {
        PurePosixPath(p).stem for p in focus if PurePosixPath(p).stem not in ("__init__", "index")
    }
    docs: list[str] = []
    for f in ctx.store.files():
        if f.path.lower().endswith((".md", ".rst")):
            text = _read(ctx, f.path) or ""
            if any(stem in text for stem in stems):
                docs.append(f.path)
    documented = total - len(undocumented)
    return {
        "undocumented": undocumented[:1000],
        "documented_per_mille": 1000 if total == 0 else documented * 1000 // total,
        "docs": sorted(docs)[:100],
        "paths": sorted({u["path"] for u in undocumented})[:200],
    }


EXECUTORS: dict[str, BuiltinFn] = {
    "tp_secret_scan": secret_scan,
    "tp_test_gap_analysis": test_gap_analysis,
    "tp_risk_scan": risk_scan,
    "tp_debt_inventory": debt_inventory,
    "tp_doc_gap_analysis": doc_gap_analysis,
}
