"""One test per defect of the Composer seed that this implementation fixes."""

from __future__ import annotations

import pytest

from codelibrarian.composer import (
    Candidate,
    ComposeContext,
    ComposerConstraints,
    Constraint,
    LaneRequirement,
    Matcher,
    artifact_id,
    cache_key,
    candidate_digest,
    compose,
    matches,
    quantize,
    recency_bucket,
    replay,
    score,
    select,
)
from codelibrarian.composer.pipeline import _key_inputs
from codelibrarian.config import BudgetConfig, LaneBudget
from codelibrarian.tokens import Tokenizer

CTX = ComposeContext.make(as_of=1_700_000_000, trigger="manual")
ALL = ("policy", "rules", "local", "structure", "retrieved", "history")


def budget(total: int, **lanes: tuple[int, int]) -> BudgetConfig:
    spec = {name: LaneBudget(min=0, max=total, priority=i) for i, name in enumerate(ALL)}
    for name, (lo, hi) in lanes.items():
        spec[name] = LaneBudget(min=lo, max=hi, priority=spec[name].priority)
    return BudgetConfig(total_tokens=total, lanes=spec)


def c(ident: str, lane: str, kind: str, est: int, rel: int = 0, **kw: object) -> Candidate:
    return Candidate(
        id=ident,
        kind=kind,
        lane=lane,
        token_estimate=est,
        relevance=rel,
        **kw,  # type: ignore[arg-type]
    )


# --- lane minimums are reserved and lane requirements applied -------------------


def test_high_scoring_lane_cannot_starve_another_lanes_minimum() -> None:
    retrieved = [c(f"r{i}", "retrieved", "semantic_match", 100, rel=1000) for i in range(10)]
    rules = [c("rule", "rules", "rule_doc", 300, rel=0)]
    cfg = budget(1000, rules=(300, 1000))
    sel = select([*retrieved, *rules], cfg, ComposerConstraints())
    verdict = sel.verdict("rule")
    assert verdict.selected and verdict.reason == "lane_min"
    assert sel.lane_usage["retrieved"] == 700  # the rest went to the high scorers


def test_reservation_of_a_later_lane_is_protected_from_an_earlier_one() -> None:
    # policy (priority 0) wants 800, history (priority 5) must keep its 200
    policy = [c(f"p{i}", "policy", "constraint", 100, rel=900) for i in range(10)]
    history = [c("h", "history", "session_history", 200)]
    cfg = budget(1000, policy=(800, 1000), history=(200, 200))
    sel = select([*policy, *history], cfg, ComposerConstraints())
    assert sel.verdict("h").reason == "lane_min"
    assert sel.lane_usage["policy"] == 800


def test_lane_requirements_are_applied() -> None:
    retrieved = [c(f"r{i}", "retrieved", "semantic_match", 100, rel=1000) for i in range(10)]
    rules = [c(f"rule{i}", "rules", "rule_doc", 100) for i in range(4)]
    constraints = ComposerConstraints.of(
        lane_requirements=[LaneRequirement("rules", 300, "protected workspace")]
    )
    sel = select([*retrieved, *rules], budget(1000), constraints)
    reasons = sorted(v.reason for v in sel.verdicts if v.lane == "rules" and v.selected)
    assert reasons == ["lane_requirement"] * 3
    assert sel.reservations[1].lane == "rules" and sel.reservations[1].target == 300


# --- pinned / must-include are budget-checked; never-shrink can be infeasible ----


def test_pinned_over_budget_is_reported_not_silently_exceeded(tok: Tokenizer) -> None:
    big = c("big", "rules", "rule_doc", 10, content="word " * 500)
    pinned = ComposerConstraints.of(pinned=[Constraint(Matcher.id("big"), "pinned")])
    from codelibrarian.errors import BudgetInfeasible

    with pytest.raises(BudgetInfeasible, match=r"big \(rule_doc\)") as info:
        compose([big], budget=budget(100), tokenizer=tok, context=CTX, constraints=pinned)
    assert info.value.required_tokens - info.value.budget > 0
    assert "over the budget of 100" in str(info.value)


# --- the pattern matcher is implemented (gitignore-style, on the internal path) ---


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.env", "src/auth/.env", True),
        ("*.env", "config/prod.env", True),
        ("*.env", "src/env.py", False),
        ("secrets/", "secrets/prod.key", True),
        ("secrets/", "deploy/secrets/prod.key", True),
        ("/secrets/", "deploy/secrets/prod.key", False),
        ("**/id_rsa*", "home/.ssh/id_rsa.pub", True),
        ("src/**/*.py", "src/a/b/c.py", True),
        ("src/**/*.py", "lib/a.py", False),
        ("docs/*.md", "docs/sub/x.md", False),
    ],
)
def test_pattern_matcher_is_gitignore_style(pattern: str, path: str, expected: bool) -> None:
    cand = c("x", "local", "recent_edit", 1, path=path)
    assert matches(cand, Matcher.pattern(pattern)) is expected


def test_pattern_never_matches_a_candidate_without_a_path() -> None:
    assert not matches(c("x", "local", "recent_edit", 1), Matcher.pattern("*"))


# --- recency uses as_of and is clamped -------------------------------------------


@pytest.mark.parametrize(
    ("age", "bucket"),
    [(-5, 5), (0, 5), (59, 5), (60, 4), (299, 4), (300, 3), (1799, 3), (1800, 2), (7199, 2),
     (7200, 1), (86399, 1), (86400, 0), (10**9, 0)],
)  # fmt: skip
def test_recency_bucket_is_clamped_to_0_5(age: int, bucket: int) -> None:
    assert recency_bucket(age) == bucket


