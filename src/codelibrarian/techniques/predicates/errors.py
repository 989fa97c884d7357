"""Errors of the predicate language: always with a position.

:class:`PredicateSyntaxError` is the *only* exception the lexer and parser raise
(the fuzz benchmark and a property test hold them to it). Both error classes are
:class:`~codelibrarian.techniques.diagnostics.LclError` subclasses, so they carry
structured :class:`~codelibrarian.techniques.diagnostics.Diagnostic` values.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..diagnostics import Diagnostic, LclError, Loc, line_col

__all__ = ["PredicateSyntaxError", "PredicateTypeError", "predicate_loc"]


def predicate_loc(text: str, offset: int, where: Loc | None) -> Loc:
    """The position of ``text[offset]`` — inside ``where`` when the predicate sits in a file."""
    line, col = line_col(text, offset)
    if where is None:
        return Loc("<predicate>", line, col)
    return where.shifted(line, col)


class PredicateSyntaxError(LclError):
    """The text is not a predicate. ``offset`` (0-based) and ``line``/``column`` (1-based)
    say where; ``expected`` lists what would have been valid there."""

    code = "predicate_syntax"

    def __init__(
        self,
        text: str,
        offset: int,
        message: str,
        *,
        expected: Sequence[str] = (),
        where: Loc | None = None,
    ) -> None:
        self.text = text
        self.offset = offset
        self.line, self.column = line_col(text, offset)
        self.reason = message
        self.expected = tuple(expected)
        detail = message
        if self.expected:
            detail += f" (expected {', '.join(self.expected)})"
        super().__init__(
            [Diagnostic("lcl_predicate_syntax", detail, predicate_loc(text, offset, where))],
            hint="The predicate language has paths, literals, comparisons, `in`, `exists`, "
            "`and`/`or`/`not` and parentheses; see docs/lcl.md.",
        )

    def located(self, where: Loc) -> PredicateSyntaxError:
        """The same error positioned inside a file."""
        return PredicateSyntaxError(
            self.text, self.offset, self.reason, expected=self.expected, where=where
        )


class PredicateTypeError(LclError):
    """A predicate is well formed but does not type-check against the environment."""

    code = "predicate_type"
