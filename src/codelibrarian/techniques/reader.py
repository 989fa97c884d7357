"""Checked reading of TOML/JSON tables into values, collecting positioned diagnostics.

Every loader (primitives, patterns, compositions, LCL programs) reads its tables
through a :class:`Reader`: a wrong type, an unknown key (with the closest valid
key) or a missing required key becomes a :class:`Diagnostic` at the value's
``file:line:column`` — and reading goes on, so one run reports every problem.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from .diagnostics import Diagnostic, Loc, closest
from .locate import Positions, keypath

__all__ = ["Reader"]

Key = tuple[str | int, ...]
_MISSING = object()


class Reader:
    """A view of one table at ``path`` inside a located document."""

    def __init__(
        self,
        data: Mapping[str, Any],
        *,
        positions: Positions | None,
        diags: list[Diagnostic],
        path: Key = (),
        source: str = "",
    ) -> None:
        self.data = data
        self.positions = positions
        self.diags = diags
        self.path = path
        self.source = source or (positions.source if positions else "")

    # -- positions and errors -------------------------------------------------

    def loc(self, *sub: str | int) -> Loc:
        if self.positions is not None:
            return self.positions.loc(*self.path, *sub)
        return Loc(self.source, 0, 0, keypath((*self.path, *sub)))

    def error(
        self, code: str, message: str, *sub: str | int, suggestions: Sequence[str] = ()
    ) -> None:
        self.diags.append(Diagnostic(code, message, self.loc(*sub), tuple(suggestions)))

    def known(
        self,
        value: str,
        pool: Collection[str],
        *sub: str | int,
        what: str = "primitive",
        code: str = "lcl_primitive_not_found",
    ) -> bool:
        """Is ``value`` one of ``pool``? If not, an error with the closest names."""
        if value in pool:
            return True
        self.error(code, f"unknown {what} {value!r}", *sub, suggestions=closest(value, pool))
        return False

    def warn(self, code: str, message: str, *sub: str | int) -> None:
        self.diags.append(Diagnostic(code, message, self.loc(*sub), severity="warning"))

    def child(self, data: Mapping[str, Any], *sub: str | int) -> Reader:
        return Reader(
            data,
            positions=self.positions,
            diags=self.diags,
            path=(*self.path, *sub),
            source=self.source,
        )

    # -- keys -----------------------------------------------------------------

    def only(self, allowed: Iterable[str], *, what: str = "here") -> None:
        valid = sorted(set(allowed))
        for key in sorted(self.data):
            if key not in valid:
                self.error(
                    "lcl_unknown_key",
                    f"unknown key {key!r} {what}; valid keys: {', '.join(valid)}",
                    key,
                    suggestions=closest(key, valid),
                )

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def _get(self, key: str, required: bool, kind: str) -> Any:
        value = self.data.get(key, _MISSING)
        if value is _MISSING and required:
            self.error("lcl_missing_key", f"missing required key {key!r} ({kind})", key)
        return value

    # -- typed values -----------------------------------------------------------

    def text(self, key: str, *, required: bool = False, default: str = "") -> str:
        value = self._get(key, required, "text")
        if value is _MISSING:
            return default
        if not isinstance(value, str):
            self.error("lcl_wrong_type", f"{key!r} must be text, not {type(value).__name__}", key)
            return default
        return value

    def choice(
        self, key: str, choices: Sequence[str], *, required: bool = False, default: str = ""
    ) -> str:
        value = self.text(key, required=required, default=default)
        if value and value not in choices:
            self.error(
                "lcl_bad_value",
                f"{key!r} is {value!r}; use one of: {', '.join(choices)}",
                key,
                suggestions=closest(value, choices),
            )
            return default
        return value

    def strs(self, key: str, *, required: bool = False) -> tuple[str, ...]:
        value = self._get(key, required, "a list of text")
        if value is _MISSING:
            return ()
        if isinstance(value, str) or not isinstance(value, list | tuple):
            self.error("lcl_wrong_type", f'{key!r} must be a list of text, e.g. ["a", "b"]', key)
            return ()
        out: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.error("lcl_wrong_type", f"item {i} of {key!r} must be text", key, i)
                continue
            out.append(item)
        return tuple(out)

    def choices(
        self, key: str, vocabulary: Sequence[str], *, required: bool = False
    ) -> tuple[str, ...]:
        items = self.strs(key, required=required)
        out = []
        for i, item in enumerate(items):
            if item not in vocabulary:
                self.error(
                    "lcl_bad_value",
                    f"{item!r} in {key!r} is not in the vocabulary ({', '.join(vocabulary)})",
                    key,
                    i,
                    suggestions=closest(item, vocabulary),
                )
            else:
                out.append(item)
        return tuple(out)

    def integer(
        self,
        key: str,
        *,
        required: bool = False,
        default: int | None = None,
        minimum: int | None = None,
    ) -> int | None:
        value = self._get(key, required, "a whole number")
        if value is _MISSING:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.error("lcl_wrong_type", f"{key!r} must be a whole number, not {value!r}", key)
            return default
        if minimum is not None and value < minimum:
            self.error("lcl_bad_value", f"{key!r} must be at least {minimum} (got {value})", key)
            return default
        return value

    def flag(self, key: str, *, default: bool = False) -> bool:
        value = self.data.get(key, _MISSING)
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            self.error("lcl_wrong_type", f"{key!r} must be true or false", key)
            return default
        return value

    def per_mille(self, key: str, *, default: int) -> int:
        """A weight written as a decimal in [0, 1] (``0.7``) as an exact per-mille integer."""
        value = self.data.get(key, _MISSING)
        if value is _MISSING:
            return default
        try:
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise InvalidOperation
            d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        except (InvalidOperation, ValueError):
            self.error("lcl_wrong_type", f"{key!r} must be a number between 0 and 1", key)
            return default
        scaled = d * 1000
        if not (0 <= d <= 1) or scaled != scaled.to_integral_value():
            self.error(
                "lcl_bad_value",
                f"{key!r} must be between 0 and 1 with at most three decimals (got {value})",
                key,
            )
            return default
        return int(scaled)

    def table(self, key: str, *, required: bool = False) -> Reader | None:
        value = self._get(key, required, "a table")
        if value is _MISSING:
            return None
        if not isinstance(value, Mapping):
            self.error("lcl_wrong_type", f"{key!r} must be a table", key)
            return None
        return self.child(value, key)

    def tables(self, key: str) -> list[Reader]:
        value = self.data.get(key, _MISSING)
        if value is _MISSING:
            return []
        if not isinstance(value, list):
            self.error("lcl_wrong_type", f"{key!r} must be an array of tables ([[{key}]])", key)
            return []
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                self.error("lcl_wrong_type", f"item {i} of {key!r} must be a table", key, i)
                continue
            out.append(self.child(item, key, i))
        return out
