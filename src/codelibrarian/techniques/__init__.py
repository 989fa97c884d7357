"""The technique library and LCL: what a workflow *is*, as checked data (seed 004).

Pure: values in, values out; the only I/O is reading the packaged TOML data
(``data/``) through one loader. The parts:

=====================  ====================================================
``predicates``         the condition language: parse, typecheck, evaluate
``facts``              the typed environment conditions are checked against
``primitives``         techniques: executor, schemas, contract, recipe
``contracts``          pre/postconditions, invariants, ``ContractValidator``
``operators``          the twelve operators' parameter models
``tree``               compositions' immutable trees with derived ids
``composition``        compositions, relationships, selection metadata
``patterns``           the pattern catalog
``templates``          structure templates and ``apply_template``
``relationships``      relationship checks
``strata``             stratum inference and execution policies
``registry``           the library, loaded through the entry-point groups
``lcl``                the language: builder, TOML/JSON surfaces, compile
=====================  ====================================================

See docs/lcl.md and the generated catalog docs/techniques.md. Names are imported
from their modules (``from codelibrarian.techniques.lcl import compose``) or, for
the common ones, from here on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ContractValidator",
    "Diagnostic",
    "LclError",
    "Library",
    "default_library",
    "lcl",
]

_LAZY = {
    "ContractValidator": ("contracts", "ContractValidator"),
    "Diagnostic": ("diagnostics", "Diagnostic"),
    "LclError": ("diagnostics", "LclError"),
    "Library": ("registry", "Library"),
    "default_library": ("registry", "default_library"),
}


def __getattr__(name: str) -> Any:
    if name == "lcl":
        return importlib.import_module(f"{__name__}.lcl")
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
