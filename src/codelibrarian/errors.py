"""One error hierarchy for the whole library.

The library never prints or exits: it raises these. The CLI maps them to exit
codes (see ``EXIT_CODES``) and the MCP server to tool errors. Every message says
what was wrong, where, and the next step.

    LibrarianError
     ├── UsageError            (ValueError)  bad arguments from a caller
     │    └── ConfigError                    bad librarian.toml / [tool.librarian]
     ├── WorkspaceError        (OSError)     the repository cannot be read as asked
     │    ├── NotARepository
     │    └── GitUnavailable
     ├── IndexCorrupt                        the index cannot be trusted; rebuild it
     ├── IndexBusy                           another process holds the index lock too long
     ├── BudgetInfeasible                    hard constraints alone exceed the budget
     ├── ProviderUnavailable                 no LLM provider (carries the trace)
     ├── ProviderError                       a provider answered badly
     │    └── ProviderCallFailed             one request failed (kind, retryable)
     ├── StageFailed                         a query pipeline stage failed
     ├── PackValidationError   (ValueError)  an LCP / handoff file fails its schema
     └── NotFound              (KeyError)    a decision, run or pack id is unknown
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EXIT_CODES",
    "BudgetInfeasible",
    "ConfigError",
    "GitUnavailable",
    "IndexBusy",
    "IndexCorrupt",
    "LibrarianError",
    "NotARepository",
    "NotFound",
    "PackValidationError",
    "ProviderCallFailed",
    "ProviderError",
    "ProviderUnavailable",
    "StageFailed",
    "UnverifiedByTrace",
    "UsageError",
    "WorkspaceError",
    "exit_code_for",
]


@dataclass(frozen=True, slots=True)
class UnverifiedByTrace:
    """The seed's ``unverified_by_trace(<reason>)`` code as a structured value.

    Used wherever a capability is missing and the library degrades instead of
    pretending: ``reason`` is a short machine code such as ``provider_unavailable``
    or ``stage_failed:retrieval``; ``detail`` is human-readable.
    """

    reason: str
    detail: str = ""

    @property
    def code(self) -> str:
        return f"unverified_by_trace({self.reason})"

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "reason": self.reason, "detail": self.detail}

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}" if self.detail else self.code


class LibrarianError(Exception):
    """Base of every error the library raises on purpose."""

    #: short stable code, used in JSON error output and MCP tool errors
    code = "librarian_error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n{self.hint}"
        return self.message

    def to_dict(self) -> dict[str, object]:
        return {"error": self.code, "message": self.message, "hint": self.hint}


class UsageError(LibrarianError, ValueError):
    code = "usage_error"


class ConfigError(UsageError):
    """A configuration file or value is invalid."""

    code = "config_error"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        where = f"{file}: " if file else ""
        at = f"[{key}] " if key else ""
        super().__init__(f"{where}{at}{message}", hint=hint)
        self.file = file
        self.key = key


class WorkspaceError(LibrarianError, OSError):
    code = "workspace_error"


class NotARepository(WorkspaceError):
    code = "not_a_repository"


class GitUnavailable(WorkspaceError):
    code = "git_unavailable"


class IndexCorrupt(LibrarianError):
    code = "index_corrupt"


class IndexBusy(LibrarianError):
    """The index's writer lock stayed held by a live process past the bounded wait."""

    code = "index_busy"

    def __init__(self, message: str, *, holder_pid: int | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.holder_pid = holder_pid

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "holder_pid": self.holder_pid}


class BudgetInfeasible(LibrarianError):
    """Pinned, must-include and never-shrink artifacts cannot fit the budget."""

    code = "budget_infeasible"

    def __init__(
        self,
        message: str,
        *,
        required_tokens: int = 0,
        budget: int = 0,
        offenders: tuple[str, ...] = (),
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.required_tokens = required_tokens
        self.budget = budget
        self.offenders = offenders


class ProviderUnavailable(LibrarianError):
    code = "provider_unavailable"

    def __init__(
        self, message: str, *, trace: UnverifiedByTrace | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.trace = trace or UnverifiedByTrace("provider_unavailable", message)


class ProviderError(LibrarianError):
    code = "provider_error"


class StageFailed(LibrarianError):
    code = "stage_failed"

    def __init__(self, stage: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"stage {stage!r} failed: {message}", hint=hint)
        self.stage = stage
        self.trace = UnverifiedByTrace(f"stage_failed:{stage}", message)


class PackValidationError(LibrarianError, ValueError):
    code = "pack_invalid"


class NotFound(LibrarianError, KeyError):
    code = "not_found"

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return LibrarianError.__str__(self)


#: CLI exit codes, documented in docs/cli.md
EXIT_CODES: dict[type[LibrarianError], int] = {
    UsageError: 2,
    ConfigError: 3,
    WorkspaceError: 4,
    IndexCorrupt: 5,
    BudgetInfeasible: 6,
    ProviderUnavailable: 7,
    ProviderError: 7,
    StageFailed: 8,
    PackValidationError: 9,
    NotFound: 10,
    IndexBusy: 11,
}


def exit_code_for(error: LibrarianError) -> int:
    """Most specific exit code for an error (1 when none is registered)."""
    for klass in type(error).__mro__:
        if klass in EXIT_CODES:
            return EXIT_CODES[klass]
    return 1


class ProviderCallFailed(ProviderError):
    """One request to an LLM provider failed, with a machine-readable ``kind``.

    ``kind`` is one of ``timeout``, ``connection``, ``http_status``, ``malformed``,
    ``auth``, ``process_failed``, ``unsupported``, ``blocked``, ``schema``.
    ``retryable`` says whether the same request may succeed if repeated.
    """

    code = "provider_call_failed"

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        kind: str,
        retryable: bool = False,
        status: int | None = None,
        attempts: int = 1,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.provider = provider
        self.kind = kind
        self.retryable = retryable
        self.status = status
        self.attempts = attempts

    def to_dict(self) -> dict[str, object]:
        return {
            **super().to_dict(),
            "provider": self.provider,
            "kind": self.kind,
            "retryable": self.retryable,
            "status": self.status,
            "attempts": self.attempts,
        }
