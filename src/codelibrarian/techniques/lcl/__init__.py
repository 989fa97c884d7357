"""LCL, the Librarian Configuration Language: compose existing techniques, never create new ones.

Three surfaces over one AST (:mod:`.ast`):

* Python — ``lcl.compose("x").use("pattern_bug_investigation").when(...).add(...).done()``
  (:mod:`.builder`), plus the formal-core constructors ``primitive``, ``pattern``,
  ``composition``, ``choose`` and ``operator``;
* TOML — preset files and ``[presets.<name>]`` in ``librarian.toml`` (:mod:`.surface`);
* the seed's JSON preset form (camelCase keys, ``===``), read in compatibility mode.

:func:`compile` turns a program into a :class:`CompiledComposition` (tree with
stable ids, stratum, execution policy, decisions, warnings); :func:`check` lists
every diagnostic without raising. docs/lcl.md is the full reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..diagnostics import Diagnostic
from ..facts import Facts
from ..registry import Library
from .ast import Program
from .builder import ProgramBuilder, choose, compose, composition, operator, pattern, primitive
from .compile import CompiledComposition, check_program, compile_composition, compile_program
from .evaluate import Decision
from .presets import builtin_presets, programs_from_text

__all__ = [
    "CompiledComposition",
    "Decision",
    "Program",
    "ProgramBuilder",
    "builtin_presets",
    "check",
    "choose",
    "compile",
    "compile_composition",
    "compose",
    "composition",
    "operator",
    "pattern",
    "primitive",
    "programs_from_text",
]


def compile(
    program: Program | str,
    *,
    facts: Facts | Mapping[str, Any] | None = None,
    library: Library | None = None,
) -> CompiledComposition:
    """Compile a program, or a built-in preset / composition / pattern by name."""
    if isinstance(program, str):
        program = _named(program, library)
    return compile_program(program, facts=facts, library=library)


def check(program: Program, *, library: Library | None = None) -> tuple[Diagnostic, ...]:
    return check_program(program, library=library)


def _named(name: str, library: Library | None) -> Program:
    presets = builtin_presets()
    if name in presets:
        return presets[name]
    return compose(name).use(name).done()
