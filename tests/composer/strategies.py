"""Hypothesis strategies for the composer: candidates, budgets, constraints, formats.

Structural choices (id, kind, lane, token estimate, path) are drawn by
hypothesis so failures shrink to readable cases; the bulk (scores, bodies,
hunks, entries, edges) comes from a drawn seed, which keeps generation cheap
enough for thousands of examples on a busy machine.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from codelibrarian.composer import (
    KINDS,
    LANES,
    Candidate,
    ComposerConstraints,
    Constraint,
    DiffHunk,
    HistoryEntry,
    LaneRequirement,
    Matcher,
    diff_body,
    entries_body,
)
from codelibrarian.config import BudgetConfig, LaneBudget

PATHS = (
    "src/app.py",
    "src/auth/login.py",
    "src/auth/.env",
    "secrets/prod.key",
    "docs/rules.md",
    "tests/test_app.py",
    "lib/util.js",
    "",
)
PATTERNS = ("*.env", "secrets/", "src/**/*.py", "docs/*.md", "*.js", "!src/app.py", "tests/")
WORDS = ("alpha", "beta", "return", "x = 1", "def f(a):", "    pass", "{", "}", "# note", "ünï")
IDS = tuple(f"id{i:02d}" for i in range(40))
NODES = ("a.py", "b.py", "c.py", "d.py", "e.py")


def _line(rnd: random.Random) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 4)))


def _body(rnd: random.Random) -> str:
    block = [_line(rnd) for _ in range(rnd.randint(0, 6))]
    return "\n".join(block * rnd.randint(1, 25))


def build_candidate(  # noqa: PLR0917 - used positionally by st.builds
    ident: str, kind: str, lane: str, path: str, estimate: int | None, seed: int
) -> Candidate:
    """A candidate whose bulk is derived from ``seed`` (deterministic)."""
    rnd = random.Random(seed)
    hunks: tuple[DiffHunk, ...] = ()
    entries: tuple[HistoryEntry, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()
    language = None
    shape = rnd.random()
    if kind in ("local_diff", "recent_edit") and shape < 0.6:
        hunks = tuple(
            DiffHunk(
                f"@@ -{i} +{i} @@",
                tuple(f"+{_line(rnd)}" for _ in range(rnd.randint(0, 5))),
                rnd.randint(0, 50),
            )
            for i in range(rnd.randint(1, 6))
        )
        body = diff_body(hunks)
    elif kind in ("session_history", "violation", "learning") and shape < 0.6:
        entries = tuple(
            HistoryEntry(_line(rnd), rnd.randint(0, 50)) for _ in range(rnd.randint(1, 8))
        )
        body = entries_body(entries)
    elif kind == "dependency_graph" and shape < 0.6:
        edges = tuple((rnd.choice(NODES), rnd.choice(NODES)) for _ in range(rnd.randint(1, 12)))
        body = "\n".join(f"{a} -> {b}" for a, b in edges)
    else:
        body = _body(rnd)
        language = rnd.choice((None, "python", "javascript", "klingon"))
    start = rnd.randint(1, 200)
    return Candidate(
        id=ident,
        kind=kind,
        lane=lane,
        token_estimate=len(body) // 4 if estimate is None else estimate,
        recency_bucket=rnd.randint(0, 5),
        relevance=rnd.randint(0, 1000),
        specificity=rnd.randint(0, 1000),
        risk=rnd.randint(0, 1000),
        path=path,
        title=path,
        content=body,
        lines=None if rnd.random() < 0.3 else (start, start + rnd.randint(0, 50)),
        language=language,
        hunks=hunks,
        entries=entries,
        edges=edges,
    )


def candidates_with(ids: tuple[str, ...]) -> st.SearchStrategy[Candidate]:
    """Candidates whose ids are drawn from ``ids``."""
    return st.builds(
        build_candidate,
        st.sampled_from(ids),
        st.sampled_from(KINDS),
        st.sampled_from(LANES),
        st.sampled_from(PATHS),
        st.one_of(st.none(), st.integers(0, 400)),
        st.integers(0, 2**32),
    )


candidates = candidates_with(IDS)
candidate_lists = st.lists(candidates, min_size=0, max_size=25)


@st.composite
def budgets(draw: st.DrawFn, max_total: int = 3000) -> BudgetConfig:
    total = draw(st.integers(40, max_total))
    rnd = random.Random(draw(st.integers(0, 2**32)))
    lanes: dict[str, LaneBudget] = {}
    room = total
    priorities = list(range(len(LANES)))
    rnd.shuffle(priorities)
    for lane, prio in zip(LANES, priorities, strict=True):
        lane_max = rnd.randint(0, total)
        lane_min = rnd.randint(0, min(lane_max, room)) if rnd.random() < 0.5 else 0
        room -= lane_min
        lanes[lane] = LaneBudget(min=lane_min, max=lane_max, priority=prio)
    return BudgetConfig(total_tokens=total, lanes=lanes)


matchers = st.one_of(
    st.sampled_from(IDS).map(Matcher.id),
    st.sampled_from(KINDS).map(Matcher.kind),
    st.sampled_from(LANES).map(Matcher.lane),
    st.sampled_from(PATTERNS).map(Matcher.pattern),
)
rules = st.lists(st.builds(Constraint, matchers, st.sampled_from(("policy", "why"))), max_size=3)
requirements = st.lists(
    st.builds(LaneRequirement, st.sampled_from(LANES), st.integers(0, 800), st.just("req")),
    max_size=2,
)


@st.composite
def constraint_sets(draw: st.DrawFn, forced: bool = True) -> ComposerConstraints:
    return ComposerConstraints.of(
        must_include=draw(rules) if forced else (),
        must_exclude=draw(rules),
        pinned=draw(rules) if forced else (),
        lane_requirements=draw(requirements),
    )


formats = st.sampled_from(("markdown", "xml", "plain"))
