"""The one facade the CLI, the MCP server and users' Python code call.

``Librarian(repo)`` opens a workspace (its ``.librarian/`` state, the index, the
sources, the policy engine and the composition cache) and delegates: compose
orchestration lives in :mod:`codelibrarian.service.compose`, the query pipeline in
:mod:`codelibrarian.service.query`, read-only views in
:mod:`codelibrarian.service.inspect`, Local Context Packs in
:mod:`codelibrarian.packs.service`. The methods of the other concerns come from the
parts in :mod:`codelibrarian.facade` (records, runs, planning). Module-level
functions cover what needs no workspace (``doctor``, ``compose_window``).

Typical use::

    lib = Librarian(".")
    result = lib.compose("fix the retry loop in the HTTP client", budget=4000)
    print(result.text)
    lib.replay(result.decision_id).status   # "identical"
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .boundary import guard_methods, guarded
from .config import Config, load_config
from .facade.planning import PlanningPart
from .facade.records import RecordsPart
from .facade.runs import RunsPart
from .lazy import lazy_getattr
from .service.workspace import WorkspaceSession

if TYPE_CHECKING:
    import threading

    from .composer import Candidate
    from .execution.service import ExecutionService
    from .gate import SecretGate
    from .index.indexer import IndexStats, UpdateResult
    from .index.storage import Storage
    from .packs.window import ComposedWindow, SaopEnvelope, WindowBudget
    from .query.report import ProgressReporter
    from .query.types import CancellationToken, QueryDepth
    from .requests import FORMATS, ComposeRequest, QueryRequest
    from .service.compose import ComposeService, shape_budget
    from .service.doctor import DoctorReport
    from .service.inspect import IndexStatus, InitResult, RepoMap, TokenCounts, scan_summary
    from .service.later import after_reply, replying, run_queued
    from .service.query import CodeSnippet, QueryResult
    from .service.results import ComposeResult, PackedArtifact, RejectedArtifact, ReplayResult
    from .sources import Source
    from .techniques.lcl import Program
    from .trigger import Trigger
    from .vitals import VitalsSnapshot
    from .workspace.files import ScanResult
    from .workspace.git import FileDiff

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
    "after_reply",
    "compose_window",
    "doctor",
    "ensure_state_dir",
    "load_program",
    "replying",
    "resident_settings",
    "resident_warms_files",
    "run_queued",
    "scan_summary",
    "shape_budget",
    "tokenizer_name",
]

Fmt = Literal["markdown", "xml", "json", "plain"]

#: names this module offers that live behind it: imported on first use, so that
#: importing the facade (``librarian index`` does) loads no composer or secret rules
_BEHIND = {
    "FORMATS": "requests",
    "shape_budget": "service.compose",
    "CodeSnippet": "service.query",
    "QueryResult": "service.query",
    "ComposeResult": "service.results",
    "PackedArtifact": "service.results",
    "RejectedArtifact": "service.results",
    "ReplayResult": "service.results",
    "ComposedWindow": "packs.window",
    "SaopEnvelope": "packs.window",
    "WindowBudget": "packs.window",
    "IndexStatus": "service.inspect",
    "InitResult": "service.inspect",
    "RepoMap": "service.inspect",
    "TokenCounts": "service.inspect",
    "scan_summary": "service.inspect",
    # a resident server's work after its reply (records): see service/later.py
    "after_reply": "service.later",
    "replying": "service.later",
    "run_queued": "service.later",
}


__getattr__ = lazy_getattr(__package__ or "codelibrarian", _BEHIND, module=__name__)


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


@guarded
def resident_settings(repo_path: str | os.PathLike[str]) -> tuple[str, int]:
    """The repository's ``[resident]`` config: ``(mode, idle_timeout)`` (docs/cli.md)."""
    settings = load_config(Path(repo_path)).resident
    return settings.mode, settings.idle_timeout


