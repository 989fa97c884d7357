"""Structured diagnostics for the technique library, LCL and the predicate language.

A :class:`Diagnostic` names *what* is wrong (a stable ``code`` in the seed's
``unverified_by_trace(<code>)`` style, e.g. ``lcl_primitive_not_found``),
*where* (source, line, column, and the key path inside a TOML/JSON document),
and the valid alternatives (``suggestions``, closest first). Errors stop a
compile; warnings are reported beside the result.

:class:`LclError` carries every error found (not just the first) and is a
:class:`~codelibrarian.errors.UsageError`, so the CLI maps it to exit code 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ..errors import UnverifiedByTrace, UsageError

__all__ = [
    "Diagnostic",
    "LclError",
    "Loc",
    "Severity",
    "closest",
    "line_col",
    "raise_if_errors",
]

Severity = Literal["error", "warning"]


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based ``(line, column)`` of a character offset in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def closest(word: str, candidates: Iterable[str], *, n: int = 3) -> tuple[str, ...]:
    """The candidates closest to ``word``, best first, ties by name.

    A candidate qualifies with a difflib ratio of at least 0.6 and within 0.1 of the
    best one, so a clear typo gets one answer, not a list of look-alikes.
    """
    pool = sorted(set(candidates))
    scored = [
        (difflib.SequenceMatcher(None, word, c).ratio(), c)
        for c in pool
        if difflib.SequenceMatcher(None, word, c).real_quick_ratio() >= 0.6
    ]
    good = sorted((s for s in scored if s[0] >= 0.6), key=lambda sc: (-sc[0], sc[1]))
    if not good:
        return ()
    best = good[0][0]
    return tuple(c for score, c in good[:n] if score >= best - 0.1)


@dataclass(frozen=True, slots=True)
class Loc:
    """Where a value sits: a source (file name or ``<builder>``), 1-based line/column,
    and its key path in the document (``conditionals[1].when``)."""

    source: str = ""
    line: int = 0
    column: int = 0
    key: str = ""

    def shifted(self, line: int, column: int) -> Loc:
        """A position *inside* this value's text: ``line``/``column`` are 1-based within it.

        The value's own column is that of its opening quote, so the first character
        of a one-line string is at ``column + 1``.
        """
        if not self.line:
            return replace(self, line=line, column=column)
        if line == 1:
            return replace(self, column=self.column + column)
        return replace(self, line=self.line + line - 1, column=column)

    def __str__(self) -> str:
        parts = [self.source or "<input>"]
        if self.line:
            parts.append(str(self.line))
            parts.append(str(self.column))
        text = ":".join(parts)
        return f"{text} [{self.key}]" if self.key else text


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    loc: Loc = field(default_factory=Loc)
    suggestions: tuple[str, ...] = ()
    severity: Severity = "error"

    @property
    def trace(self) -> UnverifiedByTrace:
        return UnverifiedByTrace(self.code, self.message)

    def render(self) -> str:
        """``file:line:col [key]: unverified_by_trace(code): message; did you mean ...``"""
        text = f"{self.loc}: {self.severity}: {self.trace.code}: {self.message}"
        if self.suggestions:
            text += "; did you mean " + " or ".join(f"`{s}`" for s in self.suggestions) + "?"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "code": self.code,
            "trace": self.trace.code,
            "message": self.message,
            "source": self.loc.source,
            "line": self.loc.line,
            "column": self.loc.column,
            "key": self.loc.key,
            "suggestions": list(self.suggestions),
        }


def _order(d: Diagnostic) -> tuple[int, str, int, int, str, str]:
    return (
        0 if d.severity == "error" else 1,
        d.loc.source,
        d.loc.line,
        d.loc.column,
        d.code,
        d.message,
    )


class LclError(UsageError):
    """LCL, a predicate or a technique definition is invalid; ``diagnostics`` lists why."""

    code = "lcl_invalid"

    def __init__(self, diagnostics: Sequence[Diagnostic], *, hint: str | None = None) -> None:
        ordered = tuple(sorted(diagnostics, key=_order))
        errors = [d for d in ordered if d.severity == "error"]
        first = (errors or list(ordered))[0]
        more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
        super().__init__(
            first.render() + more,
            hint=hint or "Fix the place named; `librarian lcl check FILE` lists every error.",
        )
        self.diagnostics = ordered

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "diagnostics": [d.to_dict() for d in self.diagnostics]}


def raise_if_errors(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Raise :class:`LclError` when any diagnostic is an error; else return the warnings."""
    found = tuple(sorted(diagnostics, key=_order))
    if any(d.severity == "error" for d in found):
        raise LclError(found)
    return found
