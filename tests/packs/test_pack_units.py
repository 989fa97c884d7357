"""Budgets, bloat guards, anchor order and the stop rule, one rule at a time."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.errors import UsageError
from codelibrarian.packs.anchors import AnchorDraft, Navigator, dedup, drop_key, order_key
from codelibrarian.packs.bloat import (
    MAX_EXCERPT_LINES,
    clip_span,
    compute_checks,
    is_log_path,
    log_too_long,
)
from codelibrarian.packs.budgets import (
    CAPABILITY_MULTIPLIERS,
    SCOPE_BUDGETS,
    budget_for,
    classify_scope,
)
from codelibrarian.packs.ladder import covered, criterion_keywords
from codelibrarian.packs.lcp import SCOPE_CLASSES, Anchor
from codelibrarian.workspace.git import parse_unified_diff


def test_scope_budgets_are_the_seeds() -> None:
    assert dict(SCOPE_BUDGETS) == {"Tiny": 1500, "Small": 3000, "Medium": 6000, "Large": 12000}
    for scope in SCOPE_CLASSES:
        assert budget_for(scope, "reasoning_high") == SCOPE_BUDGETS[scope]


@pytest.mark.parametrize("scope", SCOPE_CLASSES)
def test_capability_order_holds_for_every_scope(scope: str) -> None:
    fast, high, ultra = (
        budget_for(scope, c) for c in ("fast_code", "reasoning_high", "reasoning_ultra")
    )
    assert fast < high < ultra
    assert budget_for(scope, "cheap_batch") < fast
    assert budget_for(scope, "long_context") > ultra
    assert budget_for(scope, "long_context") == SCOPE_BUDGETS[scope] * 2


def test_multipliers_are_integers_per_mille() -> None:
    assert all(isinstance(v, int) for v in CAPABILITY_MULTIPLIERS.values())
    assert budget_for("Tiny", "fast_code") == 1125


def test_unknown_scope_or_capability_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="Tiny, Small, Medium, Large"):
        budget_for("Huge", "fast_code")
    with pytest.raises(UsageError, match="unknown model capability"):
        budget_for("Tiny", "gpt")


def _diff(files: dict[str, int]) -> str:
    out = []
    for path, n in files.items():
        body = "".join(f"+line {i}\n" for i in range(n))
        out.append(
            f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -0,0 +1,{n} @@\n{body}"
        )
    return "".join(out)


@pytest.mark.parametrize(
    ("files", "scope"),
    [
        ({}, None),
        ({"src/app/a.py": 10, "src/app/b.py": 70}, "Tiny"),
        ({"src/app/a.py": 100}, "Small"),
        ({f"src/app/m{i}.py": 5 for i in range(5)}, "Small"),
        ({"src/app/a.py": 5, "src/web/b.py": 5, "docs/c.md": 5}, "Medium"),
        ({f"m{i}/x.py": 5 for i in range(5)}, "Large"),
    ],
)
def test_classify_scope(files: dict[str, int], scope: str | None) -> None:
    assert classify_scope(parse_unified_diff(_diff(files))) == scope


@given(st.integers(1, 500), st.integers(0, 500), st.integers(1, 1000))
def test_clip_span_never_exceeds_sixty_lines_and_keeps_focus(
    start: int, extra: int, f: int
) -> None:
    end = start + extra
    focus = min(max(f, start), end)
    lo, hi = clip_span(start, end, focus)
    assert start <= lo <= hi <= end
    assert hi - lo + 1 == min(MAX_EXCERPT_LINES, end - start + 1)
    assert lo <= focus <= hi


def test_log_and_binary_guards(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/run.txt").write_text("x\n" * 101)
    (tmp_path / "short.log").write_text("x\n" * 100)
    (tmp_path / "blob.dat").write_bytes(b"\x00abc")
    (tmp_path / "ok.py").write_text("def f():\n    return 1\n")
    assert is_log_path("logs/run.txt") and is_log_path("a/b.log") and not is_log_path("a.py")
    assert log_too_long(tmp_path, "logs/run.txt") and not log_too_long(tmp_path, "short.log")
    nav = Navigator(tmp_path, None, lambda p: p.endswith(".env"))
    assert not nav.usable("logs/run.txt")
    assert nav.usable("short.log")
    assert not nav.usable("blob.dat")
    assert not nav.usable("missing.py")
    (tmp_path / "x.env").write_text("A=1\n")
    assert not nav.usable("x.env")
    assert nav.text("x.env") is None  # a sensitive file is never read
    draft = nav.make(
        kind="code", path="ok.py", start=1, end=500, ref="ok.py", rung=1, distance=0, score=0
    )
    assert draft is not None and (draft.start, draft.end) == (1, 2)
    anchors = [Anchor(kind="code", path="blob.dat", lines="1-1", rev="0" * 32, ref="blob.dat")]
    checks = compute_checks(tmp_path, anchors, [], token_estimate=10, budget=5)
    assert not checks.no_binaries and not checks.within_budget and checks.dedup_ok


def test_checks_see_duplicates_and_order(tmp_path: Path) -> None:
    a = Anchor(kind="kb", path="a.md", lines="1-2", rev="0" * 32, ref="a.md")
    b = Anchor(kind="code", path="a.py", lines="1-2", rev="0" * 32, ref="a.py")
    checks = compute_checks(tmp_path, [a, b, a], [], token_estimate=1, budget=5)
    assert not checks.dedup_ok and not checks.stable_order and checks.within_budget
    long = Anchor(kind="code", path="a.py", lines="1-61", rev="0" * 32, ref="a.py#x")
    assert not compute_checks(tmp_path, [long], [], token_estimate=1, budget=5).no_large_blobs


def _draft(kind: str, path: str, distance: int, score: int, ref: str = "") -> AnchorDraft:
    return AnchorDraft(kind, path, 1, 2, ref or path, "0" * 32, 1, distance, score, "", frozenset())


def test_lowest_value_is_furthest_from_the_change() -> None:
    near = _draft("code", "a.py", 0, 100)
    far = _draft("code", "b.py", 3, 900_000)
    kb = _draft("kb", "c.md", 4, 999_999)
    lonely = _draft("code", "z.py", 7, 1_000_000)
    assert max([near, far, kb, lonely], key=drop_key) is lonely
    assert max([near, far, kb], key=drop_key) is kb
    same_distance = [_draft("code", "x.py", 2, 10), _draft("code", "y.py", 2, 20)]
    assert max(same_distance, key=drop_key).path == "x.py"  # lower score goes first


def test_order_is_code_tests_kb_decisions_artifacts() -> None:
    drafts = [
        _draft("artifact", "s.py", 6, 0),
        _draft("decision", "d.json", 5, 0),
        _draft("kb", "k.md", 4, 0),
        _draft("test", "t.py", 1, 0),
        _draft("code", "b.py", 2, 0),
        _draft("code", "a.py", 0, 0),
    ]
    assert [d.path for d in sorted(drafts, key=order_key)] == [
        "a.py",
        "b.py",
        "t.py",
        "k.md",
        "d.json",
        "s.py",
    ]


def test_dedup_keeps_the_first_by_path_and_ref() -> None:
    first = _draft("code", "a.py", 0, 1, "a.py#f")
    dup = _draft("code", "a.py", 3, 9, "a.py#f")
    other = _draft("code", "a.py", 0, 1, "a.py#g")
    assert dedup([first, dup, other]) == [first, other]


def test_stop_rule_half_of_the_keywords() -> None:
    keys = criterion_keywords("RetryPolicy backoff is configurable")
    assert keys == ("retrypolicy", "retry", "policy", "backoff", "configurable")
    assert not covered(keys, frozenset({"retry", "policy"}))
    assert covered(keys, frozenset({"retry", "policy", "backoff"}))
    assert covered((), frozenset())


def test_overlapping_spans_are_duplicates_but_synopses_are_not() -> None:
    from codelibrarian.packs.ladder import _overlaps

    def span(ref: str, start: int, end: int, path: str = "a.py") -> AnchorDraft:
        return AnchorDraft("code", path, start, end, ref, "0" * 32, 1, 0, 0, "", frozenset())

    chosen = [span("a.py#L10", 10, 40), span("a.py#module", 1, 60)]
    assert _overlaps(span("a.py#f", 12, 30), chosen)  # inside a chosen span
    assert _overlaps(span("a.py#g", 30, 45), chosen)  # 11 of 16 lines already shown
    assert not _overlaps(span("a.py#h", 38, 60), chosen)  # 3 of 23 lines
    assert not _overlaps(span("b.py#f", 12, 30, "b.py"), chosen)  # another file
    assert not _overlaps(span("a.py#module", 1, 60), [span("a.py#L1", 1, 60)])
