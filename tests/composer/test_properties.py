"""Property tests: thousands of random candidate sets, budgets and constraints."""

from __future__ import annotations

import random

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.composer import (
    EMPTY_CONSTRAINTS,
    Candidate,
    ComposeContext,
    ComposerConstraints,
    canonical_json,
    compose,
    matches,
    replay,
    select,
)
from codelibrarian.composer.constraints import RuleSet, first_match, path_matcher
from codelibrarian.config import BudgetConfig
from codelibrarian.errors import BudgetInfeasible
from codelibrarian.tokens import Tokenizer

from .strategies import PATTERNS, budgets, candidate_lists, constraint_sets, formats

CTX = ComposeContext.make(as_of=1_750_000_000, workspace_fingerprint="wf", trigger="file_saved")


def _forced_ids(cands: list[Candidate], constraints: ComposerConstraints) -> set[str]:
    out = set()
    for c in cands:
        if any(matches(c, r.match) for r in constraints.must_exclude):
            continue
        if any(matches(c, r.match) for r in (*constraints.pinned, *constraints.must_include)):
            out.add(c.id)
    return out


def _attempt(
    cands: list[Candidate],
    budget: BudgetConfig,
    constraints: ComposerConstraints,
    fmt: str,
    tok: Tokenizer,
):  # type: ignore[no-untyped-def]
    try:
        return compose(
            cands,
            budget=budget,
            tokenizer=tok,
            context=CTX,
            constraints=constraints,
            fmt=fmt,  # type: ignore[arg-type]
        ), None
    except BudgetInfeasible as exc:
        return None, exc


@pytest.mark.slow
@settings(max_examples=1500)
@given(candidate_lists, budgets(), constraint_sets(), formats)
def test_budget_is_a_hard_cap_and_constraints_hold(
    tok: Tokenizer,
    cands: list[Candidate],
    budget: BudgetConfig,
    constraints: ComposerConstraints,
    fmt: str,
) -> None:
    result, error = _attempt(cands, budget, constraints, fmt, tok)
    forced = _forced_ids(cands, constraints)
    if error is not None:
        # only hard constraints can make a composition infeasible, and they are named
        assert forced
        assert error.offenders
        assert {o.split(":")[0] for o in error.offenders} <= forced
        assert error.required_tokens > budget.total_tokens
        return
    assert result is not None
    # the final whole text, counted with the tokenizer, never exceeds the budget
    assert tok.count(result.text) == result.tokens <= budget.total_tokens
    selected = {v.id for v in result.selected}
    # excluded never selected
    for c in cands:
        if any(matches(c, r.match) for r in constraints.must_exclude):
            assert c.id not in selected or any(
                d.id == c.id and not any(matches(d, r.match) for r in constraints.must_exclude)
                for d in cands
            )
    # pinned / must-include always selected (or BudgetInfeasible above)
    unique = {c.id for c in cands}
    for ident in forced:
        dupes = [c for c in cands if c.id == ident]
        if len(dupes) == 1:
            assert ident in selected
    # every candidate has exactly one verdict with a known reason
    assert len(result.verdicts) == len(cands)
    assert {v.id for v in result.verdicts} == unique
    # rendered artifacts are the selected ones, in the record too
    assert [r.id for r in result.rendered] == [s["id"] for s in result.record["selected"]]
    assert {r.id for r in result.rendered} == selected


