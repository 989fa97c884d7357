"""Excerpts of one file merge into one block; the unused remainder is filled."""

from __future__ import annotations

from codelibrarian.composer import Candidate, ComposeContext, artifact_id, compose
from codelibrarian.composer.excerpt import render_excerpt
from codelibrarian.config import BudgetConfig, LaneBudget
from codelibrarian.tokens import Tokenizer

SECRET = b"test-secret-0123456789abcdef0123"
CTX = ComposeContext.make(as_of=1_700_000_000, workspace_fingerprint="wf", trigger="manual")
ROWS = [f"    value_{n} = compute_{n}(value_{n - 1})  # step {n}" for n in range(1, 61)]


def excerpt(
    tok: Tokenizer, lane: str, kind: str, first: int, last: int, *, relevance: int = 800
) -> Candidate:
    lines = tuple((n, ROWS[n - 1]) for n in range(first, last + 1))
    text = render_excerpt(lines)
    return Candidate(
        id=artifact_id(SECRET, kind, lane, f"src/steps.py#{first}"),
        kind=kind,
        lane=lane,
        token_estimate=tok.count(text),
        path="src/steps.py",
        title="src/steps.py",
        content=text,
        lines=(first, last),
        relevance=relevance,
        excerpt=lines,
    )


def budget(total: int, retrieved_max: int | None = None) -> BudgetConfig:
    lanes = {
        name: LaneBudget(
            min=0,
            max=retrieved_max if name == "retrieved" and retrieved_max else total,
            priority=i,
        )
        for i, name in enumerate(("policy", "rules", "local", "structure", "retrieved", "history"))
    }
    return BudgetConfig(total_tokens=total, lanes=lanes)


def test_overlapping_excerpts_from_two_lanes_show_each_line_once(tok: Tokenizer) -> None:
    a = excerpt(tok, "structure", "symbol_context", 5, 20)
    b = excerpt(tok, "retrieved", "semantic_match", 15, 30)
    c = excerpt(tok, "retrieved", "semantic_match", 45, 50, relevance=700)
    result = compose([a, b, c], budget=budget(4000), tokenizer=tok, context=CTX)
    for n in range(5, 31):
        assert result.text.count(ROWS[n - 1] + "\n") == 1, n
    assert result.text.count("src/steps.py") == 1  # one header for the file
    assert "src/steps.py:5-30,45-50" in result.text
    body = result.text.split(ROWS[29])[1]
    assert body.lstrip("\n").startswith("⋮\n" + ROWS[44])  # the gap is marked
    merged = [r for r in result.rendered if r.merged_into is not None]
    assert len(merged) == 2 and {r.merged_into for r in merged} == {a.id}
    assert result.tokens == tok.count(result.text) <= 4000


def test_merged_block_under_pressure_drops_its_weakest_member_first(tok: Tokenizer) -> None:
    a = excerpt(tok, "retrieved", "semantic_match", 1, 20, relevance=900)
    b = excerpt(tok, "retrieved", "semantic_match", 40, 60, relevance=300)
    both = compose([a, b], budget=budget(4000), tokenizer=tok, context=CTX)
    tight = compose([a, b], budget=budget(both.tokens - 40), tokenizer=tok, context=CTX)
    assert ROWS[0] in tight.text and ROWS[59] not in tight.text
    assert tight.tokens <= both.tokens - 40


def test_room_left_by_a_lane_cap_is_filled_with_the_next_spans(tok: Tokenizer) -> None:
    """A lane maximum that turns spans away while the pack has room left wastes budget:
    the remainder is filled with the best of them (verdict ``fill``)."""
    spans = [excerpt(tok, "retrieved", "semantic_match", f, f + 9) for f in (1, 21, 41)]
    cap = spans[0].token_estimate + 10
    result = compose(spans, budget=budget(3000, retrieved_max=cap), tokenizer=tok, context=CTX)
    for s in spans:
        assert ROWS[s.lines[0] - 1] in result.text  # type: ignore[index]
    reasons = sorted(v.reason for v in result.verdicts)
    assert reasons.count("fill") == 2
    assert result.tokens == tok.count(result.text) <= 3000
    # the filled blocks count as rendered before any shrink: nothing was shrunk here, so the
    # explanation must not say shrinking kept more than everything
    assert result.explanation.shrunk == 0
    assert result.explanation.shrink_permille <= 1000
