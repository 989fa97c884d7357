"""Options as data: what a use case takes, spelled once and checked in one place.

A use case's request is a frozen dataclass (``requests.py``) whose fields
carry their option as field metadata (:func:`option`): kind, help text, the CLI's
spellings, the MCP argument's name, choices and bounds. :func:`options_of` reads
them back as :class:`Option` rows, from which every shell is derived: the typer
command and the quick parser (``cli/options.py``), the MCP tool schema
(``mcp/args.py``), and the facade's keywords (a test compares them).
:meth:`Option.check` is the one place a value is validated, so one mistake gives
one message, word for word, on the CLI, through the API and over MCP.

Plain data and small checks, importing only ``errors``: a CLI start-up pays nothing
for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .errors import UsageError

__all__ = [
    "AS_OF",
    "MAX_AS_OF",
    "Kind",
    "Option",
    "OptionTable",
    "check_fields",
    "check_text",
    "option",
    "options_of",
]

#: ``text``: a string; ``int``: a whole number; ``flag``: true or false; ``texts``: a
#: list of strings (a repeatable CLI option); ``path``: a file or folder (CLI only)
Kind = Literal["text", "int", "flag", "texts", "path"]

#: the latest ``as_of`` accepted: 9999-12-31T23:59:59Z (later ones overflow dates)
MAX_AS_OF = 253_402_300_799

_WHAT = {
    "text": "text",
    "int": "a whole number",
    "flag": "true or false",
    "texts": "a list of text",
    "path": "a path",
}


def check_text(value: object, what: str) -> str:
    """``value`` with surrounding whitespace removed; an empty one is a usage error."""
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise UsageError(f"the {what} is empty", hint=f"Say in words what the {what} is.")
    return text


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a use case (see the module docstring).

    ``label`` names the option in messages (``the budget``, ``format``); ``unit``
    follows a bound (``tokens``). ``flags`` are the CLI's spellings, long first (none:
    not a CLI option); ``argument`` makes it the CLI's positional argument. ``mcp``
    is the MCP argument's name (None: not an MCP argument); ``api`` says whether
    the facade method takes it as a keyword. ``rule`` is a further check of a
    value that passed the generic ones (it returns the value to keep). A text
    option refuses blank text unless ``blank`` (an empty diff is a change of nothing).
    """

    name: str
    kind: Kind
    help: str
    default: Any = None
    required: bool = False
    blank: bool = False
    label: str = ""
    unit: str = ""
    hint: str | None = None
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    flags: tuple[str, ...] = ()
    argument: bool = False
    mcp: str | None = None
    api: bool = True
    rule: Callable[[Any], Any] | None = None

    @property
    def noun(self) -> str:
        return self.label or self.name

    def check(self, value: Any) -> Any:
        """``value`` checked (and normalised: stripped task text, tuples for lists);
        a bad one is a :class:`UsageError` that says what was wrong and what to do."""
        if value is None and not self.required:
            return None
        if self.kind == "texts" and not isinstance(value, (str, bytes)) and _iterable(value):
            value = tuple(value)
        if not _is_kind(value, self.kind):
            raise UsageError(
                f"{self.noun} must be {_WHAT[self.kind]}, not {type(value).__name__}",
                hint=self.hint,
            )
        if self.kind == "text" and self.required:
            value = check_text(value, self.noun.removeprefix("the "))
        elif self.kind == "text" and not self.blank and not value.strip():
            raise UsageError(f"{self.noun} is empty", hint=self.hint or "Leave it out instead.")
        if self.choices and value not in self.choices:
            raise UsageError(
                f"unknown {self.noun} {value!r}", hint=f"Use one of: {', '.join(self.choices)}."
            )
        if self.kind == "int":
            self._bounds(value)
        return self._ruled(value)

    def _ruled(self, value: Any) -> Any:
        return value if self.rule is None else self.rule(value)

    def _bounds(self, value: int) -> None:
        low, high = self.minimum, self.maximum
        if (low is None or value >= low) and (high is None or value <= high):
            return
        unit = f" {self.unit}" if self.unit else ""
        if low is not None and high is not None:
            span = f"between {low:,} and {high:,}{unit}"
        elif low is not None:
            span = f"at least {low:,}{unit}"
        else:
            span = f"at most {high:,}{unit}"
        raise UsageError(f"{self.noun} must be {span} (got {value:,})", hint=self.hint)

    def spec(self) -> dict[str, Any]:
        """This option as the metadata of a request's field (name and default are the
        field's own)."""
        return {"option": self}


def _iterable(value: object) -> bool:
    try:
        iter(value)  # type: ignore[call-overload]
    except TypeError:
        return False
    return True


def _is_kind(value: object, kind: Kind) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "flag":
        return isinstance(value, bool)
    if kind == "texts":
        return isinstance(value, tuple) and all(isinstance(v, str) for v in value)
    return isinstance(value, str)  # text; a path is a CLI option only, read by the shell


def option(kind: Kind, help: str, **details: Any) -> dict[str, Any]:
    """A request field's metadata: ``field(default=..., metadata=option(...))``."""
    return {"option": Option(name="", kind=kind, help=help, **details)}


@dataclass(frozen=True, slots=True)
class OptionTable:
    """The options of one use case, in field order; ``table["budget"]`` finds one."""

    rows: tuple[Option, ...]

    def __iter__(self) -> Iterator[Option]:
        return iter(self.rows)

    def __getitem__(self, name: str) -> Option:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    def names(self) -> tuple[str, ...]:
        return tuple(row.name for row in self.rows)


def options_of(cls: type) -> OptionTable:
    """The :class:`Option` rows of a request dataclass's fields, named and defaulted
    by the fields themselves (a field without option metadata is not an option)."""
    rows = []
    for f in dataclasses.fields(cls):
        meta: Option | None = f.metadata.get("option")
        if meta is None:
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        rows.append(dataclasses.replace(meta, name=f.name, default=default, required=required))
    return OptionTable(tuple(rows))


def check_fields(value: Any, table: OptionTable) -> None:
    """Check every option field of the frozen dataclass ``value`` (its
    ``__post_init__`` calls this), keeping the normalised values."""
    for row in table:
        given = getattr(value, row.name)
        checked = row.check(given)
        if checked is not given:
            object.__setattr__(value, row.name, checked)


#: when a use case's answer is measured (recency): epoch seconds, default now
AS_OF = Option(
    name="as_of",
    kind="int",
    help="Epoch seconds that recency is measured against (default: now); "
    "pass the same value to reproduce a result.",
    label="as_of",
    hint="Pass a time such as 1767225600 (2026-01-01), or leave it out for now.",
    minimum=0,
    maximum=MAX_AS_OF,
    flags=("--as-of",),
    mcp="as_of",
)
