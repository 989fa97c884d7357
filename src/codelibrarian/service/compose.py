"""The composer's service: the imperative shell around the pure ``composer`` package.

It runs a :class:`~codelibrarian.requests.ComposeRequest`: resolves it against the
workspace (``resolve.py``: defaults, the smallest pack, signal names), turns the
task into a :class:`~codelibrarian.trigger.Trigger` (``WorkspaceSession.trigger``;
the clock is read only when the caller gives no ``as_of``), gathers candidates from
every source, applies the policy engine, shapes the lane budget, runs the pure
composer (through the memory + disk cache), records the path-free decision and,
beside it, the private replay inputs (the sidecar). ``explain`` and ``replay`` read
them back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from ..composer import (
    Candidate,
    ComposeContext,
    Composition,
    CompositionCache,
    canonical_json,
    compose,
    digest,
)
from ..composer import replay as replay_record
from ..composer.types import Format
from ..config import LANES, BudgetConfig, LaneBudget
from ..errors import NotFound
from ..gate import GateDecision, RedactionLog, SecretGate
from ..index.storage import Storage
from ..persist import DecisionLog, DiskCache, TieredCache
from ..policy_engine import PolicyOutcome
from ..requests import ComposeRequest
from ..sources import SourceContext
from ..sources.local import changed_line_count
from ..tokens import Tokenizer, encoding_for_model, get_tokenizer, is_known_model
from ..trigger import Trigger
from ..vitals import VitalsSnapshot, measure, relevance_delta
from ..workspace.git import FileDiff
from ..workspace.private import private_write
from .later import after_reply, pending, queued, wait_recorded
from .resolve import resolve
from .results import ComposeResult, PackedArtifact, RejectedArtifact, ReplayResult
from .workspace import WorkspaceSession, now_or

__all__ = [
    "ComposeService",
    "Gathered",
    "Prepared",
    "shape_budget",
]

#: lanes that may take the budget other lanes cannot use
_ELASTIC = ("retrieved", "structure")
_DEFAULT_TOTAL = 8000
_PRIVATE_DIR = "private"
STATUS_FILE = "vitals.json"


#: identifiers of a given diff added to the task's words when choosing the first files
FIRST_PACK_DIFF_WORDS = 40


def _first_pack_hints(
    task: str, explicit: Sequence[str], diff_text: str | None
) -> tuple[str, list[str]]:
    """The words and files the answer-first index parses first for this call.

    With a diff given as text, its files come first (like named files) and its
    identifiers join the task's words: the files that use them are where a change
    ripples, and an index that has not parsed them cannot show their code. The
    words only choose what to parse first; nothing here reaches the pack.
    """
    if not diff_text:
        return task, list(explicit)
    from ..sources.ranking import changed_identifiers
    from ..workspace.git import parse_unified_diff

    changes = parse_unified_diff(diff_text)
    words = changed_identifiers(changes, FIRST_PACK_DIFF_WORDS)
    files = [*explicit, *(d.path for d in changes if not d.binary)]
    return " ".join([task, *words]), files


def shape_budget(
    base: BudgetConfig, total: int, available: dict[str, int], *, scale_defaults: bool
) -> BudgetConfig:
    """The lane budget for one composition.

    With the default lanes, mins and maxes scale with ``total / 8000`` (the
    defaults are written for 8,000 tokens), so a 2,000-token pack does not reserve
    1,000 tokens for a local lane it may not need. Then the room no lane can use
    (``total`` minus each lane's ``min(max, available)``) is lent to the retrieved
    and structure lanes, which usually have more to give: each may grow by that
    whole room (never beyond what it has), and the composer's score order decides
    which of the two gets it. Configured (non-default) lanes keep their numbers;
    mins are scaled down only when they no longer fit ``total``.
    """
    lanes: dict[str, LaneBudget] = {}
    for name in LANES:
        spec = base.lanes[name]
        if scale_defaults:
            lo = spec.min * total // _DEFAULT_TOTAL
            hi = max(lo, spec.max * total // _DEFAULT_TOTAL)
            spec = LaneBudget(min=lo, max=hi, priority=spec.priority)
        lanes[name] = spec
    sum_mins = sum(s.min for s in lanes.values())
    if sum_mins > total:
        lanes = {
            n: LaneBudget(min=s.min * total // sum_mins, max=s.max, priority=s.priority)
            for n, s in lanes.items()
        }
    used = sum(min(lanes[n].max, available.get(n, 0)) for n in LANES)
    spare = max(0, total - used)
    if spare:
        for name in _ELASTIC:
            s = lanes[name]
            extra = min(spare, max(0, available.get(name, 0) - s.max))
            lanes[name] = LaneBudget(min=s.min, max=min(total, s.max + extra), priority=s.priority)
    return BudgetConfig(total_tokens=total, lanes=lanes)


@dataclass(frozen=True, slots=True)
class Gathered:
    """Every source's candidates (vitals-adjusted), the vitals, the change and the index."""

    candidates: tuple[Candidate, ...]
    vitals: VitalsSnapshot
    changes: tuple[FileDiff, ...]
    store: Storage
    #: a candidate's whole file, for the secret gate (None: sensitive, missing, binary)
    read: Callable[[str], str | None] = lambda _path: None
    #: the locate stages that ranked the files and spans: ``(stage, summary)``, counts only
    locate: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Prepared:
    """What the pure composer needs, after the policy engine: candidates to context."""

    candidates: tuple[Candidate, ...]
    outcome: PolicyOutcome
    budget: BudgetConfig
    context: ComposeContext
    store: Storage
    vitals: VitalsSnapshot
    locate: tuple[tuple[str, str], ...] = ()


class ComposeService:
    """Compose, record, explain and replay packs for one :class:`WorkspaceSession`."""

    def __init__(self, ws: WorkspaceSession) -> None:
        self.ws = ws
        self._memory: CompositionCache[Composition] = CompositionCache()

    # -------------------------------------------------------------- compose

    def compose(
        self, request: ComposeRequest, *, progress: Callable[[int, int], None] | None = None
    ) -> ComposeResult:
        """Compose the pack ``request`` asks for (see
        :meth:`codelibrarian.api.Librarian.compose`); ``progress(done, total)`` follows
        a first index."""
        settings = resolve(request, self.ws.config)
        fmt, total, model = settings.fmt, settings.total, settings.model
        task = request.task
        now = now_or(request.as_of)
        explicit = self.ws.resolve_files(request.files)
        diff_text = request.diff_text
        first_task, first_files = _first_pack_hints(task, explicit, diff_text)
        readiness = self.ws.ensure_index(
            refresh=request.refresh, progress=progress, task=first_task, files=first_files
        )
        warnings = list(self.ws.file_warnings(explicit, self.ws.open_store()))
        if not is_known_model(model):
            encoding, factor = encoding_for_model(model)
            warnings.append(
                f"unknown model {model!r}: tokens are counted with {encoding} times "
                f"{factor / 1000:g} (the largest safety factor); name a known model to count "
                "exactly (docs/tokenizers.md)"
            )
        intake = RedactionLog()
        gate = self.ws.gate
        task = gate.clean(task, surface="trigger", kind="task", log=intake)
        if diff_text is not None:
            diff_text = gate.clean_diff(diff_text, surface="trigger", log=intake)
        trigger = self.ws.trigger(
            task,
            as_of=now,
            event=request.event,
            files=explicit,
            base=request.base,
            diff_text=diff_text,
            model=model,
            agent_role=request.agent_role,
            refreshed=request.refresh,
        )
        result = self.compose_trigger(
            trigger,
            total=total,
            fmt=fmt,
            use_cache=request.use_cache and request.record,
            record=request.record,
            reveal=request.reveal,
            lanes=request.lanes,
            signals_off=request.signals_off,
            warnings=tuple(warnings),
            intake=tuple(intake.decisions),
        )
        degraded = readiness.degradations()
        return replace(result, degraded=degraded) if degraded else result

    def gather(
        self,
        trigger: Trigger,
        total: int,
        lanes: Sequence[str] | None = None,
        signals_off: frozenset[str] = frozenset(),
    ) -> Gathered:
        """Every source's candidates for ``trigger`` under ``total`` tokens (only
        ``lanes``' candidates when given; ``signals_off`` ranking signals switched off)."""
        ws = self.ws
        ws.state.ensure()
        store = ws.open_store()
        changes = ws.changes(trigger)
        memo = ws.generation_memo(store)
        ctx = SourceContext(
            root=ws.root,
            config=ws.config,
            trigger=trigger,
            tokenizer=get_tokenizer(trigger.model),
            secret=ws.state.secret(),
            state=ws.state,
            changes=changes,
            files=ws.indexed_files(store),
            store=store,
            budget=total,
            recency=ws.recency(trigger.as_of, trigger.commitish),
            is_sensitive=ws.is_sensitive,
        )
        ctx.memo["shared"] = memo
        if signals_off:
            ctx.memo["ablate"] = signals_off
        ctx.share_texts(memo.setdefault("texts", {}), memo.setdefault("lines", {}))
        vitals = measure(
            changed_lines=changed_line_count(changes),
            events_path=ws.state.events_path,
            status_path=ws.state.dir / STATUS_FILE,
            as_of=trigger.as_of,
        )
        candidates: list[Candidate] = []
        keep = None if lanes is None else frozenset(lanes)
        for source in ws.sources():
            if keep is not None and source.name in LANES and source.name not in keep:
                continue  # a built-in lane the caller left out: do not even gather it
            candidates.extend(c for c in source.gather(ctx) if keep is None or c.lane in keep)
        indexed = frozenset(ctx.files)

        def read(path: str) -> str | None:
            if path not in indexed or ws.is_sensitive(path):
                return None
            return ctx.read(path)

        adjusted = []
        for cand in candidates:
            delta = relevance_delta(vitals, lane=cand.lane, recency_bucket=cand.recency_bucket)
            adjusted.append(
                replace(cand, relevance=min(1000, cand.relevance + delta)) if delta else cand
            )
        ranking = ctx.memo.get("ranking")  # set when a lane ranked files (sources.ranking)
        stages = tuple((st.name, st.summary) for st in getattr(ranking, "stages", ()))
        share = ctx.memo.get("structure.map_share")  # set by the map (sources.structure)
        if share is not None:
            stages = (*stages, ("map", share.reason()))
        return Gathered(tuple(adjusted), vitals, changes, store, read, stages)

    def prepare(
        self,
        trigger: Trigger,
        total: int,
        lanes: Sequence[str] | None = None,
        signals_off: frozenset[str] = frozenset(),
    ) -> Prepared:
        """Gather, apply the policy engine, shape the budget and build the context."""
        gathered = self.gather(trigger, total, lanes, signals_off)
        config = self.ws.config
        outcome = self.ws.policy.apply(gathered.candidates, budget=total, read=gathered.read)
        after_reply(self.ws.save_scans)
        excluded = {ident for ident, _ in outcome.excluded_rules}
        available: dict[str, int] = dict.fromkeys(LANES, 0)
        for c in outcome.candidates:
            if c.id not in excluded:
                available[c.lane] += c.token_estimate
        budget = shape_budget(
            config.budget,
            total,
            available,
            scale_defaults=config.budget.lanes == BudgetConfig().lanes,
        )
        rules_digest = digest(
            sorted(c.content_hash for c in outcome.candidates if c.lane in ("rules", "policy"))
        )
        context = ComposeContext.make(
            as_of=trigger.as_of,
            workspace_fingerprint=self.ws.fingerprint(gathered.store),
            trigger=trigger.event,
            commitish=trigger.commitish or "",
            rules_digest=rules_digest,
            extra={
                "vitals": canonical_json(gathered.vitals.to_dict()),
                "redactions": canonical_json([r.to_dict() for r in outcome.redactions]),
                "excluded": canonical_json([list(e) for e in outcome.excluded_rules]),
                "trigger": digest(
                    {k: v for k, v in trigger.to_dict().items() if k not in ("as_of", "commitish")}
                ),
            },
        )
        return Prepared(
            outcome.candidates,
            outcome,
            budget,
            context,
            gathered.store,
            gathered.vitals,
            gathered.locate,
        )

    def compose_trigger(
        self,
        trigger: Trigger,
        *,
        total: int,
        fmt: str,
        use_cache: bool,
        record: bool,
        reveal: bool,
        lanes: Sequence[str] | None = None,
        signals_off: frozenset[str] = frozenset(),
        warnings: tuple[str, ...] = (),
        intake: tuple[GateDecision, ...] = (),
    ) -> ComposeResult:
        """Compose ``trigger`` under ``total``; record the decision when ``record``."""
        state = self.ws.state
        tokenizer = get_tokenizer(trigger.model)
        prep = self.prepare(trigger, total, lanes, signals_off)
        caps = self.ws.config.state
        disk = DiskCache(
            state.cache_dir,
            max_entries=caps.cache_max_entries,
            max_bytes=caps.cache_max_mb * 1024 * 1024,
        )
        cache = TieredCache(self._memory, disk) if use_cache else None
        render_fmt: Format = "markdown" if fmt == "json" else cast(Format, fmt)
        composition = compose(
            list(prep.candidates),
            budget=prep.budget,
            tokenizer=tokenizer,
            context=prep.context,
            constraints=prep.outcome.constraints,
            fmt=render_fmt,
            cache=cache,
        )
        text, swept = _sweep(self.ws.gate, composition.text, tokenizer, total)
        decision_id = composition.decision_id if record else None
        if not composition.rendered:
            indexed = len(self.ws.indexed_files(prep.store))
            warnings = (*warnings, _empty_pack_warning(prep, total, indexed))
        result = _result(
            composition=composition,
            candidates=prep.candidates,
            outcome=prep.outcome,
            vitals=prep.vitals,
            trigger=trigger,
            tokenizer=tokenizer,
            fmt=fmt,
            decision_id=decision_id,
            reveal=reveal,
            text=text,
            warnings=warnings,
            intake=(*intake, *swept),
        )
        result = replace(result, locate=prep.locate)
        if decision_id is not None:
            self._record(
                composition,
                trigger,
                result,
                total=total,
                fmt=fmt,
                lanes=lanes,
                signals_off=signals_off,
            )
        return result

    def _record(
        self,
        composition: Composition,
        trigger: Trigger,
        result: ComposeResult,
        *,
        total: int,
        fmt: str,
        lanes: Sequence[str] | None,
        signals_off: frozenset[str],
    ) -> None:
        """Record the decision and its replay inputs: now, or after a resident server's
        reply (``later.py``; nothing recorded changes the answer)."""
        ws = self.ws
        done = pending(ws.state.dir) if queued() else None

        def write() -> None:
            try:
                ws.bound_state()  # first, so an expired day log is not kept alive by this one
                DecisionLog(ws.state.decisions_dir).append(composition.record)
                self._write_sidecar(
                    composition.decision_id,
                    trigger,
                    total=total,
                    fmt=fmt,
                    files=result.files,
                    lanes=lanes,
                    locate=result.locate,
                    signals_off=signals_off,
                )
                ws.bound_state()  # and after, so the folder ends within its size cap
            finally:
                if done is not None:
                    done()

        after_reply(write)

    # ------------------------------------------------------ explain, replay

    def _sidecar_path(self, decision_id: str) -> Path:
        if not decision_id or not all(c.isalnum() for c in decision_id):
            raise NotFound(f"no decision {decision_id!r}", hint="Check the decision id.")
        return self.ws.state.decisions_dir / _PRIVATE_DIR / f"{decision_id}.json"

    def _write_sidecar(
        self,
        decision_id: str,
        trigger: Trigger,
        *,
        total: int,
        fmt: str,
        files: Sequence[str],
        lanes: Sequence[str] | None = None,
        locate: Sequence[tuple[str, str]] = (),
        signals_off: frozenset[str] = frozenset(),
    ) -> None:
        """Private replay inputs (task, diff, files) and the files the pack showed.

        Kept apart from the path-free decision record, inside the git-ignored state
        folder; the history lane reads earlier ones as decision snapshots.
        """
        path = self._sidecar_path(decision_id)
        data = {
            "trigger": trigger.to_dict(),  # task and diff passed the secret gate at intake
            "budget": total,
            "format": fmt,
            "files": list(files),
        }
        if lanes is not None:
            data["lanes"] = list(lanes)
        if locate:
            data["locate"] = [list(stage) for stage in locate]
        if signals_off:
            data["signals_off"] = sorted(signals_off)
        data = self.ws.gate.clean_value(data, surface="sidecar")
        private_write(path, json.dumps(data, sort_keys=True) + "\n")

    def decision(self, decision_id: str) -> dict[str, Any]:
        """The decision record (ids, kinds, lanes, counts, digests; no paths or content).

        A decision a resident server has answered with but not yet recorded (its
        records follow the reply) is waited for."""
        log = DecisionLog(self.ws.state.decisions_dir)
        try:
            return log.read(decision_id)
        except NotFound:
            if not wait_recorded(self.ws.state.dir):
                raise
        return log.read(decision_id)

    def explain(self, decision_id: str) -> dict[str, Any]:
        """A recorded decision explained: summary, lanes, every verdict, redactions, vitals."""
        rec = self.decision(decision_id)
        extra = rec.get("extra", {})
        rankings = rec.get("rankings", [])
        return {
            "decision_id": rec["id"],
            "as_of": rec["as_of"],
            "trigger": rec["trigger"],
            "format": rec["format"],
            "tokenizer": rec["tokenizer"],
            "budget": rec["budget"]["total_tokens"],
            "tokens": rec["tokens"],
            "cache_key": rec["cache_key"],
            "cache_hit": rec["cache_hit"],
            "counts": rec["counts"],
            "lane_tokens": rec["lane_tokens"],
            "selected": [r for r in rankings if r["selected"]],
            "rejected": [r for r in rankings if not r["selected"]],
            "redactions": json.loads(extra.get("redactions", "[]")),
            "excluded_by_policy": [
                {"id": ident, "reason": "excluded_by_policy", "rule": rule}
                for ident, rule in json.loads(extra.get("excluded", "[]"))
            ],
            "vitals": json.loads(extra.get("vitals", "{}")),
            "locate": self._recorded_locate(rec["id"]),
        }

    def _recorded_locate(self, decision_id: str) -> list[dict[str, str]]:
        """The locate stages kept with the decision's replay inputs (none: an older
        decision, or a pack made without ranking files)."""
        try:
            side = json.loads(self._sidecar_path(decision_id).read_text(encoding="utf-8"))
        except (OSError, ValueError, NotFound):
            return []
        return [{"stage": name, "summary": summary} for name, summary in side.get("locate", [])]

    def replay(self, decision_id: str) -> ReplayResult:
        """Regather candidates for a recorded trigger and re-run the decision without cache."""
        rec = self.decision(decision_id)
        path = self._sidecar_path(decision_id)
        try:
            side = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise NotFound(
                f"decision {decision_id} has no replay inputs",
                hint="Only compositions made by this workspace's Librarian can be replayed.",
            ) from None
        trigger = Trigger.from_dict(side["trigger"])
        total = int(side["budget"])
        lanes = side.get("lanes")
        signals_off = frozenset(side.get("signals_off", ()))
        self.ws.ensure_index(refresh=True)
        prep = self.prepare(trigger, total, lanes, signals_off)
        differences: list[str] = []
        recorded_extra = rec.get("extra", {})
        for key, value in prep.context.extra:
            if recorded_extra.get(key) != value:
                differences.append(f"{key} changed")
        if prep.context.workspace_fingerprint != rec.get("workspace_fingerprint"):
            differences.append("workspace files changed")
        report = replay_record(rec, list(prep.candidates), get_tokenizer(trigger.model))
        if report.status == "inputs_changed" or differences:
            return ReplayResult(
                decision_id, "inputs_changed", tuple(differences) + tuple(report.differences)
            )
        return ReplayResult(decision_id, report.status, tuple(report.differences))


def _result(
    *,
    composition: Composition,
    candidates: Sequence[Candidate],
    outcome: PolicyOutcome,
    vitals: VitalsSnapshot,
    trigger: Trigger,
    tokenizer: Tokenizer,
    fmt: str,
    decision_id: str | None,
    reveal: bool,
    text: str,
    warnings: tuple[str, ...],
    intake: tuple[GateDecision, ...],
) -> ComposeResult:
    """The composition as the facade returns it: packed artifacts with local paths,
    rejected ones with reasons (paths only when ``reveal``, never for sensitive files)."""
    by_id = {c.id: c for c in candidates}
    verdicts = {v.id: v for v in composition.verdicts}
    sensitive = {ident for ident, _ in outcome.excluded_rules}
    artifacts = []
    for r in composition.rendered:
        cand = by_id.get(r.id)
        path = cand.path if cand and not cand.path.startswith(".librarian/") else None
        v = verdicts.get(r.id)
        artifacts.append(
            PackedArtifact(
                id=r.id,
                kind=r.kind,
                lane=r.lane,
                path=path or None,
                lines=cand.lines if cand else None,
                tokens=r.tokens,
                shrunk=r.shrunk,
                strategy=r.strategy,
                reason=v.reason if v else "score",
            )
        )
    rendered_ids = {r.id for r in composition.rendered}
    rejected = []
    for v in composition.verdicts:
        if v.id in rendered_ids:
            continue
        cand = by_id.get(v.id)
        path = None
        if reveal and cand and v.id not in sensitive and not cand.path.startswith(".librarian/"):
            path = cand.path or None
        rejected.append(
            RejectedArtifact(v.id, v.kind, v.lane, v.token_estimate, v.reason, v.detail, path)
        )
    return ComposeResult(
        text=text,
        format=fmt,
        tokens=composition.tokens,
        budget=composition.budget,
        model=trigger.model,
        tokenizer=tokenizer.name,
        decision_id=decision_id,
        cache_key=composition.cache_key,
        cache_hit=composition.cache_hit,
        artifacts=tuple(artifacts),
        rejected=tuple(rejected),
        redactions=tuple(outcome.redactions),
        vitals=vitals,
        trigger=trigger,
        explanation=composition.explanation,
        candidate_count=len(candidates),
        warnings=warnings,
        intake_redactions=intake,
    )


def _sweep(
    gate: SecretGate, text: str, tokenizer: Tokenizer, budget: int
) -> tuple[str, tuple[GateDecision, ...]]:
    """The rendered pack through the gate once more (a safety net: candidates were
    cleaned before selection, so this finds nothing unless a renderer added a secret).

    A redaction could make the text longer in tokens; whole lines are then dropped
    from the end until it fits the budget again.
    """
    log = RedactionLog()
    clean = gate.clean(text, surface="pack", kind="rendered", log=log)
    if not log.decisions:
        return text, ()
    while clean and tokenizer.count(clean) > budget:
        clean = clean[: clean.rstrip("\n").rfind("\n") + 1]
    return clean, tuple(log.decisions)


def _empty_pack_warning(prep: Prepared, total: int, indexed: int) -> str:
    """Why nothing was selected, and what to do (``indexed``: files in the index)."""
    excluded = {ident for ident, _ in prep.outcome.excluded_rules}
    sizes = [c.token_estimate for c in prep.candidates if c.id not in excluded]
    if sizes:
        return (
            f"the pack is empty: a budget of {total} tokens is too small for any of the "
            f"{len(sizes)} candidates (the smallest needs about {min(sizes)} tokens); "
            "raise the budget"
        )
    if not indexed:
        return (
            "the pack is empty: the index holds no files (are they all ignored? "
            "`librarian scan` lists what is read and what is skipped)"
        )
    if prep.candidates:
        return (
            f"the pack is empty: the policy excludes every one of the {len(prep.candidates)} "
            "candidates"
        )
    files = f"{indexed} indexed file{'' if indexed == 1 else 's'}"
    return (
        f"the pack is empty: nothing in the {files} matched the task; name the files "
        "it is about, or use the code's own words"
    )
