"""Workflow runs for the facade: start, next, submit, status, resume, approve, verify.

:class:`ExecutionService` is what ``Librarian.run_*`` delegate to. Every operation
that changes a run loads it (replaying its ledger through a fresh core), holds
the run's drive lock while it works (so two processes never drive one run), lets
a :class:`~.runner.Runner` act until the run is blocked, and writes the run's
public summary. Reading operations (``status``, ``show``, ``verify``) replay
without writing anything.

A composition to start is a program file (``.toml``/``.json``), a packaged
composition id, or a preset name. It is compiled with its conditionals left for
the run (the engine decides them on the facts computed now, and the ledger
records each decision), checked against its stratum's execution policy —
``productive`` and ``unrestricted`` compositions need ``approve=True`` — and the
policy's duration and token limits become the run's own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, RunStateError, UsageError
from ..packs.runs import new_run_id, stamp
from .breakers import BreakerStore
from .builtins import BuiltinFn, load_executors
from .core import Engine
from .dispatch import Dispatcher, Raw, ShellEnv
from .ledger import read_entries, verify
from .outgoing import gate_value
from .plan import RunPlan, compiled_from_table, composition_table, plan_for
from .report import RunVerification, RunView, trace_tree
from .rules import digest_value
from .runner import Runner
from .session import RunSession
from .store import RunMeta, TraceLoad, WorkflowStore, load_traces

if TYPE_CHECKING:
    from ..service.compose import ComposeService
    from ..service.workspace import WorkspaceSession
    from ..techniques.lcl import CompiledComposition
    from ..techniques.registry import Library
    from .models import ModelAccess

__all__ = ["ExecutionService", "RunHandle"]

_LOCK_WAIT_S = 30.0


def _clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class RunHandle:
    """A loaded run: its session, the dispatcher and a runner (one operation's worth)."""

    session: RunSession
    dispatcher: Dispatcher
    runner: Runner
    plan: RunPlan


@dataclass
class ExecutionService:
    """Workflow runs of one workspace (see the module docstring)."""

    ws: WorkspaceSession
    composer: ComposeService
    library: Library | None = None
    executors: Mapping[str, BuiltinFn] | None = None
    clock_ms: Callable[[], int] = _clock_ms
    sleep: Callable[[float], None] = time.sleep
    model_access: Callable[[str | None], ModelAccess] | None = None
    record_history: bool = True
    _models: dict[str | None, ModelAccess] = field(default_factory=dict)

    # ---------------------------------------------------------------- parts

    def lib(self) -> Library:
        if self.library is None:
            from ..techniques.registry import default_library

            self.library = default_library()
        return self.library

    def store(self) -> WorkflowStore:
        return WorkflowStore(self.ws.state)

    def _access(self, provider: str | None) -> ModelAccess:
        if provider not in self._models:
            if self.model_access is not None:
                self._models[provider] = self.model_access(provider)
            else:
                from .models import ModelAccess

                self._models[provider] = ModelAccess.create(
                    state_dir=self.ws.state.dir,
                    env=dict(os.environ),
                    profiles=self.ws.config.execution.models,
                    provider=provider,
                )
        return self._models[provider]

    def _env(self, meta: RunMeta) -> ShellEnv:
        return ShellEnv(
            ws=self.ws,
            composer=self.composer,
            library=self.lib(),
            executors=self.executors if self.executors is not None else load_executors(),
            store=self.store(),
            clock_ms=self.clock_ms,
            models=lambda: self._access(meta.provider),
            fresh_facts=lambda: self._facts(meta.task),
        )

    def _facts(self, task: str) -> dict[str, Any]:
        from ..service.techniques import workspace_facts

        return workspace_facts(self.ws, task).env()

    @contextlib.contextmanager
    def _drive_lock(self, run_id: str) -> Iterator[None]:
        folder = self.store().runs.run_dir(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / "drive.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + _LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise UsageError(
                            f"run {run_id} is being worked by another process",
                            hint="Wait for it to finish (`librarian runs status` shows progress).",
                        ) from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)

    def _engine(self, meta: RunMeta, plan: RunPlan) -> Engine:
        return Engine(
            plan,
            run_id=meta.run_id,
            task=meta.task,
            facts=meta.facts,
            max_duration_ms=plan.policy.max_duration_ms,
            max_tokens=plan.policy.max_tokens,
        )

    def _handle(self, session: RunSession, plan: RunPlan) -> RunHandle:
        env = self._env(session.meta)
        dispatcher = Dispatcher(env, session.meta, session.engine)
        runner = Runner(
            session,
            dispatcher,
            env,
            BreakerStore(self.ws.state.dir / "breakers"),
            sleep=self.sleep,
            record_history=self.record_history,
        )
        return RunHandle(session, dispatcher, runner, plan)

    def _load(self, run_id: str) -> tuple[RunHandle, list[Any]]:
        store = self.store()
        store.require(run_id)
        meta = store.read_meta(run_id)
        plan = plan_for(compiled_from_table(meta.composition, self.lib()), self.lib())
        session, recovered = RunSession.load(
            store, meta, plan, self._engine(meta, plan), now=self.clock_ms()
        )
        return self._handle(session, plan), recovered

    # ---------------------------------------------------------------- start

    def compile_source(self, source: str) -> tuple[CompiledComposition, str]:
        """A program file, a composition id or a preset name, compiled (conditionals kept)."""
        from ..techniques.lcl.compile import compile_composition, compile_program

        lib = self.lib()
        path = Path(source)
        if not path.is_absolute():
            path = Path.cwd() / path
        if source.endswith((".toml", ".json")) or path.is_file():
            from ..workspace.presets import load_program_file

            if not path.is_file():
                raise UsageError(f"no program file {source}", hint="Check the path.")
            return compile_program(load_program_file(path), library=lib), "file"
        if source in lib.compositions:
            return compile_composition(lib.compositions[source], library=lib), "composition"
        from ..service.techniques import preset_store

        try:
            entry = preset_store(self.ws).get(source)
        except NotFound:
            from ..techniques.diagnostics import closest

            near = closest(
                source, [*lib.compositions, *(e.name for e in preset_store(self.ws).entries())]
            )
            raise NotFound(
                f"no composition, preset or program file {source!r}",
                hint=(f"Did you mean {', '.join(near)}? " if near else "")
                + "`librarian techniques list --kind compositions` and `librarian presets list` "
                "show what exists.",
            ) from None
        return compile_program(entry.program, library=lib), "preset"

    def start(
        self,
        source: str | CompiledComposition,
        task: str,
        *,
        provider: str | None = None,
        agent: bool = True,
        approve: bool = False,
        pattern_id: str | None = None,
        intent_action: str | None = None,
        intent_domain: str | None = None,
        lcp: bool = True,
    ) -> RunView:
        """Start a workflow run and work it until it is blocked (see the module docstring)."""
        task = " ".join(task.split())
        if not task:
            raise UsageError(
                "the task is empty", hint='Say what the run is for: runs start X "fix ..."'
            )
        if isinstance(source, str):
            compiled, kind = self.compile_source(source)
        else:
            compiled, kind = source, "compiled"
        lib = self.lib()
        plan = plan_for(compiled, lib)
        policy = compiled.policy
        if policy.human_approval_required and not approve:
            raise UsageError(
                f"{compiled.composition.id} is in the {compiled.stratum} stratum: it may run "
                "without end, so it needs a human's approval to start",
                hint="Pass --approve (approve=True) to start it; "
                + "; ".join(f"{n}: {why}" for n, _s, why in compiled.stratum_reasons),
            )
        mode = "agent" if agent and provider is None else "provider"
        if mode == "provider" and provider is None:
            provider = self.ws.config.execution.provider
        now = self.clock_ms()
        self.ws.state.ensure()
        store = self.store()
        run_id = new_run_id(now // 1000, f"{compiled.composition.id}\n{task}\n{now}")
        while store.runs.exists(run_id):
            run_id = new_run_id(now // 1000, f"{run_id}\n{task}")
        facts = self._facts(task)
        table = composition_table(compiled)
        patterns = tuple(compiled.composition.metadata.patterns)
        meta = RunMeta(
            run_id=run_id,
            task=task,
            composition=table,
            facts=facts,
            created_at=now,
            mode=mode,
            provider=provider,
            approved=approve,
            source=kind,
            pattern_id=pattern_id or (patterns[0] if patterns else None),
            intent_action=intent_action,
            intent_domain=intent_domain,
            lcp=lcp,
        )
        started = {
            "composition": compiled.composition.id,
            "source": kind,
            "pattern": meta.pattern_id,
            "intent_action": intent_action,
            "intent_domain": intent_domain,
            "mode": mode,
            "provider": provider,
            "stratum": compiled.stratum,
            "approved": approve,
            "steps": len(plan.steps),
            "plan": digest_value(table),
            "task": digest_value(task),
            "facts": digest_value(facts),
        }
        with self._drive_lock(run_id):
            session, turn = RunSession.create(
                store, meta, plan, self._engine(meta, plan), now=now, started=started
            )
            handle = self._handle(session, plan)
            store.runs.journal_append(
                run_id,
                f"{stamp(now // 1000)} · workflow **{compiled.composition.id}** started "
                f"({compiled.stratum}, {mode}"
                + (f" via {provider}" if provider else "")
                + f", {len(plan.steps)} steps)",
                goal=task,
            )
            handle.runner.drive(turn.actions, wait_timers=mode == "provider")
            return self._finish(handle)

    # ------------------------------------------------------------ operations

    def _finish(self, h: RunHandle, *, already: bool = False) -> RunView:
        view = self._view(h.session, h.runner.handed, already=already)
        self.store().write_summary(
            h.session.run_id,
            {
                "schema": "codelibrarian.workflow-summary/1",
                "run_id": view.run_id,
                "composition": view.composition,
                "status": view.status,
                "reason": view.reason,
                "mode": view.mode,
                "stratum": view.stratum,
                "started_at": view.started_at,
                "finished_at": view.finished_at,
                "dispatched": view.dispatched,
                "results": view.results,
                "tokens": view.tokens,
            },
        )
        return view

    def _view(
        self,
        session: RunSession,
        handed: Mapping[str, Mapping[str, Any]],
        *,
        already: bool = False,
    ) -> RunView:
        e = session.engine
        meta = session.meta
        pending = []
        for dispatch_id, d in e.dispatches.items():
            doc = handed.get(dispatch_id) or session.store.read_json(
                meta.run_id, dispatch_id, "handout.json"
            )
            if doc is None:
                continue
            ctx = doc.get("context", {})
            pending.append(
                {
                    "step": d.step_id,
                    "dispatch": dispatch_id,
                    "primitive": d.primitive,
                    "role": d.role,
                    "attempt": d.attempt,
                    "context_uri": ctx.get("uri"),
                    "context_tokens": ctx.get("tokens"),
                    "degraded": doc.get("degraded"),
                }
            )
        awaiting = None
        if e.pending:
            p = e.pending[0]
            awaiting = {"kind": p.kind, "node": p.frame.node_id, "reason": p.reason}
        return RunView(
            run_id=meta.run_id,
            composition=session.plan.composition_id,
            status=e.status,
            reason=e.reason,
            mode=meta.mode,
            provider=meta.provider,
            stratum=session.plan.stratum,
            started_at=e.started_at,
            finished_at=e.now if e.finished else None,
            tokens=e.tokens_used,
            dispatched=sum(1 for _ in e.dispatched_at),
            results=len(e.history),
            pending=tuple(pending),
            awaiting=awaiting,
            wait_until=None if e.finished else e.next_wake(),
            outputs=gate_value(e.final_outputs()) if e.finished else {},
            already_recorded=already,
        )

    def next(self, run_id: str) -> tuple[RunView, list[dict[str, Any]]]:
        """Work what can be worked, then the handouts of the steps waiting for the agent."""
        with self._drive_lock(run_id):
            h, recovered = self._load(run_id)
            h.runner.drive(recovered, wait_timers=False)
            view = self._finish(h)
            docs = []
            for p in view.pending:
                doc = h.runner.handed.get(p["dispatch"]) or h.session.store.read_json(
                    run_id, p["dispatch"], "handout.json"
                )
                if doc is not None:
                    docs.append(gate_value(doc))
            return view, docs

    def submit(
        self, run_id: str, step_id: str, output: Any, *, tokens: int | None = None
    ) -> RunView:
        """Record the calling agent's output for a step it was handed, and go on."""
        if not isinstance(output, Mapping):
            raise UsageError(
                f"the output for {step_id} must be a JSON object, not {type(output).__name__}",
                hint="Write one JSON object that matches the step's output_schema (runs next).",
            )
        with self._drive_lock(run_id):
            h, recovered = self._load(run_id)
            engine = h.session.engine
            waiting = [d for d in engine.dispatches.values() if d.step_id == step_id]
            if not waiting:
                if self._recorded(h, step_id, output):
                    h.runner.drive(recovered, wait_timers=False)
                    return self._finish(h, already=True)
                open_steps = sorted({d.step_id for d in engine.dispatches.values()})
                raise UsageError(
                    f"run {run_id}: step {step_id!r} is not waiting for output",
                    hint=f"Steps waiting: {', '.join(open_steps) or 'none'} "
                    f"(`librarian runs next {run_id}`).",
                )
            d = waiting[0]
            doc = h.runner.handed.get(d.dispatch_id) or h.session.store.read_json(
                run_id, d.dispatch_id, "handout.json"
            )
            if doc is None:
                raise UsageError(
                    f"run {run_id}: step {step_id} is worked by the engine, not by an agent",
                    hint=f"`librarian runs next {run_id}` shows the steps handed to you.",
                )
            h.runner.handed[d.dispatch_id] = doc
            h.runner.absorb(recovered)
            now = h.runner.now()
            spent = int(doc.get("context", {}).get("tokens") or 0) if tokens is None else tokens
            raw = Raw(
                "success",
                dict(output),
                spent,
                max(0, now - engine.dispatched_at.get(d.dispatch_id, now)),
            )
            h.runner.feed(d, raw)
            h.runner.drive(wait_timers=False)
            return self._finish(h)

    def _recorded(self, h: RunHandle, step_id: str, output: Mapping[str, Any]) -> bool:
        """Was exactly this output already accepted for the step's last dispatch?"""
        entries, _ = read_entries(self.store().runs.ledger_path(h.session.run_id))
        last = next(
            (
                e
                for e in reversed(entries)
                if e.get("kind") == "step_result" and e.get("step") == step_id
            ),
            None,
        )
        return last is not None and last.get("output") == digest_value(dict(output))

    def status(self, run_id: str) -> RunView:
        """Where a run stands, from its ledger (nothing is written)."""
        store = self.store()
        store.require(run_id)
        meta = store.read_meta(run_id)
        plan = plan_for(compiled_from_table(meta.composition, self.lib()), self.lib())
        engine = self._engine(meta, plan)
        session = RunSession(store, meta, plan, engine, None)  # type: ignore[arg-type]
        entries, _ = read_entries(store.runs.ledger_path(run_id))
        from .ledger import check_chain
        from .session import INPUT_KINDS

        check = check_chain(entries)
        if not check.ok:
            raise RunStateError(
                f"run {run_id}: the ledger's chain is broken at entry {check.broken_at} "
                f"({check.reason})",
                hint=f"`librarian runs verify {run_id}` shows the check.",
            )
        for entry in entries:
            if entry.get("kind") in INPUT_KINDS:
                session._replay_input(entry)
        return self._view(session, {})

    def resume(self, run_id: str) -> RunView:
        """Go on with a run after a crash, a restart or a wait (unattended runs are
        worked to the end; agent runs until they need the agent)."""
        with self._drive_lock(run_id):
            h, recovered = self._load(run_id)
            if h.session.engine.finished:
                return self._finish(h)  # nothing to resume: a finished run stays as it is
            h.session.record([{"kind": "run_resumed", "at": h.runner.now()}])
            h.runner.journal.append("run resumed")
            h.runner.drive(recovered, wait_timers=h.session.meta.mode == "provider")
            return self._finish(h)

    def decide(self, run_id: str, *, approved: bool, note: str | None = None) -> RunView:
        """Answer the question the run waits on (approve or reject), and go on."""
        with self._drive_lock(run_id):
            h, recovered = self._load(run_id)
            engine = h.session.engine
            if engine.status != "awaiting_human":
                raise UsageError(
                    f"run {run_id} is not waiting for a human (it is {engine.status})",
                    hint=f"`librarian runs status {run_id}` shows where it stands.",
                )
            h.runner.absorb(recovered)
            turn = h.session.feed_resolve(approved, h.runner.now(), note=note)
            verb = "approved" if approved else "rejected"
            h.runner.journal.append(f"a human **{verb}**" + (f": {note}" if note else ""))
            h.runner.drive(turn.actions, wait_timers=h.session.meta.mode == "provider")
            return self._finish(h)

    # ---------------------------------------------------------------- reading

    def verify(self, run_id: str) -> RunVerification:
        """Check the ledger's chain and every stored output against its digest."""
        store = self.store()
        store.require(run_id)
        path = store.runs.ledger_path(run_id)
        check = verify(path)
        bad: list[str] = []
        checked = 0
        if check.ok:
            entries, _ = read_entries(path)
            for e in entries:
                if e.get("kind") == "step_result" and e.get("output") is not None:
                    checked += 1
                    try:
                        store.read_output(run_id, str(e["dispatch"]), str(e["output"]))
                    except RunStateError:
                        bad.append(str(e["dispatch"]))
        ok = check.ok and not bad
        reason = check.reason or (f"{len(bad)} output(s) differ from their digests" if bad else "")
        return RunVerification(
            run_id,
            ok,
            check.entries,
            check.broken_at,
            reason,
            check.torn_bytes,
            checked,
            tuple(bad),
            check.head,
        )

    def show(self, run_id: str) -> dict[str, Any]:
        """The run's status and its trace tree (timings, outcomes, decisions)."""
        view = self.status(run_id)
        store = self.store()
        meta = store.read_meta(run_id)
        plan = plan_for(compiled_from_table(meta.composition, self.lib()), self.lib())
        entries, _ = read_entries(store.runs.ledger_path(run_id))
        return {"status": view.to_dict(outputs=False), "tree": trace_tree(plan, entries)}

    def ledger_text(self, run_id: str) -> str:
        store = self.store()
        store.require(run_id)
        return store.runs.ledger_path(run_id).read_text(encoding="utf-8")

    def traces(self) -> TraceLoad:
        return load_traces(self.ws.state)
