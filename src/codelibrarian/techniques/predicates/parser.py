"""A recursive-descent parser for the predicate language (never ``eval``).

Grammar (lowest precedence first)::

    predicate  := or_expr EOF
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := operand (CMP operand | "in" operand | "not" "in" operand)?
    operand    := "exists" path | literal | path | list | "(" or_expr ")"
    list       := "[" (or_expr ("," or_expr)* ","?)? "]"
    literal    := "true" | "false" | "-"? INT | "-"? DECIMAL | STRING
    path       := IDENT ("." IDENT)*
    CMP        := "==" | "!=" | "<" | "<=" | ">" | ">="

Comparisons do not chain (``a < b < c`` is an error that says to use ``and``).
Nesting is limited to :data:`MAX_DEPTH` levels and the text to ``MAX_LENGTH``
characters, so hostile input gets a positioned error, never a ``RecursionError``.

In seed-compatibility mode (the seed's JSON presets) ``===``/``!==`` are
accepted and camelCase path segments are read as snake_case
(``change.touchesAuth`` is ``change.touches_auth``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from fractions import Fraction

from ..diagnostics import line_col
from .ast import BoolOp, CompareOp, Comparison, Exists, Expr, ListExpr, Literal_, Not, Path
from .errors import PredicateSyntaxError
from .lexer import Token, tokenize

__all__ = ["MAX_DEPTH", "parse_expr", "snake_case"]

MAX_DEPTH = 64
_CMP = frozenset({"==", "!=", "<", "<=", ">", ">="})
_VALUE = ("a path", "a number", "a string", "true/false", "a list [...]", "'('", "exists")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(word: str) -> str:
    """``touchesAuth`` -> ``touches_auth`` (already snake_case words are unchanged)."""
    return _CAMEL.sub(lambda m: "_" + m.group(1), word).lower()


def _at(text: str, offset: int) -> str:
    line, col = line_col(text, offset)
    return f"{line}:{col}"


def _describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "the end of the condition"
    return f"{tok.text!r}"


class _Parser:
    def __init__(self, text: str, *, compat: bool) -> None:
        self.text = text
        self.compat = compat
        self.tokens: Iterator[Token] = tokenize(text, compat=compat)
        self.tok = next(self.tokens)
        self.depth = 0

    # -- helpers ------------------------------------------------------------

    def error(
        self, message: str, tok: Token | None = None, *, expected: tuple[str, ...] = ()
    ) -> PredicateSyntaxError:
        at = tok or self.tok
        return PredicateSyntaxError(self.text, at.start, message, expected=expected)

    def advance(self) -> Token:
        tok = self.tok
        if tok.kind != "eof":
            self.tok = next(self.tokens)
        return tok

    def at(self, kind: str, text: str | None = None) -> bool:
        return self.tok.kind == kind and (text is None or self.tok.text == text)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"the condition nests more than {MAX_DEPTH} levels deep")

    # -- grammar ------------------------------------------------------------

    def predicate(self) -> Expr:
        if self.at("eof"):
            raise self.error("empty condition", expected=_VALUE)
        expr = self.or_expr()
        if not self.at("eof"):
            tok = self.tok
            if tok.text == ")":
                raise self.error("unbalanced ')': there is no '(' to close")
            raise self.error(
                f"unexpected {_describe(tok)} after a complete condition",
                expected=("`and`", "`or`", "the end of the condition"),
            )
        return expr

    def or_expr(self) -> Expr:
        return self._chain("or", self.and_expr)

    def and_expr(self) -> Expr:
        return self._chain("and", self.not_expr)

    def _chain(self, op: str, sub: Callable[[], Expr]) -> Expr:
        first = sub()
        items = [first]
        while self.at("keyword", op):
            self.advance()
            items.append(sub())
        if len(items) == 1:
            return first
        span = (items[0].span[0], items[-1].span[1])
        if op == "and":
            return BoolOp("and", tuple(items), span)
        return BoolOp("or", tuple(items), span)

    def not_expr(self) -> Expr:
        if self.at("keyword", "not"):
            start = self.advance().start
            self.enter()
            operand = self.not_expr()
            self.depth -= 1
            return Not(operand, (start, operand.span[1]))
        return self.comparison()

    def comparison(self) -> Expr:
        left = self.operand()
        op: CompareOp | None = None
        if self.tok.kind == "op" and self.tok.text in _CMP:
            op = self.advance().text  # type: ignore[assignment]
        elif self.at("keyword", "in"):
            self.advance()
            op = "in"
        elif self.at("keyword", "not"):
            not_tok = self.advance()
            if not self.at("keyword", "in"):
                raise self.error(
                    "`not` here must be followed by `in` (write `not` before a condition "
                    "to negate it)",
                    not_tok,
                    expected=("`not in`",),
                )
            self.advance()
            op = "not in"
        if op is None:
            return left
        right = self.operand()
        if (self.tok.kind == "op" and self.tok.text in _CMP) or self.at("keyword", "in"):
            raise self.error("comparisons cannot be chained; join them with `and`")
        return Comparison(op, left, right, (left.span[0], right.span[1]))

    def operand(self) -> Expr:
        tok = self.tok
        if tok.kind == "keyword":
            if tok.text in ("true", "false"):
                self.advance()
                return Literal_(tok.text == "true", (tok.start, tok.end))
            if tok.text == "exists":
                self.advance()
                if self.tok.kind != "ident":
                    raise self.error(
                        f"`exists` needs a path, found {_describe(self.tok)}",
                        expected=("a path such as steps.tp_bisect.output.culprit",),
                    )
                path = self.path()
                return Exists(path, (tok.start, path.span[1]))
            raise self.error(f"expected a value, found the keyword {tok.text!r}", expected=_VALUE)
        if tok.kind == "ident":
            return self.path()
        if tok.kind in ("int", "decimal"):
            return self.number(negative_from=None)
        if tok.kind == "string":
            self.advance()
            return Literal_(tok.value, (tok.start, tok.end))
        if tok.kind == "op":
            if tok.text == "-":
                self.advance()
                if self.tok.kind not in ("int", "decimal"):
                    raise self.error(
                        "'-' must be followed by a number (there is no arithmetic)",
                        expected=("a number",),
                    )
                return self.number(negative_from=tok.start)
            if tok.text == "(":
                self.advance()
                self.enter()
                inner = self.or_expr()
                self.depth -= 1
                if not self.at("op", ")"):
                    raise self.error(
                        f"expected ')' to close the '(' at {_at(self.text, tok.start)}, "
                        f"found {_describe(self.tok)}",
                        expected=("')'",),
                    )
                self.advance()
                return inner
            if tok.text == "[":
                return self.list_expr()
        raise self.error(f"expected a value, found {_describe(tok)}", expected=_VALUE)

    def number(self, *, negative_from: int | None) -> Expr:
        tok = self.advance()
        value: int | Fraction = int(tok.text) if tok.kind == "int" else Fraction(tok.text)
        start = tok.start
        if negative_from is not None:
            value = -value
            start = negative_from
        return Literal_(value, (start, tok.end))

    def path(self) -> Path:
        first = self.advance()
        parts = [first.text]
        end = first.end
        while self.at("op", "."):
            dot = self.advance()
            if self.tok.kind not in ("ident", "keyword"):
                raise self.error(
                    f"expected a name after '.', found {_describe(self.tok)}",
                    expected=("a field name",),
                )
            if self.tok.kind == "keyword":
                raise self.error(
                    f"{self.tok.text!r} is a keyword and cannot be a path segment", dot
                )
            seg = self.advance()
            parts.append(seg.text)
            end = seg.end
        if self.compat:
            parts = [snake_case(p) for p in parts]
        return Path(tuple(parts), (first.start, end))

    def list_expr(self) -> Expr:
        open_tok = self.advance()
        self.enter()
        items: list[Expr] = []
        while not self.at("op", "]"):
            items.append(self.or_expr())
            if self.at("op", ","):
                self.advance()
                continue
            if not self.at("op", "]"):
                raise self.error(
                    f"expected ',' or ']' in the list, found {_describe(self.tok)}",
                    expected=("','", "']'"),
                )
        close = self.advance()
        self.depth -= 1
        return ListExpr(tuple(items), (open_tok.start, close.end))


def parse_expr(text: str, *, compat: bool = False) -> Expr:
    """Parse ``text``; raises only :class:`PredicateSyntaxError` (with a position)."""
    if not isinstance(text, str):
        raise PredicateSyntaxError(str(text), 0, "a condition must be text")
    return _Parser(text, compat=compat).predicate()
