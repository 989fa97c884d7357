"""Golden files: one per shrink strategy, the rendered formats and the terminal explanation.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/composer/test_golden.py``
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codelibrarian.composer import (
    Candidate,
    ComposeContext,
    ComposerConstraints,
    Constraint,
    DiffHunk,
    HistoryEntry,
    LaneRequirement,
    Matcher,
    compose,
    diff_body,
    entries_body,
)
from codelibrarian.composer.render import render_block
from codelibrarian.composer.shrink import shrink_body
from codelibrarian.config import BudgetConfig, LaneBudget
from codelibrarian.explain_view import render_terminal
from codelibrarian.tokens import Tokenizer

GOLDEN = Path(__file__).parent / "golden"

PY_SOURCE = '''"""Session handling."""

import hmac


class Session:
    """A logged-in user's session."""

    def __init__(self, user: str, token: str) -> None:
        self.user = user
        self.token = token

    def valid(self, presented: str) -> bool:
        """Constant-time comparison of the presented token."""
        expected = self.token.encode()
        return hmac.compare_digest(expected, presented.encode())


def login(user: str, password: str) -> Session:
    """Check the password and open a session."""
    if not password:
        raise ValueError("empty password")
    return Session(user, password[::-1])
'''

JS_SOURCE = """// cart helpers
export function total(items) {
  let sum = 0;
  for (const item of items) {
    sum += item.price * item.qty;
  }
  return sum;
}

export class Cart {
  add(item) {
    this.items.push(item);
    return this;
  }
}
"""

HUNKS = (
    DiffHunk("@@ -10,3 +10,4 @@ def login", (" a", "-b", "+c", "+d"), 1_700_000_300),
    DiffHunk("@@ -40,2 +41,2 @@ def logout", ("-e", "+f"), 1_700_000_100),
    DiffHunk("@@ -90,2 +91,3 @@ class Session", (" g", "+h", "+i"), 1_700_000_200),
)
ENTRIES = tuple(
    HistoryEntry(f"turn {i}: the agent asked about module {i} and got an answer", 1000 + i)
    for i in range(8)
)
EDGES = (
    ("src/api.py", "src/auth.py"),
    ("src/api.py", "src/db.py"),
    ("src/auth.py", "src/db.py"),
    ("src/cli.py", "src/api.py"),
    ("src/worker.py", "src/db.py"),
    ("src/worker.py", "src/queue.py"),
)


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")


def _cand(kind: str, lane: str, body: str, **kw: object) -> Candidate:
    return Candidate(
        id=f"{kind}-id",
        kind=kind,
        lane=lane,
        token_estimate=100,
        title="src/auth.py",
        content=body,
        **kw,  # type: ignore[arg-type]
    )


CASES = {
    "truncate_oldest_hunks": (_cand("local_diff", "local", diff_body(HUNKS), hunks=HUNKS), 30),
    "truncate_oldest_lines": (
        _cand("semantic_match", "retrieved", PY_SOURCE, language="python"),
        40,
    ),
    "keep_signatures_python": (
        _cand("symbol_context", "structure", PY_SOURCE, language="python", lines=(1, 24)),
        120,
    ),
    "keep_signatures_javascript": (
        _cand("test_context", "structure", JS_SOURCE, language="javascript"),
        40,
    ),
    "keep_signatures_heuristic": (
        _cand("symbol_context", "structure", PY_SOURCE, language=None),
        120,
    ),
    "collapse_summary": (
        _cand(
            "dependency_graph",
            "structure",
            "\n".join(f"{a} imports {b}" for a, b in EDGES),
            edges=EDGES,
        ),
        30,
    ),
    "drop_entries": (
        _cand("session_history", "history", entries_body(ENTRIES), entries=ENTRIES),
        60,
    ),
    "never": (_cand("rule_doc", "rules", "Never log secrets.\nAlways pin the diff.\n"), 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_shrink_strategy_golden(tok: Tokenizer, name: str) -> None:
    cand, target = CASES[name]
    shrunk = shrink_body(cand, cand.text(), target, tok, cand.strategy)
    if cand.strategy != "never":
        assert tok.count(shrunk.body) <= target or shrunk.empty
    note = cand.strategy if shrunk.body != cand.text() else None
    block = render_block(cand, shrunk.body, "markdown", note)
    _check(f"shrink_{name}.txt", block + "\n")


def _scenario(tok: Tokenizer, fmt: str = "markdown"):  # type: ignore[no-untyped-def]
    lanes = {
        "policy": LaneBudget(min=20, max=100, priority=0),
        "rules": LaneBudget(min=0, max=200, priority=1),
        "local": LaneBudget(min=50, max=300, priority=2),
        "structure": LaneBudget(min=0, max=200, priority=3),
        "retrieved": LaneBudget(min=0, max=200, priority=4),
        "history": LaneBudget(min=0, max=100, priority=5),
    }
    cands = [
        Candidate("a1", "constraint", "policy", 12, 5, 900, 800, 900, content="Keep billing/."),
        Candidate("b2", "rule_doc", "rules", 40, 0, 500, 500, 300, title="CONTRIBUTING.md",
                  content="Run the tests.\nKeep functions small.\n"),
        Candidate("c3", "local_diff", "local", 40, 5, 900, 700, 600, title="src/auth.py",
                  content=diff_body(HUNKS), hunks=HUNKS),
        Candidate("d4", "symbol_context", "structure", 60, 2, 700, 600, 400, title="src/auth.py",
                  lines=(1, 24), content=PY_SOURCE, language="python"),
        Candidate("e5", "semantic_match", "retrieved", 80, 1, 650, 300, 100, title="src/cart.js",
                  content=JS_SOURCE, language="javascript"),
        Candidate("f6", "semantic_match", "retrieved", 500, 1, 200, 300, 100, title="README.md",
                  content="big\n" * 300),
        Candidate("g7", "session_history", "history", 60, 4, 300, 200, 100,
                  content=entries_body(ENTRIES), entries=ENTRIES),
        Candidate("h8", "recent_edit", "local", 30, 3, 100, 100, 100, title=".env",
                  path=".env", content="TOKEN=abc"),
    ]  # fmt: skip
    constraints = ComposerConstraints.of(
        pinned=[Constraint(Matcher.kind("local_diff"), "current changes")],
        must_exclude=[Constraint(Matcher.pattern("*.env"), "sensitive file")],
        must_include=[Constraint(Matcher.kind("constraint"), "invariants")],
        lane_requirements=[LaneRequirement("rules", 30, "protected workspace")],
    )
    ctx = ComposeContext.make(as_of=1_763_700_000, workspace_fingerprint="wf", trigger="manual")
    return compose(
        cands,
        budget=BudgetConfig(total_tokens=420, lanes=lanes),
        tokenizer=tok,
        context=ctx,
        constraints=constraints,
        fmt=fmt,  # type: ignore[arg-type]
    )


def test_terminal_explanation_golden(tok: Tokenizer) -> None:
    result = _scenario(tok)
    _check("explanation_100.txt", render_terminal(result.explanation, width=100))
    _check("explanation_72.txt", render_terminal(result.explanation, width=72, limit=4))


@pytest.mark.parametrize("fmt", ["markdown", "xml", "plain"])
def test_pack_golden(tok: Tokenizer, fmt: str) -> None:
    result = _scenario(tok, fmt)
    assert tok.count(result.text) <= 420
    _check(f"pack.{fmt}.txt", result.text + "\n")
