"""The one facade the CLI, the MCP server and users' Python code call.

``Librarian(repo)`` opens a workspace (its ``.librarian/`` state, the index, the
sources, the policy engine and the composition cache) and delegates: compose
orchestration lives in :mod:`codelibrarian.service.compose`, the query pipeline in
:mod:`codelibrarian.service.query`, read-only views in
:mod:`codelibrarian.service.inspect`, Local Context Packs in
:mod:`codelibrarian.packs.service`. Module-level functions cover what needs no
workspace (``doctor``, ``compose_window``).

Typical use::

    lib = Librarian(".")
    result = lib.compose("fix the retry loop in the HTTP client", budget=4000)
    print(result.text)
    lib.replay(result.decision_id).status   # "identical"
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .boundary import guard_methods, guarded
from .config import Config
from .gate import SecretGate
from .packs.window import ComposedWindow, SaopEnvelope, WindowBudget, WindowComposer
from .service.compose import FORMATS, STATUS_FILE, ComposeService, shape_budget
from .service.inspect import (
    IndexStatus,
    InitResult,
    RepoMap,
    TokenCounts,
    count_tokens,
    edge_counts,
    gated_map,
    index_status,
    init_state,
    repo_map,
    scan,
    scan_summary,
)
from .service.query import CodeSnippet, QueryResult, run_query
from .service.results import ComposeResult, PackedArtifact, RejectedArtifact, ReplayResult
from .service.workspace import WorkspaceSession, now_or
from .sources import Source
from .sources.local import changed_line_count
from .sources.sessions import Learning, SessionEntry, append_learning, append_session_entry
from .sources.violations import Violation, add_violation, load_violations
from .tokens import get_tokenizer
from .vitals import StatusRecord, VitalsSnapshot, measure, record_status

if TYPE_CHECKING:
    import threading

    from .execution.report import RunVerification, RunView
    from .execution.service import ExecutionService
    from .execution.store import TraceLoad
    from .execution.traces import RunTrace
    from .index.indexer import UpdateResult
    from .packs.runs import RunSummary
    from .packs.service import HandoffResult, PackResult, RunDetail
    from .planning.advisor import Advice
    from .planning.plan import EnrichedPlan
    from .planning.selector import Selection
    from .providers.registry import ProviderRegistry
    from .query.report import ProgressReporter
    from .query.types import CancellationToken, QueryDepth
    from .service.doctor import DoctorReport
    from .service.evolution import Decision, EvolutionResult
    from .techniques.facts import Facts
    from .techniques.lcl import Program
    from .workspace.files import ScanResult
    from .workspace.presets import PresetStore

__all__ = [
    "FORMATS",
    "CodeSnippet",
    "ComposeResult",
    "ComposedWindow",
    "IndexStatus",
    "InitResult",
    "Librarian",
    "PackedArtifact",
    "QueryResult",
    "RejectedArtifact",
    "ReplayResult",
    "RepoMap",
    "SaopEnvelope",
    "TokenCounts",
    "WindowBudget",
    "compose_window",
    "doctor",
    "ensure_state_dir",
    "load_program",
    "scan_summary",
    "shape_budget",
    "tokenizer_name",
]

Fmt = Literal["markdown", "xml", "json", "plain"]


@guarded
def doctor(repo_path: str | os.PathLike[str]) -> DoctorReport:
    """Check the installation and the repository; each problem comes with its fix.

    A module function, not a method: it must work when the config is invalid.
    """
    from .service.doctor import run_doctor

    return run_doctor(Path(repo_path))


@guarded
def ensure_state_dir(repo_path: str | os.PathLike[str]) -> Path:
    """Create (idempotently) and return the repository's ``.librarian/`` folder.

    Needs no valid config: the provider commands keep their caches there.
    """
    from .workspace.state import State

    return Path(State(Path(repo_path)).ensure().dir)


def tokenizer_name(model: str | None) -> str:
    """The name of the tokenizer that counts for ``model`` (the default model if None)."""
    return get_tokenizer(model).name


@guarded
def load_program(path: str | os.PathLike[str], *, name: str | None = None) -> Program:
    """The LCL program in a ``.toml`` or seed-form ``.json`` file (``name`` picks one of
    several); raises ``LclError`` with every reading error, positioned."""
    from .workspace.presets import load_program_file

    return load_program_file(Path(path), name=name)


@guarded
def compose_window(
    goal: str,
    map_text: str,
    envelopes: Sequence[SaopEnvelope] = (),
    *,
    budget: WindowBudget,
    max_recent: int = 10,
    model: str | None = None,
) -> ComposedWindow:
    """A sliding window (goal, map, recent past) under ``budget`` (no workspace needed).

    Every text passes a secret gate with the default rules first (the goal and the
    records are the caller's text, shown to a model again)."""
    gate = SecretGate()
    goal, map_text = gate.clean_many((goal, map_text), surface="window")
    envelopes = [
        SaopEnvelope(e.id, gate.clean(e.content, surface="window", kind="envelope"), e.timestamp_ms)
        for e in envelopes
    ]
    return WindowComposer(budget, max_recent, get_tokenizer(model)).compose(
        goal, map_text, envelopes
    )


@guard_methods
class Librarian:
    """Index a repository and compose context packs for it (see the module docstring).

    Every public method raises only :mod:`codelibrarian.errors` types (see
    :mod:`codelibrarian.boundary`).
    """

    def __init__(self, repo_path: str | os.PathLike[str], config: Config | None = None) -> None:
        self._ws = WorkspaceSession(repo_path, config)
        self._composer = ComposeService(self._ws)
        self._execution: ExecutionService | None = None
        self.root = self._ws.root
        self.config = self._ws.config
        self.state = self._ws.state

    @property
    def gate(self) -> SecretGate:
        """The secret gate every text this workspace sends out passes (docs/secrets.md)."""
        return self._ws.gate

    def config_changed(self) -> bool:
        """Whether ``librarian.toml`` (or ``[tool.librarian]``) changed since this loaded it."""
        return self._ws.config_changed()

    # ------------------------------------------------------------------ index

    def init(self) -> InitResult:
        """Create ``.librarian/`` (own ``.gitignore``, schema version, secret); idempotent."""
        return init_state(self._ws)

    def index(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        on_wait: Callable[[Any, float], None] | None = None,
        on_stage: Callable[[str], None] | None = None,
        check: bool = False,
    ) -> Any:
        """Build or refresh the index incrementally; returns the indexer's stats.

        ``progress(done, total)`` follows the parse; ``on_wait(holder, seconds)``
        hears who holds the index lock while this waits for it (at most
        ``[index].lock_timeout`` seconds, then ``IndexBusy``); ``on_stage(name)``
        hears each stage start; ``check`` verifies the database first and rebuilds
        it if damaged.
        """
        return self._ws.index(progress=progress, on_wait=on_wait, on_stage=on_stage, check=check)

    def edge_counts(self) -> dict[str, int]:
        """Edges of each graph kind in the index (read-only; the index must exist)."""
        return edge_counts(self.root)

    def watch(
        self,
        on_update: Callable[[UpdateResult], None] | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        """Block, re-indexing files as they are saved, until Ctrl-C or ``stop`` is set.

        ``stop`` is checked every 50 ms while waiting for changes (not during a
        re-index, which a signal handler interrupts by raising).
        """
        from .index.watch import watch_workspace

        watch_workspace(self.root, self.config, on_update=on_update, stop_event=stop)

    def close(self) -> None:
        """Release the index connection."""
        self._ws.close()

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
        return self._composer.compose(
            task,
            budget=budget,
            model=model,
            base=base,
            diff_text=diff_text,
            files=files,
            fmt=fmt,
            as_of=as_of,
            agent_role=agent_role,
            use_cache=use_cache,
            event=event,
            refresh=refresh,
            record=record,
            reveal=reveal,
            progress=progress,
        )

    def sources(self) -> tuple[Source, ...]:
        """The registered sources (built-ins and plug-ins), loaded once."""
        return self._ws.sources()

    def _gather(self, trigger: Any, total: int) -> tuple[Any, ...]:
        """(candidates, vitals, changes, store) for a trigger: a seam for tests."""
        g = self._composer.gather(trigger, total)
        return (list(g.candidates), g.vitals, g.changes, g.store)

    # ---------------------------------------------------------- explain/replay

    def decision(self, decision_id: str) -> dict[str, Any]:
        """The decision record (ids, kinds, lanes, counts, digests; no paths or content)."""
        return self._composer.decision(decision_id)

    def explain(self, decision_id: str) -> dict[str, Any]:
        """A recorded decision explained: summary, lanes, every verdict, redactions, vitals."""
        return self._composer.explain(decision_id)

    def replay(self, decision_id: str) -> ReplayResult:
        """Regather candidates for a recorded trigger and re-run the decision without cache.

        ``identical``: the same decision, byte for byte. ``inputs_changed``: the
        workspace (files, vitals, redactions...) moved on since; the differences
        say what. ``diverged``: same inputs, different decision — a determinism bug.
        """
        return self._composer.replay(decision_id)

    # ------------------------------------------------------- history & vitals

    def record_session(
        self, session: str, text: str, *, role: str = "agent", as_of: int | None = None
    ) -> SessionEntry:
        """Record a session history entry (offered by the history lane)."""
        self.state.ensure()
        return append_session_entry(
            self.state.sessions_dir,
            session=session,
            text=self.gate.clean(text, surface="history", kind="session"),
            role=role,
            recorded_at=now_or(as_of),
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
        trigger, action = self.gate.clean_many(
            (trigger, action), surface="history", kind="learning"
        )
        return append_learning(
            self.state.sessions_dir,
            trigger=trigger,
            action=action,
            tags=tuple(tags),
            recorded_at=now_or(as_of),
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
            message=self.gate.clean(message, surface="policy", kind="violation"),
            file=file,
            line=line,
            severity=severity,
            recorded_at=now_or(as_of),
        )

    def violations(self) -> tuple[Violation, ...]:
        """All recorded violations, oldest first."""
        return load_violations(self.state.violations_path)

    def vitals(self, *, as_of: int | None = None) -> VitalsSnapshot:
        """Current vitals: pressure (uncommitted lines), pulse (saves/min), oxygen."""
        return measure(
            changed_lines=changed_line_count(self._ws.working_changes()),
            events_path=self.state.events_path,
            status_path=self.state.dir / STATUS_FILE,
            as_of=now_or(as_of),
        )

    def record_vitals(
        self, *, tests: str | None = None, lint: str | None = None, as_of: int | None = None
    ) -> StatusRecord:
        """Record the last test and/or lint status ("pass" or "fail")."""
        self.state.ensure()
        return record_status(
            self.state.dir / STATUS_FILE, tests=tests, lint=lint, as_of=now_or(as_of)
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
        summarize: bool = False,
        with_code: bool = False,
        refresh: bool = True,
        build: bool = True,
        reporter: ProgressReporter | None = None,
        cancel: CancellationToken | None = None,
    ) -> QueryResult:
        """Ranked files with citations for ``intent`` (the six-stage query pipeline).

        ``depth`` is ``L0`` (retrieval only) to ``L3`` (three graph hops); ``limit``
        caps the files returned; ``budget`` caps the summed tokens of the cited
        chunks. ``semantic=True`` adds dense vectors when the embedding model is
        installed; it is off by default because the ablation in benchmarks/RESULTS.md
        showed no consistent recall gain. ``llm=True`` discovers an LLM provider for
        reranking (otherwise one is used only when ``LIBRARIAN_LLM_PROVIDER`` is
        set); ``summarize`` asks it for a short summary. ``with_code``
        adds the text of every cited chunk, with secrets redacted and sensitive
        files left out. The index is built on first use and refreshed when
        ``refresh`` is true; ``build=False`` uses the index as it is, read-only
        (``NotFound`` when there is none). ``reporter`` follows the stages live and
        ``cancel`` stops the run cooperatively. See ``docs/query.md`` for the stages.
        """
        return run_query(
            self._ws,
            intent,
            depth=depth,
            limit=limit,
            budget=budget,
            as_of=as_of,
            semantic=semantic,
            llm=llm,
            summarize=summarize,
            with_code=with_code,
            refresh=refresh,
            build=build,
            reporter=reporter,
            cancel=cancel,
        )

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
        budget = WindowBudget(
            total_budget=total,
            goal_budget=goal_budget,
            map_budget=map_budget,
            recent_past_budget=recent_budget,
        )
        model = model or self.config.compose.model
        if map_text is None:
            size = min(map_budget, total)
            if size > 0:
                self._ws.ensure_index(refresh=refresh)
                map_text = gated_map(self._ws, self._ws.open_store(), get_tokenizer(model), size)
            else:
                map_text = ""
        return compose_window(
            goal, map_text, envelopes, budget=budget, max_recent=max_recent, model=model
        )

    def repo_map(self, budget: int, *, model: str | None = None) -> RepoMap:
        """The ranked repository map of the existing index under ``budget`` tokens.

        Read-only: ``NotFound`` (run ``librarian index``) when there is no index.
        """
        return repo_map(self._ws, budget, model or self.config.compose.model)

    def index_status(self) -> IndexStatus:
        """What the index holds and how far the workspace has moved since (read-only).

        Never builds the index: ``indexed`` is false when there is none yet.
        Modified files are those whose size or modification time differ from
        what the index recorded (a touched but unchanged file counts too).
        """
        return index_status(self._ws)

    def scan(self) -> ScanResult:
        """The files the librarian reads (sorted), with skipped files and their reasons."""
        return scan(self._ws)

    def token_counts(
        self,
        keep: Callable[[str], bool] = lambda _path: True,
        *,
        model: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> TokenCounts:
        """Tokens of every listed file ``keep`` accepts, largest first (``model``'s
        tokenizer, default the configured model)."""
        return count_tokens(self._ws, keep, model=model, progress=progress)

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
            self._composer,
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
            self._ws,
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

        return list_runs(self.state)

    def run(self, run_id: str) -> RunDetail:
        """One run: its packs and handoffs (validated) and its journal."""
        from .packs.service import show_run

        return show_run(self.state, run_id)

    def resource(self, uri: str) -> Path:
        """The file behind a ``resources://runs/<id>/...`` URI (for the MCP server)."""
        from .packs.runs import resolve_resource

        return resolve_resource(self.root, uri)

    # ------------------------------------------------------------- techniques

    def facts(
        self,
        task: str = "",
        *,
        base: str | None = None,
        diff_text: str | None = None,
        refresh: bool = True,
    ) -> Facts:
        """Codebase, change and intent facts that LCL conditions are decided on.

        Computed from the index (built or refreshed first) and the current change
        (``base``/``diff_text`` as for :meth:`compose`); see docs/lcl.md.
        """
        from .service.techniques import workspace_facts

        return workspace_facts(self._ws, task, base=base, diff_text=diff_text, refresh=refresh)

    def presets(self) -> PresetStore:
        """The workspace's presets: built in, ``[presets.*]`` in the config, and
        ``.librarian/presets/*.toml`` (see docs/lcl.md)."""
        from .service.techniques import preset_store

        return preset_store(self._ws)

    # ---------------------------------------------------------- workflow runs

    def _runs(self) -> ExecutionService:
        if self._execution is None:
            from .execution.service import ExecutionService

            self._execution = ExecutionService(self._ws, self._composer)
        return self._execution

    def run_start(
        self,
        source: str,
        task: str,
        *,
        provider: str | None = None,
        approve: bool = False,
        pattern_id: str | None = None,
        intent_action: str | None = None,
        intent_domain: str | None = None,
    ) -> RunView:
        """Start a workflow run of ``source`` (a program file, a composition id or a
        preset name) for ``task``, and work it until it needs the calling agent, a
        human or (with a ``provider``) until it ends. Agent steps are handed to the
        caller (``run_next``) unless a ``provider`` works them. See docs/execution.md."""
        return self._runs().start(
            source,
            task,
            provider=provider,
            agent=provider is None,
            approve=approve,
            pattern_id=pattern_id,
            intent_action=intent_action,
            intent_domain=intent_domain,
        )

    def run_next(self, run_id: str) -> tuple[RunView, list[dict[str, Any]]]:
        """The run's status and the handouts of the steps waiting for the agent
        (instructions, input, output schema and the step's own context pack)."""
        return self._runs().next(run_id)

    def run_submit(self, run_id: str, step_id: str, output: Any) -> RunView:
        """Record the agent's output (a JSON object) for a handed-out step: its
        contract is checked, the run goes on, and the new status is returned."""
        return self._runs().submit(run_id, step_id, output)

    def run_status(self, run_id: str) -> RunView:
        """Where a workflow run stands (read from its ledger; nothing is written)."""
        return self._runs().status(run_id)

    def run_show(self, run_id: str) -> dict[str, Any]:
        """The run's status and trace tree: every node's outcome, timings and decisions."""
        return self._runs().show(run_id)

    def run_resume(self, run_id: str) -> RunView:
        """Continue a run after a crash or a restart; finished steps are never repeated."""
        return self._runs().resume(run_id)

    def run_approve(self, run_id: str, note: str | None = None) -> RunView:
        """Approve what a run waits on (an escalated vote, a checkpoint) and go on."""
        return self._runs().decide(run_id, approved=True, note=note)

    def run_reject(self, run_id: str, note: str | None = None) -> RunView:
        """Reject what a run waits on (the vote fails; a checkpoint ends the run)."""
        return self._runs().decide(run_id, approved=False, note=note)

    def run_verify(self, run_id: str) -> RunVerification:
        """Check a run's hash chain and its stored outputs against their digests."""
        return self._runs().verify(run_id)

    def run_ledger(self, run_id: str) -> str:
        """The run's ledger (JSON Lines: ids, kinds, counts and told times)."""
        return self._runs().ledger_text(run_id)

    def traces(self) -> TraceLoad:
        """Every workflow run as a trace (for planning), runs with broken chains skipped."""
        return self._runs().traces()

    # --------------------------------------------------------------- planning

    def select(self, intent: str, *, llm: bool = False, embeddings: bool = True) -> Selection:
        """Patterns and compositions ranked for ``intent`` (intent decomposition,
        multi-aspect scores, an explanation per aspect); see docs/planning.md.

        ``llm`` asks a provider to decompose the intent (when one is available);
        ``embeddings=False`` uses the keyword fallback without loading the model.
        """
        from .service.planning import select_intent

        return select_intent(self._ws, intent, llm=llm, embeddings=embeddings)

    def plan(
        self,
        intent: str,
        *,
        base: str | None = None,
        diff_text: str | None = None,
        llm: bool = False,
        embeddings: bool = True,
        model: str | None = None,
        as_of: int | None = None,
        registry: ProviderRegistry | None = None,
    ) -> EnrichedPlan:
        """The enriched plan for ``intent``: the chosen composition decided on this
        codebase's facts, each step's context composed and measured, estimates,
        providers, rationale and alternatives (docs/planning.md). ``registry``
        replaces provider discovery (tests pass one holding a ``FakeProvider``)."""
        from .service.planning import plan_intent

        return plan_intent(
            self._ws,
            self._composer,
            intent,
            base=base,
            diff_text=diff_text,
            llm=llm,
            embeddings=embeddings,
            model=model,
            as_of=as_of,
            registry=registry,
        )

    def advise(self, *, refresh: bool = True) -> Advice:
        """The seed's ten codebase features found in the index (evidence files and a
        confidence; absent when the evidence is weak) and 3–5 suggested compositions."""
        from .service.evolution import advise_workspace

        return advise_workspace(self._ws, refresh=refresh)

    def evolve(
        self, *, as_of: int | None = None, traces: Sequence[RunTrace] | None = None
    ) -> EvolutionResult:
        """Proposals, mutations and deprecation candidates learned from finished runs
        (``traces`` instead of the workspace's runs). Nothing changes until an item is
        approved with :meth:`evolve_decide`."""
        from .service.evolution import evolve_workspace

        return evolve_workspace(self._ws, as_of=as_of, traces=traces)

    def evolve_decide(
        self,
        item_id: str,
        *,
        approve: bool,
        name: str | None = None,
        force: bool = False,
    ) -> Decision:
        """Approve (a proposal or mutation becomes a preset; a deprecation is recorded)
        or reject one item of the last evolution report."""
        from .service.evolution import decide_item

        return decide_item(
            self._ws, item_id, "approved" if approve else "rejected", name=name, force=force
        )
