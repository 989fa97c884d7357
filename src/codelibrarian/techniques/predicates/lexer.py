"""Tokens of the predicate language, each with its character offset.

The lexer never raises anything but :class:`PredicateSyntaxError` with a
position. In seed-compatibility mode (``compat=True``, used when reading the
seed's JSON presets) ``===`` and ``!==`` are read as ``==`` and ``!=``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from .errors import PredicateSyntaxError

__all__ = ["KEYWORDS", "MAX_LENGTH", "Token", "tokenize"]

MAX_LENGTH = 4096
KEYWORDS = frozenset({"and", "or", "not", "in", "exists", "true", "false"})
TokenKind = Literal["ident", "keyword", "int", "decimal", "string", "op", "eof"]

_TWO = ("==", "!=", "<=", ">=")
_ONE = "<>()[],.-"
#: operators from other languages, with what to write instead
_FOREIGN = {
    "&&": "use `and`",
    "||": "use `or`",
    "!": "use `not`",
    "=": "use `==` to compare",
    "===": "use `==`",
    "!==": "use `!=`",
}
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: TokenKind
    text: str
    start: int
    end: int
    value: str = ""  # decoded string body, for ``string`` tokens


def _is_ident_start(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_ident(c: str) -> bool:
    return _is_ident_start(c) or ("0" <= c <= "9")


def _string(text: str, i: int) -> Token:
    quote = text[i]
    j = i + 1
    out: list[str] = []
    while j < len(text):
        c = text[j]
        if c == quote:
            return Token("string", text[i : j + 1], i, j + 1, "".join(out))
        if c == "\n":
            break
        if c == "\\":
            if j + 1 >= len(text):
                break
            nxt = text[j + 1]
            if nxt not in _ESCAPES:
                raise PredicateSyntaxError(
                    text,
                    j,
                    f"unknown escape '\\{nxt}' in a string",
                    expected=("\\n", "\\t", "\\\\", '\\"', "\\'"),
                )
            out.append(_ESCAPES[nxt])
            j += 2
            continue
        out.append(c)
        j += 1
    raise PredicateSyntaxError(text, i, "unterminated string", expected=(f"a closing {quote}",))


def _number(text: str, i: int) -> Token:
    j = i
    while j < len(text) and text[j].isascii() and text[j].isdigit():
        j += 1
    kind: TokenKind = "int"
    if j < len(text) and text[j] == "." and j + 1 < len(text) and text[j + 1].isdigit():
        j += 1
        while j < len(text) and text[j].isascii() and text[j].isdigit():
            j += 1
        kind = "decimal"
    if j < len(text) and _is_ident(text[j]):
        raise PredicateSyntaxError(
            text,
            i,
            f"malformed number {text[i : j + 1]!r}",
            expected=("a number such as 3 or 0.8",),
        )
    return Token(kind, text[i:j], i, j)


def tokenize(text: str, *, compat: bool = False) -> Iterator[Token]:
    """Tokens of ``text`` ending with one ``eof`` token."""
    if len(text) > MAX_LENGTH:
        raise PredicateSyntaxError(
            text, MAX_LENGTH, f"a condition may be at most {MAX_LENGTH} characters long"
        )
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if _is_ident_start(c):
            j = i + 1
            while j < n and _is_ident(text[j]):
                j += 1
            word = text[i:j]
            yield Token("keyword" if word in KEYWORDS else "ident", word, i, j)
            i = j
            continue
        if c.isascii() and c.isdigit():
            tok = _number(text, i)
            yield tok
            i = tok.end
            continue
        if c in "\"'":
            tok = _string(text, i)
            yield tok
            i = tok.end
            continue
        three = text[i : i + 3]
        if three in ("===", "!=="):
            if compat:
                yield Token("op", three[:2], i, i + 3)
                i += 3
                continue
            raise PredicateSyntaxError(text, i, f"{three!r} is not an operator; {_FOREIGN[three]}")
        two = text[i : i + 2]
        if two in _TWO:
            yield Token("op", two, i, i + 2)
            i += 2
            continue
        if two in _FOREIGN:
            raise PredicateSyntaxError(text, i, f"{two!r} is not an operator; {_FOREIGN[two]}")
        if c in _FOREIGN:
            raise PredicateSyntaxError(text, i, f"{c!r} is not an operator; {_FOREIGN[c]}")
        if c in _ONE:
            yield Token("op", c, i, i + 1)
            i += 1
            continue
        shown = c if c.isprintable() else f"U+{ord(c):04X}"
        raise PredicateSyntaxError(text, i, f"unexpected character {shown!r}")
    yield Token("eof", "", n, n)