@pytest.mark.slow
@settings(max_examples=1500)
@given(candidate_lists, budgets(), constraint_sets(), st.integers(0, 2**32))
def test_selection_lane_maxima_minimums_and_order_independence(
    cands: list[Candidate], budget: BudgetConfig, constraints: ComposerConstraints, seed: int
) -> None:
    sel = select(cands, budget, constraints)
    shuffled = list(cands)
    random.Random(seed).shuffle(shuffled)
    again = select(shuffled, budget, constraints)
    assert again.verdicts == sel.verdicts
    assert [c.id for c in again.selected] == [c.id for c in sel.selected]

    for lane, spec in budget.lanes.items():
        chosen = [v for v in sel.verdicts if v.selected and v.lane == lane]
        forced = sum(v.token_estimate for v in chosen if v.reason in ("pinned", "must_include"))
        used = sum(v.token_estimate for v in chosen)
        # lane maxima hold for everything chosen by the composer itself
        assert used <= max(spec.max, forced)
        assert used == sel.lane_usage[lane]
    total = sum(sel.lane_usage.values())
    forced_total = sum(
        v.token_estimate
        for v in sel.verdicts
        if v.selected and v.reason in ("pinned", "must_include")
    )
    assert total <= max(budget.total_tokens, forced_total)
    # lane minimums: whenever a lane is under its reservation, no rejected candidate
    # of that lane would have fitted
    for res in sel.reservations:
        used = sel.lane_usage[res.lane]
        if used >= res.target:
            continue
        for v in sel.verdicts:
            if v.lane == res.lane and v.reason in ("lane_max_reached", "budget_exceeded"):
                fits_lane = used + v.token_estimate <= budget.lanes[res.lane].max
                fits_total = total + v.token_estimate <= budget.total_tokens
                assert not (fits_lane and fits_total)


@settings(max_examples=600)
@given(
    candidate_lists,
    budgets(max_total=1500),
    constraint_sets(),
    formats,
    st.integers(0, 2**32),
)
def test_order_independent_and_replay_reproduces_byte_for_byte(  # noqa: PLR0917 - hypothesis args
    tok: Tokenizer,
    cands: list[Candidate],
    budget: BudgetConfig,
    constraints: ComposerConstraints,
    fmt: str,
    seed: int,
) -> None:
    result, error = _attempt(cands, budget, constraints, fmt, tok)
    shuffled = list(cands)
    random.Random(seed).shuffle(shuffled)
    result2, error2 = _attempt(shuffled, budget, constraints, fmt, tok)
    if error is not None:
        assert error2 is not None and str(error2) == str(error)
        return
    assert result is not None and result2 is not None
    assert result2.text == result.text
    assert canonical_json(result2.record) == canonical_json(result.record)
    report = replay(result.record, shuffled, tok)
    assert report.status == "identical", report.differences
    assert report.composition is not None
    assert report.composition.text == result.text


@settings(max_examples=300)
@given(candidate_lists, budgets())
def test_empty_constraints_never_infeasible(
    tok: Tokenizer, cands: list[Candidate], budget: BudgetConfig
) -> None:
    result = compose(
        cands, budget=budget, tokenizer=tok, context=CTX, constraints=EMPTY_CONSTRAINTS
    )
    assert result.tokens <= budget.total_tokens


@settings(max_examples=400)
@given(candidate_lists, constraint_sets())
def test_compiled_rules_agree_with_first_match(
    cands: list[Candidate], constraints: ComposerConstraints
) -> None:
    cands = list({c.id: c for c in cands}.values())  # resolve() expects unique ids
    for rules in (constraints.must_exclude, constraints.pinned, constraints.must_include):
        compiled = RuleSet(rules)
        resolved = compiled.resolve(cands)
        for cand, index in zip(cands, resolved, strict=True):
            expected = first_match(cand, rules)
            assert compiled.first(cand) == expected
            assert (rules[index] if index < len(rules) else None) == expected


@settings(max_examples=400)
@given(
    st.sampled_from(
        (*PATTERNS, "*", "a*/b", "**/x.py", "/src/", "# comment", "!*.py", "[ab].py", "a?.py")
    ),
    st.lists(
        st.sampled_from(
            ("src", "a", "a.py", "ab.py", "b.py", "x.py", ".env", "secrets", "ab", "docs")
        ),
        min_size=1,
        max_size=4,
    ).map("/".join),
)
def test_path_matcher_agrees_with_pathspec(pattern: str, path: str) -> None:
    spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    assert path_matcher(pattern)(path) == bool(spec.match_file(path))
