"""The shell's loop: act on the core's decisions until the run is blocked or done.

:meth:`Runner.drive` starts what the core dispatched — builtin and model steps in
a thread pool (I/O-bound work: index queries, HTTP calls), agent steps as
handouts — feeds results back in the order they arrive, answers breaker checks,
cancels what the core cancels, and tells the core the time when a timer is due.
It returns when nothing more can happen without someone else: the run finished,
it waits for a human, for the calling agent, or (``wait=False``) for a timer.

Recovery is the same code: a run loaded after a crash has dispatches in flight
that nothing in this process is working on; ``drive`` starts them again (an agent
step whose handout was written is simply still waiting for its agent).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any

from ..packs.runs import stamp
from .breakers import BreakerStore
from .builtins import CancelToken
from .dispatch import Dispatcher, Raw, ShellEnv, StepContext
from .session import RunSession
from .values import (
    Action,
    BreakerCheck,
    BreakerUpdate,
    Cancel,
    Dispatch,
    Finish,
    Pause,
)

if TYPE_CHECKING:
    from ..sources.sessions import SessionEntry

__all__ = ["Runner"]


class Runner:
    """Drives one loaded run (see the module docstring)."""

    def __init__(
        self,
        session: RunSession,
        dispatcher: Dispatcher,
        env: ShellEnv,
        breakers: BreakerStore,
        *,
        sleep: Callable[[float], None] = time.sleep,
        max_workers: int = 4,
        record_history: bool = True,
    ) -> None:
        self.session = session
        self.d = dispatcher
        self.env = env
        self.breakers = breakers
        self.sleep = sleep
        self.max_workers = max_workers
        self.record_history = record_history
        self.running: dict[str, tuple[Future[Raw], CancelToken, Dispatch]] = {}
        self.handed: dict[str, dict[str, Any]] = {}
        self.journal: list[str] = []
        self.history: list[SessionEntry] = []  # written before any context is composed
        self._pool: ThreadPoolExecutor | None = None

    @property
    def engine(self) -> Any:
        return self.session.engine

    def now(self) -> int:
        return max(self.env.clock_ms(), int(self.engine.now))

    # ----------------------------------------------------------------- drive

    def drive(self, actions: Iterable[Action] = (), *, wait_timers: bool) -> None:
        """Work until blocked (see the module docstring); ``wait_timers`` sleeps
        through retry delays instead of returning."""
        try:
            self.absorb(actions)
            self._recover()
            self._loop(wait_timers)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
            self.flush_history()
            self.flush_journal()

    def _loop(self, wait_timers: bool) -> None:
        engine = self.engine
        while not engine.finished:
            turn = self.session.feed_tick(self.now())
            if turn is not None:
                self.absorb(turn.actions)
                continue
            if self.running:
                wake = engine.next_wake()
                timeout = None if wake is None else max(0.0, (wake - self.now()) / 1000)
                futures = [f for f, _, _ in self.running.values()]
                done, _ = wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
                finished = sorted(
                    (d for d, (f, _, _) in self.running.items() if f in done),
                    key=lambda k: list(self.running).index(k),
                )
                for dispatch_id in finished:
                    future, _token, d = self.running.pop(dispatch_id)
                    self._tick()
                    if dispatch_id not in engine.inflight:
                        continue  # cancelled meanwhile: its result is not wanted
                    self.feed(d, future.result())
                continue
            if engine.status == "awaiting_human":
                return
            wake = engine.next_wake()
            if wake is None or not wait_timers or self.handed_waiting():
                return
            self.sleep(max(0.0, (wake - self.env.clock_ms()) / 1000))

    def _tick(self) -> None:
        turn = self.session.feed_tick(self.now())
        if turn is not None:
            self.absorb(turn.actions)

    def handed_waiting(self) -> bool:
        return any(k in self.engine.inflight for k in self.handed)

    def _recover(self) -> None:
        """Start every in-flight dispatch nothing here works on (after a crash or load)."""
        engine = self.engine
        for node_id in sorted(engine.breaker_checks):
            self.absorb([engine.breaker_checks[node_id][1]])
        for dispatch_id, d in list(engine.dispatches.items()):
            if dispatch_id in self.running or dispatch_id in self.handed:
                continue
            if self.d.route(d) == "agent" or self._degraded(d):
                doc = self.env.store.read_json(self.session.run_id, dispatch_id, "handout.json")
                if doc is not None:
                    self.handed[dispatch_id] = doc
                    continue
            self.start(d)

    def _degraded(self, d: Dispatch) -> bool:
        return (
            self.env.store.step_file(self.session.run_id, d.dispatch_id, "handout.json").is_file()
            and self.d.route(d) == "llm"
        )

    # --------------------------------------------------------------- actions

    def absorb(self, actions: Iterable[Action]) -> None:
        for a in actions:
            if isinstance(a, BreakerCheck):
                verdict, failures = self.breakers.enter(a.key, self.now(), a.reset_after_ms)
                turn = self.session.feed_breaker(a.node_id, a.key, verdict, failures, self.now())
                self.absorb(turn.actions)
            elif isinstance(a, BreakerUpdate):
                state = self.breakers.record(
                    a.key, success=a.success, now_ms=self.now(), threshold=a.threshold
                )
                self.session.record(
                    [
                        {
                            "kind": "breaker_update",
                            "at": self.now(),
                            "success": a.success,
                            "state": state.get("state", "closed"),
                            "failures": int(state.get("failures", 0)),
                        }
                    ]
                )
            elif isinstance(a, Cancel):
                running = self.running.get(a.dispatch_id)
                if running is not None:
                    running[1].cancel()
                self.handed.pop(a.dispatch_id, None)
                self.journal.append(f"step `{a.dispatch_id}` cancelled: {a.reason}")
            elif isinstance(a, Dispatch):
                self.start(a)
            elif isinstance(a, Pause):
                self.journal.append(
                    f"**awaiting a human** at {a.node_id} ({a.kind}: {a.reason}): "
                    f"`librarian runs approve {self.session.run_id}` or `runs reject`"
                )
            elif isinstance(a, Finish):
                self.journal.append(f"run **{a.status}** ({a.reason})")

    def _pool_submit(self, job: Callable[[], Raw]) -> Future[Raw]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="step")
        return self._pool.submit(job)

    def start(self, d: Dispatch) -> None:
        """Begin one dispatch: contracts first, then its executor (or its agent)."""
        if d.dispatch_id not in self.engine.inflight:
            return
        raw, evidence = self.d.precheck(d)
        self.session.record(evidence)
        if raw is not None:
            self.feed(d, raw)
            return
        route = self.d.route(d)
        token = CancelToken(d.deadline_ms, self.env.clock_ms)
        if route == "builtin":
            self.running[d.dispatch_id] = (
                self._pool_submit(self.d.builtin_job(d, token)),
                token,
                d,
            )
            return
        degraded = None
        if route == "llm":
            choice = self.d.choose_model(d)
            self.session.record([{**e, "at": self.now()} for e in choice.events])
            if choice.provider is not None:
                ctx, more = self._compose(d)
                self.session.record(more)
                job = self.d.llm_job(d, ctx, choice, token)
                self.running[d.dispatch_id] = (self._pool_submit(job), token, d)
                self.journal.append(
                    f"step `{d.dispatch_id}` ({d.primitive}, {d.role}) sent to "
                    f"{choice.provider}/{choice.model}"
                )
                return
            trace = choice.trace
            code = trace.reason if trace is not None else "provider_unavailable"
            if self.session.meta.mode == "provider" or d.executor != "llm":
                self.feed(d, Raw("failure", codes=(code,)))
                return
            degraded = str(trace) if trace is not None else code
        ctx, more = self._compose(d)
        self.session.record(more)
        reasons = self._last_reasons(d)
        doc = self.d.handout(d, ctx, degraded=degraded, previous=reasons)
        self.handed[d.dispatch_id] = doc
        self.session.record(
            [
                {
                    "kind": "step_handed_out",
                    "at": self.now(),
                    "dispatch": d.dispatch_id,
                    "role": d.role,
                    "degraded": degraded is not None,
                }
            ]
        )
        self.journal.append(
            f"step `{d.dispatch_id}` ({d.primitive}) handed to the **{d.role}** agent: "
            f"context `{ctx.uri}` ({ctx.tokens}/{ctx.budget} tokens)"
        )

    def _compose(self, d: Dispatch) -> tuple[StepContext, list[dict[str, Any]]]:
        self.flush_history()
        return self.d.compose_context(d)

    def _last_reasons(self, d: Dispatch) -> tuple[str, ...]:
        """Why the previous dispatch of this step was rejected (shown to the agent)."""
        n = int(d.dispatch_id.rsplit(".", 1)[1])
        if n <= 1:
            return ()
        doc = self.env.store.read_json(self.session.run_id, f"{d.step_id}.{n - 1}", "verdict.json")
        reasons = doc.get("reasons") if doc else None
        return tuple(str(r) for r in reasons) if isinstance(reasons, list) else ()

    def feed(self, d: Dispatch, raw: Raw) -> None:
        """Check a result's contract, record it and feed the core."""
        result, reasons = self.d.postcheck(d, raw)
        self.session.record(raw.evidence)
        run_id = self.session.run_id
        if reasons:
            with contextlib.suppress(OSError):
                self.env.store.write_step(
                    run_id,
                    d.dispatch_id,
                    "verdict.json",
                    json.dumps({"status": result.status, "reasons": list(reasons)}),
                )
        turn = self.session.feed_result(result, self.now(), step_id=d.step_id)
        self.handed.pop(d.dispatch_id, None)
        if result.status == "success" and result.output is not None and self.record_history:
            from ..sources.sessions import SessionEntry

            text = self.d.history_text(d, result.output)
            if text.strip():
                self.history.append(SessionEntry(f"run-{run_id}", d.role, text, self.now() // 1000))
        codes = f" ({', '.join(result.codes)})" if result.codes else ""
        self.journal.append(
            f"step `{d.dispatch_id}` ({d.primitive}) **{result.status}**{codes}, "
            f"{result.duration_ms} ms, {result.tokens} tokens"
        )
        self.absorb(turn.actions)

    def flush_history(self) -> None:
        """Write the buffered history entries (one fsync for a burst of steps).

        Called before a step's context is composed (so the history lane sees every
        earlier output) and when driving stops. The ledger, not this history, is
        the run's record: an entry lost to a crash is only context not offered.
        """
        if self.history:
            from ..sources.sessions import append_session_entries

            entries, self.history = self.history, []
            append_session_entries(self.env.ws.state.sessions_dir, entries)

    def flush_journal(self) -> None:
        if not self.journal:
            return
        when = stamp(self.now() // 1000)
        lines, self.journal = [f"{when} · {line}" for line in self.journal], []
        self.env.store.runs.journal_extend(self.session.run_id, lines, goal=self.session.meta.task)