# --- ids never collide within one kind/lane/path/chunk ---------------------------


def test_discriminator_separates_two_violations_in_one_file() -> None:
    secret = b"k" * 32
    a = artifact_id(secret, "violation", "policy", "src/auth.py", 0, "rule-1")
    b = artifact_id(secret, "violation", "policy", "src/auth.py", 0, "rule-2")
    assert a != b and len(a) == 24
    assert artifact_id(secret, "violation", "policy", "src/auth.py", 0, "rule-1") == a
    # components are framed, so shifting a separator cannot collide
    assert artifact_id(secret, "k", "policy", "a:b", 0, "") != artifact_id(
        secret, "k", "policy", "a", 0, ":b"
    )
    assert "src/auth.py" not in a
    assert artifact_id(b"other" * 8, "violation", "policy", "src/auth.py", 0, "rule-1") != a


# --- the candidate digest covers content -----------------------------------------


def test_content_edit_with_same_estimate_changes_digest_and_cache_key(tok: Tokenizer) -> None:
    before = c("a", "local", "recent_edit", 5, content="x = 1")
    after = c("a", "local", "recent_edit", 5, content="x = 2")
    assert candidate_digest([before]) != candidate_digest([after])
    keys = [
        cache_key(
            _key_inputs(
                candidates=(x,),
                budget=budget(100),
                constraints=ComposerConstraints(),
                tokenizer=tok,
                context=CTX,
                fmt="markdown",
            )
        )
        for x in (before, after)
    ]
    assert keys[0] != keys[1]


# --- shrinking iterates, then drops with a recorded reason -----------------------


def test_shrink_iterates_until_the_whole_text_fits(tok: Tokenizer) -> None:
    # estimates say 50 tokens each; each really is ~1200; one pass cannot fit them
    text = "\n".join(f"line {i}: some retrieved text that goes on" for i in range(120))
    cands = [
        c(f"m{i}", "retrieved", "semantic_match", 50, rel=900 - i, content=text, title=f"f{i}.py")
        for i in range(6)
    ]
    result = compose(cands, budget=budget(600), tokenizer=tok, context=CTX)
    assert tok.count(result.text) <= 600
    reasons = {v.id: v.reason for v in result.verdicts}
    assert "dropped_after_render" in reasons.values()
    kept = list(result.rendered)
    assert kept and all(r.shrunk for r in kept)
    assert reasons["m0"] == "score"  # the best one survives, shrunk
    # dropped ones are the lowest-ranked
    dropped = sorted(i for i, why in reasons.items() if why == "dropped_after_render")
    assert dropped == [f"m{i}" for i in range(6 - len(dropped), 6)]


# --- replay bypasses the cache and detects divergence ----------------------------


def test_replay_detects_a_tampered_record(tok: Tokenizer) -> None:
    cands = [c(f"m{i}", "retrieved", "semantic_match", 5, rel=i, content=f"v{i}") for i in range(3)]
    result = compose(cands, budget=budget(200), tokenizer=tok, context=CTX)
    record = dict(result.record)
    record["rankings"] = [dict(r) for r in record["rankings"]]
    record["rankings"][0]["score"] += 1
    report = replay(record, cands, tok)
    assert report.status == "diverged"
    assert any("rankings[0].score" in d for d in report.differences)


def test_replay_rebuilds_constraints_from_the_log(tok: Tokenizer) -> None:
    cands = [
        c("keep", "retrieved", "semantic_match", 5, rel=0, content="k", path="src/k.py"),
        c("secret", "retrieved", "semantic_match", 5, rel=999, content="s", path="x/.env"),
    ]
    constraints = ComposerConstraints.of(
        must_exclude=[Constraint(Matcher.pattern("*.env"), "sensitive")],
        must_include=[Constraint(Matcher.kind("semantic_match"), "needed")],
    )
    result = compose(cands, budget=budget(200), tokenizer=tok, context=CTX, constraints=constraints)
    assert {v.id: v.reason for v in result.verdicts} == {
        "keep": "must_include",
        "secret": "excluded_by_policy",
    }
    assert replay(result.record, cands, tok).status == "identical"


# --- true constraint counts and a quantization test that follows from its inputs ---


def test_explanation_counts_are_true(tok: Tokenizer) -> None:
    cands = [
        c("d1", "local", "local_diff", 5, content="d1"),
        c("d2", "local", "local_diff", 5, content="d2"),
        c("v1", "policy", "violation", 5, content="v1"),
        c("s1", "retrieved", "semantic_match", 5, content="s1", path="a/.env"),
    ]
    constraints = ComposerConstraints.of(
        pinned=[Constraint(Matcher.kind("local_diff"), "diff")],
        must_include=[Constraint(Matcher.kind("violation"), "violations")],
        must_exclude=[Constraint(Matcher.pattern("*.env"), "sensitive")],
    )
    result = compose(cands, budget=budget(500), tokenizer=tok, context=CTX, constraints=constraints)
    counts = result.explanation.constraints
    assert (counts.pinned, counts.must_include, counts.excluded) == (2, 1, 1)
    assert result.record["counts"]["pinned"] == 2
    assert result.record["counts"]["must_include"] == 1


def test_integer_score_follows_from_its_inputs() -> None:
    cand = c("q", "local", "recent_edit", 1, rel=quantize(0.123456789), recency_bucket=3)
    assert cand.relevance == 123
    # 300 * (3/5 -> 600) + 350 * 123 = 180000 + 43050, in millionths (0.22305)
    assert score(cand) == 223_050
    assert quantize(1.7) == 1000 and quantize(-0.2) == 0 and quantize(float("nan")) == 0
