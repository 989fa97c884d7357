"""Presets: named LCL programs — built in, in ``librarian.toml`` or in ``.librarian/presets/``.

This module is pure: it turns *texts and tables* into programs and programs
back into canonical TOML. Reading the workspace (``.librarian/presets/*.toml``,
the config file) is the shell's job (``codelibrarian.workspace.presets``).

The three seed presets ship built in (``techniques/data/presets/``):
``preset_quick_debug``, ``preset_security_review`` and
``preset_zero_knowledge_bootstrap``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, LclError
from ..locate import locate_toml
from ..reader import Reader
from .ast import Program
from .surface import (
    canonical_table,
    programs_from_json,
    programs_from_toml,
    read_program,
    snake_keys,
)

__all__ = [
    "PresetSource",
    "builtin_preset_texts",
    "builtin_presets",
    "preset_toml",
    "presets_from_config",
    "programs_from_text",
    "to_toml",
]


@dataclass(frozen=True, slots=True)
class PresetSource:
    """Where a preset's text came from: ``builtin``, ``config`` or ``workspace``."""

    name: str
    kind: str
    source: str
    text: str


def programs_from_text(text: str, source: str) -> tuple[list[Program], list[Diagnostic]]:
    """Programs of a ``.toml`` or ``.json`` document (by the source's extension)."""
    if source.endswith(".json"):
        return programs_from_json(text, source)
    return programs_from_toml(text, source)


@functools.cache
def builtin_preset_texts() -> tuple[PresetSource, ...]:
    from importlib import resources

    root = resources.files("codelibrarian.techniques.data").joinpath("presets")
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            name = entry.name.removesuffix(".toml")
            out.append(
                PresetSource(
                    name,
                    "builtin",
                    f"techniques/data/presets/{entry.name}",
                    entry.read_text(encoding="utf-8"),
                )
            )
    return tuple(out)


def builtin_presets() -> dict[str, Program]:
    """The built-in presets by name (an error in them raises :class:`LclError`)."""
    out: dict[str, Program] = {}
    for src in builtin_preset_texts():
        programs, diags = programs_from_toml(src.text, src.source)
        if any(d.severity == "error" for d in diags):
            raise LclError(diags)
        for p in programs:
            out[p.name] = p
    return out


def presets_from_config(
    table: Mapping[str, Any], source: str, text: str = ""
) -> tuple[list[Program], list[Diagnostic]]:
    """Programs of ``[presets.<name>]`` in the config (already parsed; ``text`` is the
    file's text, for positions)."""
    diags: list[Diagnostic] = []
    positions = locate_toml(text, source) if text else None
    prefix: tuple[str, ...] = ("tool", "librarian") if source.endswith("pyproject.toml") else ()
    out = []
    root = Reader({"presets": dict(table)}, positions=positions, diags=diags, source=source)
    root.path = prefix
    presets = root.table("presets")
    if presets is not None:
        for key in sorted(presets.data):
            sub = presets.table(key)
            if sub is not None and (p := read_program(sub, name=key)) is not None:
                out.append(p)
    return out, diags


def _value(v: Any) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def to_toml(table: Mapping[str, Any]) -> str:
    """Canonical TOML of a program table: scalars and inline tables first, then
    ``[name]`` tables, then ``[[name]]`` arrays — keys in the order given."""
    head: list[str] = []
    tables: list[str] = []
    arrays: list[str] = []
    for key, value in table.items():
        if isinstance(value, Mapping) and value:
            tables.append(f"\n[{key}]")
            tables += [f"{k} = {_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and all(isinstance(x, Mapping) for x in value):
            for item in value:
                arrays.append(f"\n[[{key}]]")
                nested = {k: v for k, v in item.items() if isinstance(v, Mapping) and k == "else"}
                arrays += [f"{k} = {_value(v)}" for k, v in item.items() if k not in nested]
                for k, v in nested.items():
                    arrays.append(f"[{key}.{k}]")
                    arrays += [f"{kk} = {_value(vv)}" for kk, vv in v.items()]
        elif value not in (None, [], {}):
            head.append(f"{key} = {_value(value)}")
    return "\n".join(head + tables + arrays) + "\n"


def preset_toml(text: str, source: str, program: str, name: str) -> str:
    """Canonical TOML of the program ``program`` in a TOML/JSON document, renamed ``name``.

    The seed's JSON form comes out in the TOML form; the result reads back as the
    same program (checked).
    """
    import json
    import tomllib

    is_json = source.endswith(".json")
    data: Any = snake_keys(json.loads(text)) if is_json else tomllib.loads(text)
    if "base" not in data:
        data = data.get("presets", data)[program]
    table = canonical_table(data, compat=is_json)
    table = {"name": name, **{k: v for k, v in table.items() if k != "name"}}
    out = to_toml(table)
    programs, diags = programs_from_toml(out, f"{name}.toml")
    if any(d.severity == "error" for d in diags) or len(programs) != 1:
        raise LclError(diags)  # pragma: no cover - to_toml writes what the reader reads
    return out