def resident_warms_files(repo_path: str | os.PathLike[str]) -> bool:
    """Whether the repository's resident server warms files in idle time
    (``[resident] warm_files``; docs/cli.md)."""
    return load_config(Path(repo_path)).resident.warm_files


def tokenizer_name(model: str | None) -> str:
    """The name of the tokenizer that counts for ``model`` (the default model if None)."""
    from .tokens import get_tokenizer

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
    from .gate import SecretGate
    from .service.window import gated_window

    return gated_window(
        SecretGate(), goal, map_text, envelopes, budget=budget, max_recent=max_recent, model=model
    )


@guard_methods
class Librarian(RecordsPart, RunsPart, PlanningPart):
    """Index a repository and compose context packs for it (see the module docstring).

    Every public method raises only :mod:`codelibrarian.errors` types (see
    :mod:`codelibrarian.boundary`).
    """

    def __init__(self, repo_path: str | os.PathLike[str], config: Config | None = None) -> None:
        self._ws = WorkspaceSession(repo_path, config)
        self._execution: ExecutionService | None = None
        self.root = self._ws.root
        self.config = self._ws.config
        self.state = self._ws.state

    @cached_property
    def _composer(self) -> ComposeService:
        """Compose orchestration, loaded on first use (an index run needs none of it)."""
        from .service.compose import ComposeService

        return ComposeService(self._ws)

    @property
    def gate(self) -> SecretGate:
        """The secret gate every text this workspace sends out passes (docs/secrets.md)."""
        return self._ws.gate

    def for_one_call(self) -> Librarian:
        """This facade serves one call (a CLI command): its first call does not prepare
        the freshness check of a next one (``service/workspace.py``); returns itself."""
        self._ws.one_call()
        return self

    def config_changed(self) -> bool:
        """Whether ``librarian.toml`` (or ``[tool.librarian]``) changed since this loaded it."""
        return self._ws.config_changed()

    # ------------------------------------------------------------------ index

    def init(self) -> InitResult:
        """Create ``.librarian/`` (own ``.gitignore``, schema version, secret); idempotent."""
        from .service.inspect import init_state

        return init_state(self._ws)

    def index(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        on_wait: Callable[[Any, float], None] | None = None,
        on_stage: Callable[[str], None] | None = None,
        check: bool = False,
    ) -> IndexStats:
        """Build or refresh the index incrementally; returns the indexer's stats.

        ``progress(done, total)`` follows the parse; ``on_wait(holder, seconds)``
        hears who holds the index lock while this waits for it (at most
        ``[index].lock_timeout`` seconds, then ``IndexBusy``); ``on_stage(name)``
        hears each stage start; ``check`` verifies the database first and rebuilds
        it if damaged.
        """
        return self._ws.index(progress=progress, on_wait=on_wait, on_stage=on_stage, check=check)

    def edge_counts(self) -> dict[str, int | None]:
        """Edges of each graph kind in the index (read-only; the index must exist);
        ``ref`` is None while the graphs wait for their first reader (``docs/index.md``)."""
        from .service.inspect import edge_counts

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

    def warm(self) -> Iterator[tuple[int, int]]:
        """Build what a first-time task needs of each file (span layouts, secret scans),
        one file per step, yielding ``(done, total)``: a resident server runs it in idle
        time. Never changes an answer (``service/warm.py``)."""
        from .service.warm import warm_steps

        return warm_steps(self._ws)

    def close(self) -> None:
        """Release the index connection."""
        self._ws.close()

    def release(self) -> None:
        """Release the index connection between two calls of a long-lived process (a
        resident server): the next call reopens it, as after :meth:`close`, but the
        workspace's freshness watch stays armed, so that call need not run
        ``git status`` when nothing changed. :meth:`close` ends the watch too."""
        self._ws.close(keep_watch=True)

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
        signals_off: Iterable[str] = frozenset(),
        progress: Callable[[int, int], None] | None = None,
    ) -> ComposeResult:
        """Compose a context pack for ``task`` under ``budget`` tokens.

        ``base`` (a revision) or ``diff_text`` (a unified diff) choose the current
        change; by default it is the staged + unstaged diff against HEAD. ``as_of``
        (epoch seconds) defaults to now. The index is built on first use and
        refreshed (changed files only) when ``refresh`` is true. ``record=False``
        (a dry run) writes no decision and bypasses the cache. ``reveal`` adds
        paths to rejected artifacts (never for sensitive files). ``signals_off``
        names ranking signals to switch off, for ablation studies (the names are
        listed in docs/compose.md). Bad values raise ``UsageError`` (the same
        message the CLI and the MCP tool give; see
        :class:`~codelibrarian.requests.ComposeRequest`).
        """
        from .requests import ComposeRequest

        request = ComposeRequest(
            task,
            budget=budget,
            model=model,
            base=base,
            diff_text=diff_text,
            files=files,  # type: ignore[arg-type]  # made a tuple when checked
            fmt=fmt,
            as_of=as_of,
            agent_role=agent_role,
            use_cache=use_cache,
            event=event,
            refresh=refresh,
            record=record,
            reveal=reveal,
            signals_off=signals_off,  # type: ignore[arg-type]  # made a frozenset when checked
        )
        return self.run_compose(request, progress=progress)

    def run_compose(
        self, request: ComposeRequest, *, progress: Callable[[int, int], None] | None = None
    ) -> ComposeResult:
        """Compose the pack a request built by a shell asks for (:meth:`compose` builds
        one from its keywords); ``progress(done, total)`` follows a first index."""
        return self._composer.compose(request, progress=progress)

    def sources(self) -> tuple[Source, ...]:
        """The registered sources (built-ins and plug-ins), loaded once."""
        return self._ws.sources()

    def _gather(
        self, trigger: Trigger, total: int
    ) -> tuple[list[Candidate], VitalsSnapshot, tuple[FileDiff, ...], Storage]:
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
        from .requests import QueryRequest

        request = QueryRequest(
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
        )
        return self.run_query(request, reporter=reporter, cancel=cancel)

    def run_query(
        self,
        request: QueryRequest,
        *,
        reporter: ProgressReporter | None = None,
        cancel: CancellationToken | None = None,
    ) -> QueryResult:
        """Run the query a request built by a shell asks for (:meth:`query` builds one
        from its keywords); ``reporter`` follows the stages, ``cancel`` stops the run."""
        from .service.query import run_query

        return run_query(self._ws, request, reporter=reporter, cancel=cancel)

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
        from .packs.window import WindowBudget
        from .service.window import workspace_window

        budget = WindowBudget(
            total_budget=total,
            goal_budget=goal_budget,
            map_budget=map_budget,
            recent_past_budget=recent_budget,
        )
        return workspace_window(
            self._ws,
            goal,
            envelopes=envelopes,
            map_text=map_text,
            budget=budget,
            max_recent=max_recent,
            model=model,
            refresh=refresh,
        )

    def repo_map(self, budget: int, *, model: str | None = None) -> RepoMap:
        """The ranked repository map of the existing index under ``budget`` tokens.

        Read-only: ``NotFound`` (run ``librarian index``) when there is no index.
        """
        from .service.inspect import repo_map

        return repo_map(self._ws, budget, model or self.config.compose.model)

    def index_status(self) -> IndexStatus:
        """What the index holds and how far the workspace has moved since (read-only).

        Never builds the index: ``indexed`` is false when there is none yet.
        Modified files are those whose size or modification time differ from
        what the index recorded (a touched but unchanged file counts too).
        """
        from .service.inspect import index_status

        return index_status(self._ws)

    def scan(self) -> ScanResult:
        """The files the librarian reads (sorted), with skipped files and their reasons."""
        from .service.inspect import scan

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
        from .service.inspect import count_tokens

        return count_tokens(self._ws, keep, model=model, progress=progress)
