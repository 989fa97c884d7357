"""Assemble a Local Context Pack: climb the ladder, fill the fields, fit the budget.

``token_estimate`` is the exact token count of the pack file (the compact JSON
written to disk) with the target model's tokenizer. The number is
part of the text it counts, so it is found as a fixed point: count with a
guess, write the count in, count again, until the two agree. ``bloat_checks``
are computed in the same loop. When the finished pack is over budget (the ladder
measures with a provisional ladder record, so the final text can differ by a
few tokens) the lowest-value anchor is dropped and the pack rebuilt; the count
of such drops is recorded in ``ladder.dropped_over_budget``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..composer.types import Candidate
from ..errors import BudgetInfeasible, LibrarianError
from ..gate import SecretGate
from ..index.storage import Storage
from ..tokens import Tokenizer
from ..workspace.git import FileDiff
from .anchors import AnchorDraft, Navigator, drop_key, order_key, refresh_anchors, to_anchor
from .anchors import to_summary as summary_of
from .bloat import compute_checks
from .ladder import (
    RUNG_NAMES,
    LadderInput,
    LadderOutcome,
    climb,
    covered,
    criterion_keywords,
)
from .lcp import (
    Anchor,
    LadderRecord,
    LocalContextPack,
    MicroSummary,
    RungRecord,
    dump_model,
)

__all__ = ["PackEnv", "PackRequest", "assemble_pack", "refresh_pack"]

_MAX_NOTES = 12


@dataclass(frozen=True, slots=True)
class PackRequest:
    """What the caller asked for (already validated and defaulted)."""

    agent: str
    goal: str
    task_id: str
    acceptance: tuple[str, ...]
    constraints: tuple[str, ...]
    scope: str
    capability: str
    budget: int
    model: str
    run_id: str
    as_of: int
    keywords: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PackEnv:
    """What the workspace offers: policy-filtered candidates, the change, the index."""

    root: Path
    tokenizer: Tokenizer
    store: Storage | None
    candidates: tuple[Candidate, ...]
    excluded: frozenset[str]
    changes: tuple[FileDiff, ...]
    explicit_files: tuple[str, ...]
    files: tuple[str, ...]
    decisions: tuple[tuple[str, str], ...]
    redacted_artifacts: int
    is_sensitive: Callable[[str], bool]
    gate: SecretGate | None = None


def _fix_point(
    build: Callable[[int], LocalContextPack], tokenizer: Tokenizer
) -> tuple[LocalContextPack, str]:
    guess = 0
    for _ in range(10):
        pack = build(guess)
        text = dump_model(pack, compact=True)
        count = tokenizer.count(text)
        if count == guess:
            return pack, text
        guess = count
    raise LibrarianError(  # pragma: no cover - digit growth settles in two or three rounds
        "the pack's token count did not settle", hint="Report this with the pack's inputs."
    )


def _criteria(req: PackRequest) -> tuple[str, ...]:
    return req.acceptance or (req.goal,)


def _risks(req: PackRequest, env: PackEnv, anchors: Sequence[Anchor]) -> list[str]:
    out: list[str] = []
    for cand in env.candidates:
        if cand.id in env.excluded:
            continue
        if cand.path == ".librarian/danger-zones":
            out += [ln[2:] for ln in cand.text().splitlines() if ln.startswith("- ")]
        elif cand.kind == "violation":
            first = next((ln for ln in cand.text().splitlines() if ln.strip()), "")
            if first:
                out.append(f"violation: {first.strip()}")
    for d in sorted(env.changes, key=lambda d: d.path):
        if d.status == "deleted":
            out.append(f"the change deletes {d.path}")
    if env.excluded:
        n = len(env.excluded)
        out.append(f"{n} sensitive file(s) matched and were excluded by policy (never read)")
    if env.redacted_artifacts:
        out.append(
            f"the workspace holds secrets (redacted in {env.redacted_artifacts} candidate "
            "artifact(s)); never copy credentials into code or notes"
        )
    tests = sorted({a.path for a in anchors if a.kind == "test"})
    importers: dict[str, set[str]] = {}
    if env.store is not None and tests:
        for src, dst, _ in env.store.edges("import"):
            importers.setdefault(dst, set()).add(src)
    for d in sorted(env.changes, key=lambda d: d.path):
        if d.status == "deleted" or _is_test(d.path) or env.is_sensitive(d.path):
            continue
        stem = posixpath.basename(d.path).split(".")[0].lower()
        related = [
            t for t in tests if t in importers.get(d.path, ()) or stem in t.lower().split("/")[-1]
        ]
        if not related:
            out.append(f"no test anchored for changed file {d.path}")
    return list(dict.fromkeys(" ".join(r.split())[:2000] for r in out if r.strip()))[:_MAX_NOTES]


def _is_test(path: str) -> bool:
    from ..sources.ranking import is_test_path

    return is_test_path(path)


def _questions(req: PackRequest, env: PackEnv, drafts: Sequence[AnchorDraft]) -> list[str]:
    terms: set[str] = set()
    for d in drafts:
        terms |= d.terms
    out = [
        f"not covered by any anchor: {c}"
        for c in _criteria(req)
        if not covered(criterion_keywords(c), frozenset(terms))
    ]
    if not env.changes and not env.explicit_files:
        out.append("no current change and no file given: where should the work start?")
    return [" ".join(q.split())[:2000] for q in out][:_MAX_NOTES]


def _refs(anchors: Sequence[Anchor], kind: str, limit: int = 3) -> str:
    refs = [a.ref for a in anchors if a.kind == kind][:limit]
    return ", ".join(refs)


def _actions(req: PackRequest, anchors: Sequence[Anchor], near: Sequence[str]) -> list[str]:
    """Three role-specific steps; ``near`` are the refs of code at the change surface."""
    code, kb = ", ".join(near[:3]) or _refs(anchors, "code"), _refs(anchors, "kb")
    test_paths = ", ".join(dict.fromkeys(a.path for a in anchors if a.kind == "test"))
    n = len(req.acceptance)
    role: dict[str, list[str]] = {
        "Planner": [
            f"split the goal into steps, one per acceptance criterion ({n} given)",
            f"start the plan from {code}" if code else "name the files the change will touch",
            "hand off to Implementer with the scope class and the open questions",
        ],
        "Thinker": [
            "resolve the open questions before any code changes",
            f"read {code} and decide the approach"
            if code
            else "find where the goal is implemented",
            "record the decision in the run journal",
        ],
        "Implementer": [
            f"edit {code}" if code else "locate the code to change (no code anchored)",
            f"run {test_paths}" if test_paths else "add a test for the changed behaviour",
            "hand off to Verifier with diff refs and evidence",
        ],
        "Verifier": [
            f"run {test_paths}" if test_paths else "write a failing test for each criterion first",
            "check every acceptance criterion against the changed lines",
            "record failing and passing runs as evidence",
        ],
        "Reviewer": [
            f"review the change against {kb}"
            if kb
            else "review the change against the style guide",
            f"read {code}" if code else "read the diff refs of the handoff",
            "list blocking issues first, then suggestions",
        ],
        "Critical": [
            "look for failure modes, edge cases and security risks in the anchored code",
            f"challenge {code}" if code else "challenge the plan's assumptions",
            "turn every risk note into a test or an explicit acceptance",
        ],
        "Supervisor": [
            "check the run journal and handoffs for blocked or repeated work",
            "decide the next agent and its scope class",
            "confirm each acceptance criterion has evidence",
        ],
    }
    return role[req.agent]


def _near(drafts: Sequence[AnchorDraft]) -> list[str]:
    return [
        d.ref
        for d in sorted(drafts, key=order_key)
        if d.kind == "code" and d.distance == 0 and not d.ref.endswith("#module")
    ]


def _provisional(criteria: int) -> LadderRecord:
    rungs = [
        RungRecord(
            rung=i,
            name=name,  # type: ignore[arg-type]
            ran=True,
            reason="criteria_uncovered",
            anchors_added=24,
            skipped_over_budget=99,
            criteria_covered=criteria,
        )
        for i, name in enumerate(RUNG_NAMES, start=1)
    ]
    return LadderRecord(
        rungs=rungs,
        stopped_after=6,
        stop_reason="ladder_exhausted",
        criteria_total=criteria,
        criteria_covered=criteria,
        dropped_over_budget=9,
        removed_on_refresh=0,
    )


def _record(outcome: LadderOutcome, dropped: int) -> LadderRecord:
    return LadderRecord(
        rungs=list(outcome.rungs),
        stopped_after=outcome.stopped_after,
        stop_reason=outcome.stop_reason,  # type: ignore[arg-type]
        criteria_total=len(outcome.criteria_covered),
        criteria_covered=sum(outcome.criteria_covered),
        dropped_over_budget=dropped,
        removed_on_refresh=0,
    )


def _pack(
    req: PackRequest,
    env: PackEnv,
    anchors: Sequence[Anchor],
    summaries: Sequence[MicroSummary],
    ladder: LadderRecord,
    *,
    risks: Sequence[str],
    questions: Sequence[str],
    actions: Sequence[str],
    token_estimate: int,
) -> LocalContextPack:
    checks = compute_checks(
        env.root, anchors, summaries, token_estimate=token_estimate, budget=req.budget
    )
    return LocalContextPack(
        schema="codelibrarian.lcp/1",
        agent=req.agent,  # type: ignore[arg-type]
        task_id=req.task_id,
        goal=req.goal,
        acceptance_criteria=list(req.acceptance),
        constraints=list(req.constraints),
        scope_class=req.scope,  # type: ignore[arg-type]
        model_capability=req.capability,  # type: ignore[arg-type]
        budget_tokens=req.budget,
        model=req.model,
        run_id=req.run_id,
        as_of=req.as_of,
        anchors=list(anchors),
        micro_summaries=list(summaries),
        risk_notes=list(risks),
        open_questions=list(questions),
        next_actions=list(actions),
        ladder=ladder,
        token_estimate=token_estimate,
        bloat_checks=checks,
    )


def _materialize(drafts: Sequence[AnchorDraft]) -> tuple[list[Anchor], list[MicroSummary]]:
    ordered = sorted(drafts, key=order_key)
    anchors = [to_anchor(d) for d in ordered]
    summaries = [s for s in (summary_of(d) for d in ordered) if s is not None]
    return anchors, summaries


def assemble_pack(req: PackRequest, env: PackEnv) -> tuple[LocalContextPack, str]:
    """Climb the ladder and return the finished pack and its exact file text."""
    nav = Navigator(env.root, env.store, env.is_sensitive, env.gate)
    provisional = _provisional(len(_criteria(req)))

    def build(drafts: Sequence[AnchorDraft], ladder: LadderRecord, te: int) -> LocalContextPack:
        anchors, summaries = _materialize(drafts)
        return _pack(
            req,
            env,
            anchors,
            summaries,
            ladder,
            risks=_risks(req, env, anchors),
            questions=_questions(req, env, drafts),
            actions=_actions(req, anchors, _near(drafts)),
            token_estimate=te,
        )

    def measure(drafts: Sequence[AnchorDraft]) -> int:
        return env.tokenizer.count(dump_model(build(drafts, provisional, req.budget), compact=True))

    base = measure(())
    if base > req.budget:
        raise BudgetInfeasible(
            f"the pack without any anchor needs {base} tokens; the {req.scope}/"
            f"{req.capability} budget is {req.budget}",
            required_tokens=base,
            budget=req.budget,
            offenders=("goal", "acceptance_criteria", "constraints"),
            hint="Shorten the goal or the acceptance criteria, or pick a larger --scope.",
        )
    inp = LadderInput(
        agent=req.agent,
        criteria=_criteria(req),
        keywords=req.keywords,
        candidates=env.candidates,
        excluded=env.excluded,
        changes=env.changes,
        explicit_files=env.explicit_files,
        files=env.files,
        decisions=env.decisions,
        budget=req.budget,
    )
    outcome = climb(inp, nav, measure)
    drafts = list(outcome.drafts)
    dropped = 0
    while True:
        record = _record(outcome, dropped)

        def final(te: int, record: LadderRecord = record) -> LocalContextPack:
            return build(drafts, record, te)

        pack, text = _fix_point(final, env.tokenizer)
        if pack.token_estimate <= req.budget:
            return pack, text
        if not drafts:  # pragma: no cover - excluded by the base check above
            raise BudgetInfeasible("the pack does not fit its budget", budget=req.budget)
        drafts.remove(max(drafts, key=drop_key))
        dropped += 1


def refresh_pack(
    pack: LocalContextPack,
    *,
    root: Path,
    store: Storage | None,
    tokenizer: Tokenizer,
    is_sensitive: Callable[[str], bool],
    gate: SecretGate | None = None,
) -> tuple[LocalContextPack, str, tuple[str, ...], tuple[str, ...]]:
    """Re-fetch the anchors whose file hash changed; returns (pack, text, refreshed, missing).

    Everything else in the pack is kept. When the refreshed pack is over budget,
    anchors are dropped from the end of the pack order (the furthest of the
    last kind first) and counted in ``ladder.dropped_over_budget``.
    """
    nav = Navigator(root, store, is_sensitive, gate)
    result = refresh_anchors(nav, pack.anchors, pack.micro_summaries)
    anchors = list(result.anchors)
    dropped = pack.ladder.dropped_over_budget
    while True:
        refs = {a.ref for a in anchors}
        summaries = [s for s in result.summaries if s.ref in refs]
        ladder = pack.ladder.model_copy(
            update={
                "dropped_over_budget": dropped,
                "removed_on_refresh": pack.ladder.removed_on_refresh + len(result.missing),
            }
        )

        def build(
            te: int,
            anchors: Sequence[Anchor] = anchors,
            summaries: Sequence[MicroSummary] = summaries,
            ladder: LadderRecord = ladder,
        ) -> LocalContextPack:
            checks = compute_checks(
                root, anchors, summaries, token_estimate=te, budget=pack.budget_tokens
            )
            data = pack.model_dump(by_alias=True)
            data.update(
                anchors=[a.model_dump() for a in anchors],
                micro_summaries=[s.model_dump() for s in summaries],
                ladder=ladder.model_dump(),
                token_estimate=te,
                bloat_checks=checks.model_dump(),
            )
            return LocalContextPack.model_validate(data)

        new, text = _fix_point(build, tokenizer)
        if new.token_estimate <= pack.budget_tokens or not anchors:
            return new, text, result.refreshed, result.missing
        anchors.pop()
        dropped += 1
