"""Stage-aware reporting (P22): diagnostics, a subscribable progress reporter, and
an error localizer.

``ProgressReporter`` is a ``StageObserver``: hand it to the executor (the
executor always runs one internally to build ``PipelineResult.report``) and
``subscribe`` callbacks to receive a fresh ``PipelineDiagnosticReport`` on every
event. Times are whole milliseconds measured from the start of the run, from an
injectable clock; the seed's ISO wall-clock timestamps are replaced by these
offsets so two runs can be compared and tests can fix the clock.

``ErrorLocalizer`` turns an exception raised inside a stage into a
``LocalizedError``: the failed stage, a summary of its input, a root cause, an
error code, whether the query can still produce a result, suggestions and
recovery options (retry / skip / fallback / abort).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import IndexCorrupt, LibrarianError, NotFound, ProviderError, ProviderUnavailable
from .types import QueryCancelled, StageEstimate, StageResult

__all__ = [
    "ErrorInfo",
    "ErrorLocalizer",
    "LocalizedError",
    "MultiObserver",
    "PipelineDiagnosticReport",
    "ProgressReporter",
    "ProgressUpdate",
    "RecoveryOption",
    "StageDiagnostic",
    "StageStatus",
]

StageStatus = Literal["pending", "running", "completed", "failed", "skipped", "cancelled"]
OverallStatus = Literal["running", "completed", "partial", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class RecoveryOption:
    action: Literal["retry", "skip", "fallback", "abort"]
    description: str
    automatic_applicable: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "description": self.description,
            "automatic_applicable": self.automatic_applicable,
        }


@dataclass(frozen=True, slots=True)
class LocalizedError:
    failed_stage: str
    error_type: str
    message: str
    code: str
    stage_input: str
    root_cause: str
    recoverable: bool
    suggestions: tuple[str, ...]
    recovery_options: tuple[RecoveryOption, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "failed_stage": self.failed_stage,
            "error_type": self.error_type,
            "message": self.message,
            "code": self.code,
            "stage_input": self.stage_input,
            "root_cause": self.root_cause,
            "recoverable": self.recoverable,
            "suggestions": list(self.suggestions),
            "recovery_options": [r.to_dict() for r in self.recovery_options],
        }


class ErrorLocalizer:
    """Name the failed stage, a root cause and the ways forward."""

    #: stages whose output the rest of the pipeline can do without
    OPTIONAL = frozenset({"graph_expansion", "scoring", "reranking", "defeater_check"})

    def localize(self, error: BaseException, stage: str, stage_input: str) -> LocalizedError:
        cause, suggestions = self._root_cause(error, stage)
        skip_ok = stage in self.OPTIONAL
        options: list[RecoveryOption] = []
        if isinstance(error, QueryCancelled):
            options.append(RecoveryOption("abort", "the query was cancelled", True))
            return LocalizedError(
                stage,
                type(error).__name__,
                str(error),
                "cancelled",
                stage_input,
                cause,
                False,
                tuple(suggestions),
                tuple(options),
            )
        if skip_ok:
            options.append(
                RecoveryOption("skip", f"continue without {stage}; its input is passed on", True)
            )
        elif stage == "retrieval":
            options.append(
                RecoveryOption("fallback", "return an empty result with the failure recorded", True)
            )
        elif stage == "synthesis":
            options.append(
                RecoveryOption("fallback", "build plain packs without evidence summaries", True)
            )
        transient = isinstance(error, sqlite3.OperationalError | ProviderError | TimeoutError)
        options.append(
            RecoveryOption(
                "retry",
                "run the query again" + (" (the error looks transient)" if transient else ""),
                False,
            )
        )
        options.append(RecoveryOption("abort", "stop and report the error", False))
        code = error.code if isinstance(error, LibrarianError) else f"stage_failed:{stage}"
        return LocalizedError(
            stage,
            type(error).__name__,
            str(error),
            code,
            stage_input,
            cause,
            skip_ok or stage in {"retrieval", "synthesis"},
            tuple(suggestions),
            tuple(options),
        )

    @staticmethod
    def _root_cause(error: BaseException, stage: str) -> tuple[str, list[str]]:
        if isinstance(error, QueryCancelled):
            return "cancellation was requested", []
        if isinstance(error, IndexCorrupt | sqlite3.DatabaseError):
            return (
                "the index could not be read",
                ["Run `librarian index` to rebuild or complete the index."],
            )
        if isinstance(error, NotFound):
            return (
                "the index changed while the query ran (an id no longer exists)",
                ["Run the query again; re-index first if files changed."],
            )
        if isinstance(error, ProviderUnavailable | ProviderError):
            return (
                "the LLM provider failed",
                ["Check `librarian providers`; the deterministic path works without one."],
            )
        if isinstance(error, MemoryError):
            return "out of memory", ["Lower --limit or the depth."]
        if isinstance(error, OSError):
            return (
                f"a file could not be read ({error.strerror or error})",
                ["Check permissions in the repository."],
            )
        return (
            f"unexpected {type(error).__name__} inside {stage}",
            ["This is a bug: report it with the query id and `--json` output."],
        )


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    message: str
    code: str
    recoverable: bool
    suggested_action: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "code": self.code,
            "recoverable": self.recoverable,
            "suggested_action": self.suggested_action,
        }


@dataclass(frozen=True, slots=True)
class StageDiagnostic:
    stage: str
    status: StageStatus
    started_ms: int | None = None
    ended_ms: int | None = None
    duration_ms: int | None = None
    estimated_remaining_ms: int | None = None
    progress_permille: int = 0
    resources: tuple[tuple[str, int], ...] = ()
    input_summary: str = ""
    output_summary: str | None = None
    output_count: int | None = None
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: ErrorInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "status": self.status,
            "timing": {
                "started_ms": self.started_ms,
                "ended_ms": self.ended_ms,
                "duration_ms": self.duration_ms,
                "estimated_remaining_ms": self.estimated_remaining_ms,
            },
            "progress_permille": self.progress_permille,
            "resources": dict(self.resources),
            "io": {
                "input_summary": self.input_summary,
                "output_summary": self.output_summary,
                "output_count": self.output_count,
            },
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "error": None if self.error is None else self.error.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class PipelineDiagnosticReport:
    query_id: str
    query: str
    overall_status: OverallStatus
    stages: tuple[StageDiagnostic, ...]
    total_duration_ms: int
    total_tokens_used: int
    progress_percent: int

    def stage(self, name: str) -> StageDiagnostic:
        for s in self.stages:
            if s.stage == name:
                return s
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "query": self.query,
            "overall_status": self.overall_status,
            "stages": [s.to_dict() for s in self.stages],
            "total_duration_ms": self.total_duration_ms,
            "total_tokens_used": self.total_tokens_used,
            "progress_percent": self.progress_percent,
        }


@dataclass(frozen=True, slots=True)
class ProgressUpdate:
    stage: str
    phase: Literal["starting", "processing", "completing"]
    progress_permille: int
    message: str
    items_processed: int | None = None
    items_total: int | None = None


@dataclass(slots=True)
class _StageState:
    status: StageStatus = "pending"
    started: int | None = None
    ended: int | None = None
    estimate_ms: int | None = None
    permille: int = 0
    resources: dict[str, int] = field(default_factory=dict)
    input_summary: str = ""
    output_summary: str | None = None
    output_count: int | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None


class ProgressReporter:
    """Collects stage events into diagnostics and pushes reports to subscribers."""

    def __init__(
        self,
        query_id: str,
        query: str,
        stages: Sequence[str],
        *,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        self.query_id = query_id
        self.query = query
        self._order = tuple(stages)
        self._state = {name: _StageState() for name in self._order}
        self._clock = clock_ns
        self._t0 = clock_ns()
        self._ended: int | None = None
        self._overall: OverallStatus = "running"
        self._subscribers: list[Callable[[PipelineDiagnosticReport], None]] = []
        self._lock = threading.RLock()

    def _now(self) -> int:
        return max(0, (self._clock() - self._t0) // 1_000_000)

    # -- subscription ------------------------------------------------------------------

    def subscribe(self, callback: Callable[[PipelineDiagnosticReport], None]) -> Callable[[], None]:
        """Call ``callback`` with a fresh report on every event; returns an unsubscriber."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self) -> None:
        with self._lock:
            subs = list(self._subscribers)
        if subs:
            report = self.get_status()
            for cb in subs:
                cb(report)

    # -- StageObserver -----------------------------------------------------------------

    def on_stage_start(self, stage: str, input_summary: str, estimate: StageEstimate) -> None:
        with self._lock:
            st = self._state.setdefault(stage, _StageState())
            st.status = "running"
            st.started = self._now()
            st.estimate_ms = estimate.expected_duration_ms
            st.input_summary = input_summary
        self._emit()

    def on_stage_progress(self, stage: str, permille: int, message: str) -> None:
        self.report_progress(ProgressUpdate(stage, "processing", permille, message))

    def report_progress(self, update: ProgressUpdate) -> None:
        with self._lock:
            st = self._state.setdefault(update.stage, _StageState())
            st.permille = max(st.permille, 0, min(1000, update.progress_permille))
            if update.message and update.message not in st.notes:
                st.notes.append(update.message)
        self._emit()

    def on_stage_complete(self, stage: str, result: StageResult[Any], output_summary: str) -> None:
        with self._lock:
            st = self._state.setdefault(stage, _StageState())
            st.status = "completed"
            st.ended = self._now()
            st.permille = 1000
            st.resources.update(dict(result.resources))
            st.output_summary = output_summary
            st.output_count = dict(result.resources).get("items")
            st.warnings.extend(result.warnings)
            st.notes.extend(t.code for t in result.traces)
        self._emit()

    def on_stage_error(self, stage: str, error: BaseException, localized: Any = None) -> None:
        with self._lock:
            st = self._state.setdefault(stage, _StageState())
            cancelled = isinstance(error, QueryCancelled)
            st.status = "cancelled" if cancelled else "failed"
            st.ended = self._now()
            if isinstance(localized, LocalizedError):
                first = localized.recovery_options[0] if localized.recovery_options else None
                st.error = ErrorInfo(
                    localized.message,
                    localized.code,
                    localized.recoverable,
                    None if first is None else first.description,
                )
            else:
                st.error = ErrorInfo(
                    str(error), "cancelled" if cancelled else "stage_failed", not cancelled, None
                )
        self._emit()

    def on_stage_skipped(self, stage: str, reason: str) -> None:
        with self._lock:
            st = self._state.setdefault(stage, _StageState())
            st.status = "skipped"
            st.permille = 1000
            st.notes.append(reason)
        self._emit()

    def on_cache_hit(self, stage: str) -> None:
        with self._lock:
            st = self._state.setdefault(stage, _StageState())
            st.resources["cache_hits"] = st.resources.get("cache_hits", 0) + 1
            st.notes.append("served from the stage cache")

    def finish(self, status: OverallStatus) -> None:
        with self._lock:
            self._overall = status
            self._ended = self._now()
        self._emit()

    # -- reports -----------------------------------------------------------------------

    def get_status(self) -> PipelineDiagnosticReport:
        with self._lock:
            now = self._now() if self._ended is None else self._ended
            stages: list[StageDiagnostic] = []
            done_permille = 0
            tokens = 0
            for name in self._order:
                st = self._state[name]
                duration = None
                if st.started is not None:
                    duration = (st.ended if st.ended is not None else now) - st.started
                remaining = None
                if st.status == "running" and st.estimate_ms is not None and duration is not None:
                    remaining = max(0, st.estimate_ms - duration)
                elif st.status == "pending" and st.estimate_ms is not None:
                    remaining = st.estimate_ms
                if st.status in ("completed", "skipped", "failed"):
                    done_permille += 1000
                else:
                    done_permille += st.permille
                tokens += st.resources.get("tokens_used", 0)
                stages.append(
                    StageDiagnostic(
                        name,
                        st.status,
                        st.started,
                        st.ended,
                        duration,
                        remaining,
                        st.permille,
                        tuple(sorted(st.resources.items())),
                        st.input_summary,
                        st.output_summary,
                        st.output_count,
                        tuple(st.warnings),
                        tuple(st.notes),
                        st.error,
                    )
                )
            total = max(1, len(self._order)) * 1000
            return PipelineDiagnosticReport(
                self.query_id,
                self.query,
                self._overall,
                tuple(stages),
                now,
                tokens,
                done_permille * 100 // total,
            )


class MultiObserver:
    """Fan one stream of stage events out to several observers."""

    def __init__(self, *observers: Any) -> None:
        self._observers = [o for o in observers if o is not None]

    def on_stage_start(self, stage: str, input_summary: str, estimate: StageEstimate) -> None:
        for o in self._observers:
            o.on_stage_start(stage, input_summary, estimate)

    def on_stage_progress(self, stage: str, permille: int, message: str) -> None:
        for o in self._observers:
            o.on_stage_progress(stage, permille, message)

    def on_stage_complete(self, stage: str, result: StageResult[Any], output_summary: str) -> None:
        for o in self._observers:
            o.on_stage_complete(stage, result, output_summary)

    def on_stage_error(self, stage: str, error: BaseException, localized: Any = None) -> None:
        for o in self._observers:
            o.on_stage_error(stage, error, localized)

    def on_stage_skipped(self, stage: str, reason: str) -> None:
        for o in self._observers:
            o.on_stage_skipped(stage, reason)

    def on_cache_hit(self, stage: str) -> None:
        for o in self._observers:
            hit = getattr(o, "on_cache_hit", None)
            if hit is not None:
                hit(stage)
