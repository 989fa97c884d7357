"""The one facade the CLI, the MCP server and users' Python code call.

``Librarian(repo)`` owns the workspace state (``.librarian/``), the index, the
sources, the policy engine and the composition cache. It is the imperative
shell around the pure composer: it reads the clock (only when the caller gives
no ``as_of``), git, files and the index, and writes the decision log.

Typical use::

    lib = Librarian(".")
    result = lib.compose("fix the retry loop in the HTTP client", budget=4000)
    print(result.text)
    lib.replay(result.decision_id).status   # "identical"
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from .composer import (
    Candidate,
    ComposeContext,
    Composition,
    CompositionCache,
    Explanation,
    canonical_json,
    compose,
    digest,
    recency_bucket,
)
from .composer import replay as replay_record
from .composer.fingerprint import workspace_fingerprint
from .composer.types import Format
from .config import LANES, BudgetConfig, Config, LaneBudget, load_config
from .errors import NotFound, UsageError
from .explain_view import render_terminal
from .persist import DecisionLog, DiskCache, TieredCache
from .policy_engine import PolicyEngine, Redaction
from .sources import Source, SourceContext, load_sources
from .sources.local import changed_line_count
from .sources.sessions import Learning, SessionEntry, append_learning, append_session_entry
from .sources.violations import Violation, add_violation, load_violations
from .tokens import Tokenizer, get_tokenizer
from .trigger import Trigger
from .vitals import StatusRecord, VitalsSnapshot, measure, record_status, relevance_delta
from .workspace.git import (
    FileDiff,
    diff_against,
    head_commit,
    is_git_repo,
    parse_unified_diff,
    recent_commits,
    working_diff,
)
from .workspace.state import State

if TYPE_CHECKING:
    from .packs.runs import RunSummary
    from .packs.service import HandoffResult, PackResult, RunDetail
    from .packs.window import ComposedWindow, SaopEnvelope
    from .query.pipeline import PipelineResult
    from .query.types import QueryDepth

__all__ = [
    "FORMATS",
    "CodeSnippet",
    "ComposeResult",
    "IndexStatus",
    "Librarian",
    "PackedArtifact",
    "QueryResult",
    "RejectedArtifact",
    "ReplayResult",
]

Fmt = Literal["markdown", "xml", "json", "plain"]
FORMATS: tuple[str, ...] = ("markdown", "xml", "json", "plain")
#: lanes that may take the budget other lanes cannot use
_ELASTIC = ("retrieved", "structure")
_DEFAULT_TOTAL = 8000
_PRIVATE_DIR = "private"
_STATUS_FILE = "vitals.json"


@dataclass(frozen=True, slots=True)
class PackedArtifact:
    """One artifact as rendered in the pack (``path``/``lines`` are local-only)."""

    id: str
    kind: str
    lane: str
    path: str | None
    lines: tuple[int, int] | None
    tokens: int
    shrunk: bool
    strategy: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "path": self.path,
            "lines": list(self.lines) if self.lines else None,
            "tokens": self.tokens,
            "shrunk": self.shrunk,
            "strategy": self.strategy,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class RejectedArtifact:
    """A candidate left out, with the composer's or the policy's reason."""

    id: str
    kind: str
    lane: str
    token_estimate: int
    reason: str
    detail: str
    path: str | None = None  # only with reveal=True, never for sensitive files

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "lane": self.lane,
            "token_estimate": self.token_estimate,
            "reason": self.reason,
            "detail": self.detail,
        }
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass(frozen=True, slots=True)
class ComposeResult:
    """The pack and everything that explains it."""

    text: str
    format: str
    tokens: int
    budget: int
    model: str
    tokenizer: str
    decision_id: str | None
    cache_key: str
    cache_hit: bool
    artifacts: tuple[PackedArtifact, ...]
    rejected: tuple[RejectedArtifact, ...]
    redactions: tuple[Redaction, ...]
    vitals: VitalsSnapshot
    trigger: Trigger
    explanation: Explanation = field(repr=False)
    candidate_count: int = 0

    @property
    def files(self) -> tuple[str, ...]:
        """Relative paths of the files the pack shows, in pack order, without repeats."""
        return tuple(dict.fromkeys(a.path for a in self.artifacts if a.path))

    def explain_text(self, *, width: int = 100) -> str:
        """The explanation as terminal text (ids, kinds, lanes, reasons; no paths)."""
        text = render_terminal(self.explanation, width=width)
        if self.redactions:
            spans = sum(r.spans for r in self.redactions)
            text += (
                f"\nsecret_redacted: {spans} span(s) in {len(self.redactions)} artifact(s)"
                + "".join(f"\n  {r.id} {r.kind}: {r.spans} ({_rules(r)})" for r in self.redactions)
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (schema in docs/compose.md)."""
        return {
            "schema": "codelibrarian.compose/1",
            "decision_id": self.decision_id,
            "cache_key": self.cache_key,
            "cache_hit": self.cache_hit,
            "format": self.format,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "budget": self.budget,
            "tokens": self.tokens,
            "totals": {
                "candidates": self.candidate_count,
                "selected": len(self.artifacts),
                "rejected": len(self.rejected),
                "shrunk": sum(1 for a in self.artifacts if a.shrunk),
                "redacted_spans": sum(r.spans for r in self.redactions),
                "lane_tokens": _lane_tokens(self.artifacts),
            },
            "artifacts": [a.to_dict() for a in self.artifacts],
            "rejected": [r.to_dict() for r in self.rejected],
            "redactions": [r.to_dict() for r in self.redactions],
            "vitals": self.vitals.to_dict(),
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Outcome of :meth:`Librarian.replay`: ``identical``, ``inputs_changed`` or ``diverged``."""

    decision_id: str
    status: Literal["identical", "inputs_changed", "diverged"]
    differences: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.status == "identical"

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision_id": self.decision_id,
            "status": self.status,
            "differences": list(self.differences),
        }


def _rules(r: Redaction) -> str:
    return ", ".join(f"{name}={n}" for name, n in r.rules)


def _lane_tokens(artifacts: Sequence[PackedArtifact]) -> dict[str, int]:
    out = dict.fromkeys(LANES, 0)
    for a in artifacts:
        out[a.lane] += a.tokens
    return out


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


class Librarian:
    """Index a repository and compose context packs for it (see the module docstring)."""

    def __init__(self, repo_path: str | os.PathLike[str], config: Config | None = None) -> None:
        root = Path(repo_path).expanduser().resolve()
        if not root.is_dir():
            raise UsageError(f"{repo_path} is not a directory", hint="Pass a repository folder.")
        self.root = root
        self.config = config if config is not None else load_config(root)
        self.state = State(root)
        self._sources: tuple[Source, ...] | None = None
        self._memory: CompositionCache[Composition] = CompositionCache()
        self._policy = PolicyEngine(self.config)
        self._store: Any = None
        self._indexed = False
        self._signature: tuple[Any, ...] | None = None
        self._head: str | None = None
        self._tracked_clean = False
        self._is_git: bool | None = None
        self._commit_times: tuple[str | None, dict[str, int]] | None = None
        self._memo: dict[str, Any] = {}

    # ------------------------------------------------------------------ index

    def index(self, *, progress: Callable[[int, int], None] | None = None) -> Any:
        """Build or refresh the index incrementally; returns the indexer's stats."""
        from .index.indexer import index_workspace

        self.state.ensure()
        self._close_store()
        stats = index_workspace(self.root, self.config, progress=progress)
        self._indexed = True
        return stats

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _open_store(self) -> Any:
        from .index.store import open_store

        if self._store is None:
            # not read-only: the store caches derived graphs for the next call
            self._store = open_store(self.root)
        return self._store

    def close(self) -> None:
        """Release the index connection."""
        self._close_store()

    def __enter__(self) -> Librarian:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---------------------------------------------------------------- compose

    def compose(
        self,
        task: str,
        *,
        budget: int | None = None,
        model: str | None = None,
        base: str | None = None,
        diff_text: str | None = None,
        files: Iterable[str] = (),
        fmt: Fmt | None = None,
        as_of: int | None = None,
        agent_role: str | None = None,
        use_cache: bool = True,
        event: str = "manual",
        refresh: bool = True,
        record: bool = True,
        reveal: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ComposeResult:
        """Compose a context pack for ``task`` under ``budget`` tokens.

        ``base`` (a revision) or ``diff_text`` (a unified diff) choose the current
        change; by default it is the staged + unstaged diff against HEAD. ``as_of``
        (epoch seconds) defaults to now. The index is built on first use and
        refreshed (changed files only) when ``refresh`` is true. ``record=False``
        (a dry run) writes no decision and bypasses the cache. ``reveal`` adds
        paths to rejected artifacts (never for sensitive files).
        """
        fmt = fmt or self.config.compose.format
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}", hint=f"Use one of: {', '.join(FORMATS)}.")
        total = self.config.budget.total_tokens if budget is None else int(budget)
        if total <= 0:
            raise UsageError("the budget must be a positive number of tokens")
        model = model or self.config.compose.model
        now = int(time.time()) if as_of is None else int(as_of)
        self._ensure_index(refresh=refresh, progress=progress)
        is_git = self._git()
        commitish = self._head if is_git and refresh else None
        if is_git and commitish is None:
            commitish = head_commit(self.root)
        trigger = Trigger.create(
            task,
            as_of=now,
            event=event,
            files=files,
            base=base,
            diff_text=diff_text,
            no_change=not is_git and diff_text is None,
            commitish=commitish,
            model=model,
            agent_role=agent_role,
        )
        return self._compose_trigger(
            trigger,
            total=total,
            fmt=fmt,
            use_cache=use_cache and record,
            record=record,
            reveal=reveal,
        )

    def _ensure_index(
        self, *, refresh: bool, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Index on first use; refresh when the workspace may have changed since.

        In a git repository the check is cheap: HEAD, ``git status`` and the size and
        modification time of every file it lists. Outside git every refresh runs
        the (incremental) indexer.
        """
        if not self.state.index_path.exists() or not self._indexed:
            self.index(progress=progress)
            self._signature = self._workspace_signature()
            return
        if not refresh:
            self._tracked_clean = False
            return
        signature = self._workspace_signature()
        if signature is None or signature != self._signature:
            self.index(progress=progress)
            self._signature = signature

    def _git(self) -> bool:
        if self._is_git is None:
            self._is_git = is_git_repo(self.root)
        return self._is_git

    def _workspace_signature(self) -> tuple[Any, ...] | None:
        """HEAD, the paths ``git status`` lists and their size and mtime (one git call)."""
        if not self._git():
            return None
        try:
            out = subprocess.run(
                [
                    "git",
                    "-C",
                    str(self.root),
                    "status",
                    "--porcelain=v2",
                    "--branch",
                    "-z",
                    "--untracked-files=all",
                    "--no-renames",
                ],
                capture_output=True,
                check=True,
                timeout=60,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        head: str | None = None
        entries: list[tuple[str, int, int]] = []
        tracked_clean = True
        for item in out.split(b"\0"):
            text = item.decode("utf-8", "surrogateescape")
            if text.startswith("# branch.oid "):
                oid = text.split(" ", 2)[2].strip()
                head = oid if oid != "(initial)" else None
                continue
            if text.startswith("1 "):
                rel = text.split(" ", 8)[8]
            elif text.startswith("u "):
                rel = text.split(" ", 10)[10]
            elif text.startswith("2 "):
                rel = text.split(" ", 9)[9]
            elif text.startswith("? "):
                rel = text[2:]
            else:
                continue
            if not text.startswith("? "):
                tracked_clean = False
            try:
                st = (self.root / rel).stat()
                entries.append((rel, st.st_size, st.st_mtime_ns))
            except OSError:
                entries.append((rel, -1, -1))
        self._head = head
        # nothing staged or modified: the working diff against HEAD is empty
        self._tracked_clean = tracked_clean
        return (head, tuple(sorted(entries)))

    def _changes(self, trigger: Trigger) -> tuple[FileDiff, ...]:
        change = trigger.change
        if change.mode == "diff":
            return parse_unified_diff(change.diff_text or "")
        if change.mode == "base":
            return diff_against(self.root, change.base or "HEAD")
        if change.mode == "auto":
            if self._tracked_clean:
                return ()
            return working_diff(self.root)
        return ()

    def _recency(self, as_of: int, commitish: str | None) -> dict[str, int]:
        """Git recency bucket of each file touched by the last 50 commits."""
        if not self._git():
            return {}
        if self._commit_times is None or self._commit_times[0] != commitish:
            newest: dict[str, int] = {}
            for commit in recent_commits(self.root, limit=50):
                for path in commit.files:
                    if commit.timestamp > newest.get(path, -1):
                        newest[path] = commit.timestamp
            self._commit_times = (commitish, newest)
        times = self._commit_times[1]
        return {p: recency_bucket(as_of - ts) for p, ts in sorted(times.items())}

    def _is_sensitive(self, path: str) -> bool:
        return self._policy.is_sensitive(path)

    def _gather(
        self, trigger: Trigger, total: int
    ) -> tuple[list[Candidate], VitalsSnapshot, tuple[FileDiff, ...], Any]:
        self.state.ensure()
        store = self._open_store()
        changes = self._changes(trigger)
        generation = store.generation()
        if self._memo.get("generation") != generation:
            self._memo = {"generation": generation}
        files = self._memo.get("files")
        if files is None:
            files = tuple(sorted(r.path for r in store.files()))
            self._memo["files"] = files
        ctx = SourceContext(
            root=self.root,
            config=self.config,
            trigger=trigger,
            tokenizer=get_tokenizer(trigger.model),
            secret=self.state.secret(),
            state=self.state,
            changes=changes,
            files=files,
            store=store,
            budget=total,
            recency=self._recency(trigger.as_of, trigger.commitish),
            is_sensitive=self._is_sensitive,
        )
        ctx.memo["shared"] = self._memo
        ctx.share_texts(self._memo.setdefault("texts", {}), self._memo.setdefault("lines", {}))
        vitals = measure(
            changed_lines=changed_line_count(changes),
            events_path=self.state.events_path,
            status_path=self.state.dir / _STATUS_FILE,
            as_of=trigger.as_of,
        )
        candidates: list[Candidate] = []
        for source in self.sources():
            candidates.extend(source.gather(ctx))
        adjusted = []
        for cand in candidates:
            delta = relevance_delta(vitals, lane=cand.lane, recency_bucket=cand.recency_bucket)
            adjusted.append(
                replace(cand, relevance=min(1000, cand.relevance + delta)) if delta else cand
            )
        return adjusted, vitals, changes, store

    def sources(self) -> tuple[Source, ...]:
        """The registered sources (built-ins and plug-ins), loaded once."""
        if self._sources is None:
            self._sources = load_sources()
        return self._sources

    def _fingerprint(self, store: Any) -> str:
        cached = self._memo.get("fingerprint")
        if cached is None:
            cached = workspace_fingerprint(
                self.state.secret(), ((r.path, r.content_hash) for r in store.files())
            )
            self._memo["fingerprint"] = cached
        return str(cached)

    def _prepare(
        self, trigger: Trigger, total: int
    ) -> tuple[list[Candidate], Any, BudgetConfig, ComposeContext, Any, VitalsSnapshot]:
        candidates, vitals, _changes, store = self._gather(trigger, total)
        outcome = self._policy.apply(candidates, budget=total)
        excluded = {ident for ident, _ in outcome.excluded_rules}
        available: dict[str, int] = dict.fromkeys(LANES, 0)
        for c in outcome.candidates:
            if c.id not in excluded:
                available[c.lane] += c.token_estimate
        budget = shape_budget(
            self.config.budget,
            total,
            available,
            scale_defaults=self.config.budget.lanes == BudgetConfig().lanes,
        )
        rules_digest = digest(
            sorted(c.content_hash for c in outcome.candidates if c.lane in ("rules", "policy"))
        )
        context = ComposeContext.make(
            as_of=trigger.as_of,
            workspace_fingerprint=self._fingerprint(store),
            trigger=trigger.event,
            commitish=trigger.commitish or "",
            rules_digest=rules_digest,
            extra={
                "vitals": canonical_json(vitals.to_dict()),
                "redactions": canonical_json([r.to_dict() for r in outcome.redactions]),
                "excluded": canonical_json([list(e) for e in outcome.excluded_rules]),
                "trigger": digest(
                    {k: v for k, v in trigger.to_dict().items() if k not in ("as_of", "commitish")}
                ),
            },
        )
        return list(outcome.candidates), outcome, budget, context, store, vitals

    def _compose_trigger(
        self,
        trigger: Trigger,
        *,
        total: int,
        fmt: str,
        use_cache: bool,
        record: bool,
        reveal: bool,
    ) -> ComposeResult:
        tokenizer = get_tokenizer(trigger.model)
        candidates, outcome, budget, context, _store, vitals = self._prepare(trigger, total)
        cache = TieredCache(self._memory, DiskCache(self.state.cache_dir)) if use_cache else None
        render_fmt: Format = "markdown" if fmt == "json" else cast(Format, fmt)
        composition = compose(
            candidates,
            budget=budget,
            tokenizer=tokenizer,
            context=context,
            constraints=outcome.constraints,
            fmt=render_fmt,
            cache=cache,
        )
        decision_id: str | None = None
        if record:
            DecisionLog(self.state.decisions_dir).append(composition.record)
            decision_id = composition.decision_id
        result = self._result(
            composition=composition,
            candidates=candidates,
            outcome=outcome,
            vitals=vitals,
            trigger=trigger,
            tokenizer=tokenizer,
            fmt=fmt,
            decision_id=decision_id,
            reveal=reveal,
        )
        if decision_id is not None:
            self._write_sidecar(decision_id, trigger, total=total, fmt=fmt, files=result.files)
        return result

    def _result(
        self,
        *,
        composition: Composition,
        candidates: Sequence[Candidate],
        outcome: Any,
        vitals: VitalsSnapshot,
        trigger: Trigger,
        tokenizer: Tokenizer,
        fmt: str,
        decision_id: str | None,
        reveal: bool,
    ) -> ComposeResult:
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
            if (
                reveal
                and cand
                and v.id not in sensitive
                and not cand.path.startswith(".librarian/")
            ):
                path = cand.path or None
            rejected.append(
                RejectedArtifact(v.id, v.kind, v.lane, v.token_estimate, v.reason, v.detail, path)
            )
        return ComposeResult(
            text=composition.text,
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
        )

    # ---------------------------------------------------------- explain/replay

    def _sidecar_path(self, decision_id: str) -> Path:
        if not decision_id or not all(c.isalnum() for c in decision_id):
            raise NotFound(f"no decision {decision_id!r}", hint="Check the decision id.")
        return self.state.decisions_dir / _PRIVATE_DIR / f"{decision_id}.json"

    def _write_sidecar(
        self, decision_id: str, trigger: Trigger, *, total: int, fmt: str, files: Sequence[str]
    ) -> None:
        """Private replay inputs (task, diff, files) and the files the pack showed.

        Kept apart from the path-free decision record, inside the git-ignored state
        folder; the history lane reads earlier ones as decision snapshots.
        """
        path = self._sidecar_path(decision_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "trigger": trigger.to_dict(),
            "budget": total,
            "format": fmt,
            "files": list(files),
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)

    def decision(self, decision_id: str) -> dict[str, Any]:
        """The decision record (ids, kinds, lanes, counts, digests; no paths or content)."""
        return DecisionLog(self.state.decisions_dir).read(decision_id)

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
        }

    def replay(self, decision_id: str) -> ReplayResult:
        """Regather candidates for a recorded trigger and re-run the decision without cache.

        ``identical``: the same decision, byte for byte. ``inputs_changed``: the
        workspace (files, vitals, redactions...) moved on since; the differences
        say what. ``diverged``: same inputs, different decision — a determinism bug.
        """
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
        self._ensure_index(refresh=True)
        candidates, _outcome, _budget, context, _store, _vitals = self._prepare(trigger, total)
        differences: list[str] = []
        recorded_extra = rec.get("extra", {})
        for key, value in context.extra:
            if recorded_extra.get(key) != value:
                differences.append(f"{key} changed")
        if context.workspace_fingerprint != rec.get("workspace_fingerprint"):
            differences.append("workspace files changed")
        report = replay_record(rec, candidates, get_tokenizer(trigger.model))
        if report.status == "inputs_changed" or differences:
            return ReplayResult(
                decision_id, "inputs_changed", tuple(differences) + tuple(report.differences)
            )
        return ReplayResult(decision_id, report.status, tuple(report.differences))

    # ------------------------------------------------------- history & vitals

    def record_session(
        self, session: str, text: str, *, role: str = "agent", as_of: int | None = None
    ) -> SessionEntry:
        """Record a session history entry (offered by the history lane)."""
        self.state.ensure()
        return append_session_entry(
            self.state.sessions_dir,
            session=session,
            text=text,
            role=role,
            recorded_at=int(time.time()) if as_of is None else as_of,
        )

    def record_learning(
        self,
        trigger: str,
        action: str,
        *,
        tags: Sequence[str] = (),
        as_of: int | None = None,
    ) -> Learning:
        """Record a learning ("when ``trigger``, ``action``") for the history lane."""
        self.state.ensure()
        return append_learning(
            self.state.sessions_dir,
            trigger=trigger,
            action=action,
            tags=tuple(tags),
            recorded_at=int(time.time()) if as_of is None else as_of,
        )

    def add_violation(
        self,
        rule: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        severity: str = "medium",
        as_of: int | None = None,
    ) -> Violation:
        """Record a violation (the policy lane must-includes recent ones)."""
        self.state.ensure()
        return add_violation(
            self.state.violations_path,
            rule=rule,
            message=message,
            file=file,
            line=line,
            severity=severity,
            recorded_at=int(time.time()) if as_of is None else as_of,
        )

    def violations(self) -> tuple[Violation, ...]:
        """All recorded violations, oldest first."""
        return load_violations(self.state.violations_path)

    def vitals(self, *, as_of: int | None = None) -> VitalsSnapshot:
        """Current vitals: pressure (uncommitted lines), pulse (saves/min), oxygen."""
        now = int(time.time()) if as_of is None else as_of
        changes = working_diff(self.root) if self._git() else ()
        return measure(
            changed_lines=changed_line_count(changes),
            events_path=self.state.events_path,
            status_path=self.state.dir / _STATUS_FILE,
            as_of=now,
        )

    def record_vitals(
        self, *, tests: str | None = None, lint: str | None = None, as_of: int | None = None
    ) -> StatusRecord:
        """Record the last test and/or lint status ("pass" or "fail")."""
        self.state.ensure()
        return record_status(
            self.state.dir / _STATUS_FILE,
            tests=tests,
            lint=lint,
            as_of=int(time.time()) if as_of is None else as_of,
        )

    # ------------------------------------------------- query, window, status

    def query(
        self,
        intent: str,
        *,
        depth: QueryDepth = "L1",
        limit: int = 10,
        budget: int | None = None,
        as_of: int | None = None,
        semantic: bool = False,
        llm: bool = False,
        with_code: bool = False,
        refresh: bool = True,
    ) -> QueryResult:
        """Ranked files with citations for ``intent`` (the six-stage query pipeline).

        ``depth`` is ``L0`` (retrieval only) to ``L3`` (three graph hops); ``limit``
        caps the files returned; ``budget`` caps the summed tokens of the cited
        chunks. ``semantic=True`` adds dense vectors when the ``semantic`` extra is
        installed; it is off by default because the ablation in benchmarks/RESULTS.md
        showed no consistent recall gain. ``llm=True`` discovers an LLM provider for
        reranking (otherwise one is used only when ``LIBRARIAN_LLM_PROVIDER`` is
        set). ``with_code``
        adds the text of every cited chunk, with secrets redacted and sensitive
        files left out. The index is built on first use and refreshed when
        ``refresh`` is true. See ``docs/query.md`` for the stages.
        """
        from .query.capabilities import DEFAULT_FEATURES, FEATURES
        from .query.pipeline import QuerySession, resolve_llm
        from .query.types import DEPTHS

        if depth not in DEPTHS:
            raise UsageError(f"unknown depth {depth!r}", hint="Use L0, L1, L2 or L3.")
        if limit < 1:
            raise UsageError("limit must be at least 1", hint="Ask for 10 files, say.")
        if budget is not None and budget < 1:
            raise UsageError("the budget must be a positive number of tokens")
        self._ensure_index(refresh=refresh)
        features = FEATURES if semantic else DEFAULT_FEATURES
        completer, _why = resolve_llm(self.root, discover=llm)
        with QuerySession(
            self.root, features=features, llm=completer, store=self._open_store()
        ) as session:
            result = session.run(
                intent,
                depth=depth,
                limit=limit,
                budget=budget,
                as_of=int(time.time()) if as_of is None else int(as_of),
            )
        snippets = self._snippets(result) if with_code else ()
        return QueryResult(result, snippets)

    def _snippets(self, result: PipelineResult) -> tuple[CodeSnippet, ...]:
        from .workspace.secrets import redact, scan_text

        if result.response is None:
            return ()
        store = self._open_store()
        out: list[CodeSnippet] = []
        seen: set[int] = set()
        for pack in result.response.packs:
            if self._policy.is_sensitive(pack.path):
                continue
            for cite in pack.citations:
                if cite.chunk_id in seen:
                    continue
                seen.add(cite.chunk_id)
                try:
                    text = store.chunk(cite.chunk_id).text
                except (KeyError, LookupError):
                    continue
                findings = scan_text(text)
                out.append(
                    CodeSnippet(
                        chunk_id=cite.chunk_id,
                        path=cite.path,
                        start_line=cite.start_line,
                        end_line=cite.end_line,
                        symbol=cite.symbol,
                        text=redact(text, findings) if findings else text,
                        redacted_spans=len(findings),
                    )
                )
        return tuple(out)

    def window(
        self,
        goal: str,
        *,
        envelopes: Sequence[SaopEnvelope] = (),
        map_text: str | None = None,
        total: int = 8000,
        goal_budget: int = 1000,
        map_budget: int = 4000,
        recent_budget: int = 3000,
        max_recent: int = 10,
        model: str | None = None,
        refresh: bool = False,
    ) -> ComposedWindow:
        """A sliding window: the goal, a repository map and the recent past, under ``total``.

        ``map_text`` defaults to the ranked repository map rendered from the index
        in ``min(map_budget, total)`` tokens (the index is built when missing, and
        refreshed first when ``refresh`` is true). ``envelopes`` are the agent's
        recent SAOP records; the newest that fit are kept, whole. Token counts use
        ``model``'s tokenizer. ``total_tokens_used`` never exceeds ``total``; see
        :class:`~codelibrarian.packs.window.WindowComposer` for the rules.
        """
        from .packs.window import WindowBudget, WindowComposer

        budget = WindowBudget(
            total_budget=total,
            goal_budget=goal_budget,
            map_budget=map_budget,
            recent_past_budget=recent_budget,
        )
        tokenizer = get_tokenizer(model or self.config.compose.model)
        if map_text is None:
            size = min(map_budget, total)
            if size > 0:
                from .index.repomap import render_map

                self._ensure_index(refresh=refresh)
                map_text = render_map(self._open_store(), tokenizer, size)
            else:
                map_text = ""
        return WindowComposer(budget, max_recent, tokenizer).compose(goal, map_text, envelopes)

    def index_status(self) -> IndexStatus:
        """What the index holds and how far the workspace has moved since (read-only).

        Never builds the index: ``indexed`` is false when there is none yet.
        Modified files are those whose size or modification time differ from
        what the index recorded (a touched but unchanged file counts too).
        """
        from .workspace.files import scan_workspace

        state = self.state
        decisions = 0
        if state.decisions_dir.is_dir():
            for log in state.decisions_dir.glob("*.jsonl"):
                with open(log, encoding="utf-8") as fh:
                    decisions += sum(1 for line in fh if line.strip())
        runs = (
            sum(1 for p in state.runs_dir.iterdir() if p.is_dir()) if state.runs_dir.is_dir() else 0
        )
        is_git = is_git_repo(self.root)
        head = head_commit(self.root) if is_git else None
        if not state.index_path.exists():
            return IndexStatus(False, 0, (), 0, 0, 0, 0, 0, 0, 0, 0, head, decisions, runs)
        store = self._open_store()
        records = store.files()
        languages: dict[str, int] = {}
        for rec in records:
            lang = rec.language or "text"
            languages[lang] = languages.get(lang, 0) + 1
        counts = store.counts()
        known = store.file_states()
        scan = scan_workspace(self.root, self.config.workspace)
        current = {f.path: (f.size, f.mtime_ns) for f in scan.files}
        modified = sum(
            1
            for p, (size, mtime) in current.items()
            if p in known and known[p][1:3] != (size, mtime)
        )
        return IndexStatus(
            indexed=True,
            files=len(records),
            languages=tuple(sorted(languages.items())),
            symbols=counts.get("symbols", 0),
            chunks=counts.get("chunks", 0),
            imports=counts.get("imports", 0),
            parse_errors=len(store.parse_errors()),
            generation=store.generation(),
            modified_files=modified,
            new_files=sum(1 for p in current if p not in known),
            deleted_files=sum(1 for p in known if p not in current),
            head=head,
            decisions=decisions,
            runs=runs,
        )

    # ------------------------------------------------------ local context packs

    def pack(
        self,
        agent: str,
        task: str,
        *,
        acceptance: Sequence[str] = (),
        constraints: Sequence[str] = (),
        scope: str | None = None,
        capability: str | None = None,
        run_id: str | None = None,
        task_id: str | None = None,
        refresh: bool = False,
        model: str | None = None,
        files: Iterable[str] = (),
        as_of: int | None = None,
    ) -> PackResult:
        """Build (or reuse, or ``refresh``) ``agent``'s Local Context Pack in a run.

        The pack is written to ``.librarian/runs/<run>/context/<agent>.lcp.json``
        (``resources://runs/<run>/context/<agent>.lcp.json``), remembered in the
        run's ``memory.json`` and journaled. Without ``run_id`` a new run is
        started. ``scope`` (Tiny/Small/Medium/Large) defaults to the change's
        class; ``capability`` to ``reasoning_high``. See docs/packs.md.
        """
        from .packs.service import make_pack

        return make_pack(
            self,
            agent,
            task,
            acceptance=acceptance,
            constraints=constraints,
            scope=scope,
            capability=capability,
            run_id=run_id,
            task_id=task_id,
            refresh=refresh,
            model=model,
            files=files,
            as_of=as_of,
        )

    def handoff(
        self,
        run_id: str,
        from_agent: str,
        to_agent: str,
        *,
        notes: Sequence[str] = (),
        risks: Sequence[str] = (),
        evidence: Sequence[str] = (),
        as_of: int | None = None,
    ) -> HandoffResult:
        """Write the handoff package ``from_agent -> to_agent`` of a run (diff refs,
        evidence, risks, notes, the sender's ``context_pack_uri``) and journal it."""
        from .packs.service import make_handoff

        return make_handoff(
            self,
            run_id,
            from_agent,
            to_agent,
            notes=notes,
            risks=risks,
            evidence=evidence,
            as_of=as_of,
        )

    def runs(self) -> tuple[RunSummary, ...]:
        """Every run of this workspace (id, agents with packs, handoffs), by id."""
        from .packs.service import list_runs

        return list_runs(self)

    def run(self, run_id: str) -> RunDetail:
        """One run: its packs and handoffs (validated) and its journal."""
        from .packs.service import show_run

        return show_run(self, run_id)

    def resource(self, uri: str) -> Path:
        """The file behind a ``resources://runs/<id>/...`` URI (for the MCP server)."""
        from .packs.runs import resolve_resource

        return resolve_resource(self.root, uri)


@dataclass(frozen=True, slots=True)
class CodeSnippet:
    """The text of one cited chunk (secrets redacted; ``redacted_spans`` counts them)."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    text: str
    redacted_spans: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "text": self.text,
            "redacted_spans": self.redacted_spans,
        }


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Outcome of :meth:`Librarian.query`: the pipeline's result and, if asked, the code."""

    pipeline: PipelineResult
    snippets: tuple[CodeSnippet, ...] = ()

    @property
    def status(self) -> str:
        """``completed``, ``partial`` (a stage failed; see ``pipeline.traces``) or ``cancelled``."""
        return self.pipeline.status

    @property
    def paths(self) -> tuple[str, ...]:
        """Ranked repository-relative paths (empty when there was no response)."""
        response = self.pipeline.response
        return () if response is None else response.paths

    @property
    def confidence(self) -> int:
        """The response's confidence, 0..1000 (0 without a response)."""
        response = self.pipeline.response
        return 0 if response is None else response.confidence

    def snippet(self, chunk_id: int) -> CodeSnippet | None:
        """The code of one cited chunk, when ``with_code`` was asked for."""
        for s in self.snippets:
            if s.chunk_id == chunk_id:
                return s
        return None

    def to_dict(self) -> dict[str, Any]:
        return {**self.pipeline.to_dict(), "snippets": [s.to_dict() for s in self.snippets]}


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """Outcome of :meth:`Librarian.index_status` (counts only, no paths)."""

    indexed: bool
    files: int
    languages: tuple[tuple[str, int], ...]
    symbols: int
    chunks: int
    imports: int
    parse_errors: int
    generation: int
    modified_files: int
    new_files: int
    deleted_files: int
    head: str | None
    decisions: int
    runs: int

    @property
    def stale(self) -> bool:
        """True when the workspace has files the index does not reflect."""
        return not self.indexed or bool(self.modified_files + self.new_files + self.deleted_files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "indexed": self.indexed,
            "stale": self.stale,
            "files": self.files,
            "languages": dict(self.languages),
            "symbols": self.symbols,
            "chunks": self.chunks,
            "imports": self.imports,
            "parse_errors": self.parse_errors,
            "generation": self.generation,
            "modified_files": self.modified_files,
            "new_files": self.new_files,
            "deleted_files": self.deleted_files,
            "head": self.head,
            "decisions": self.decisions,
            "runs": self.runs,
        }
