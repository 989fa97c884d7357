"""MCP tool arguments derived from option rows (``options.py``).

A tool's argument that stands for a request's option is annotated
``Annotated[T, arg(ROW)]``: :func:`arg` gives the pydantic ``Field`` with the row's
help text as the description and its rules (choices, bounds, a required text's
``minLength``) as JSON Schema for the client to read. The rules themselves are
checked where the request is made, as for the CLI and the API, so a bad value
gets the same message on every shell; only what the MCP tool alone limits
(``enforced``: the length of a text, the number of files) is refused by the
server's argument check. ``tests/mcp/test_args.py`` checks each ``T`` against
the row's kind.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..options import Option

__all__ = ["arg", "python_type"]


def python_type(row: Option) -> Any:
    """The Python type an argument of ``row`` has (None allowed when it is optional)."""
    base: Any = {"text": str, "int": int, "flag": bool, "texts": tuple[str, ...]}[row.kind]
    optional = not row.required and row.default is None
    return base | None if optional else base


def arg(row: Option, *, choices: tuple[str, ...] | None = None, **enforced: Any) -> Any:
    """The ``Field`` of an MCP argument standing for ``row`` (``choices``: the
    tool's narrower choices; ``enforced``: ``Field`` limits only this tool has)."""
    schema: dict[str, Any] = {}
    allowed = row.choices if choices is None else choices
    if allowed:
        schema["enum"] = list(allowed)
    if row.minimum is not None and "ge" not in enforced:
        schema["minimum"] = row.minimum
    if row.maximum is not None and "le" not in enforced:
        schema["maximum"] = row.maximum
    if row.required and row.kind == "text" and "min_length" not in enforced:
        schema["minLength"] = 1
    return Field(description=row.help, json_schema_extra=schema or None, **enforced)
