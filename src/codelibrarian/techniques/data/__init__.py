"""The packaged technique library: TOML files read through one loader.

``primitives/*.toml`` (one primitive each), ``patterns/*.toml``,
``compositions/*.toml``, ``presets/*.toml`` (LCL programs) and
``relationships.toml`` (edges between primitives that hold in every
composition). Files are read with :mod:`importlib.resources`, in name order, so
the library is the same wherever the package is installed.

:func:`builtin_primitives` and :func:`builtin_operators` are what the
``codelibrarian.primitives`` / ``codelibrarian.operators`` entry points named
``builtin`` load — the built-ins register exactly as a plugin would.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from importlib import resources
from typing import Any

from ..diagnostics import Diagnostic, LclError, Loc
from ..locate import Positions, locate_toml
from ..operators import builtin_operators

__all__ = ["DataFile", "builtin_operators", "builtin_primitives", "data_files", "read_toml"]

DataFile = tuple[str, dict[str, Any], Positions]


def read_toml(text: str, source: str) -> tuple[dict[str, Any] | None, Positions, list[Diagnostic]]:
    """Parse TOML text; a syntax error becomes a positioned diagnostic."""
    positions = locate_toml(text, source)
    try:
        return tomllib.loads(text), positions, []
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", 0) or 0
        col = getattr(exc, "colno", 0) or 0
        message = str(exc).split(" (at line")[0]
        return (
            None,
            positions,
            [Diagnostic("lcl_toml_syntax", f"not valid TOML: {message}", Loc(source, line, col))],
        )


def data_files(kind: str) -> Iterator[DataFile]:
    """``(source name, table, positions)`` for every packaged file of ``kind``."""
    root = resources.files(__package__)
    entries = (
        [root.joinpath("relationships.toml")]
        if kind == "relationships"
        else sorted(
            (e for e in root.joinpath(kind).iterdir() if e.name.endswith(".toml")),
            key=lambda e: e.name,
        )
    )
    for entry in entries:
        source = (
            f"techniques/data/{entry.name if kind == 'relationships' else kind + '/' + entry.name}"
        )
        data, positions, diags = read_toml(entry.read_text(encoding="utf-8"), source)
        if diags or data is None:
            raise LclError(diags)
        yield source, data, positions


def builtin_primitives() -> tuple[Any, ...]:
    """The built-in primitives (the ``builtin`` entry point of ``codelibrarian.primitives``).

    Returns the raw tables with their positions; the registry reads and checks them
    like any plugin's.
    """
    return tuple(data_files("primitives"))
