"""Package attributes that load their submodule on first use (PEP 562).

A package ``__init__`` that re-exports its submodules' names would import all of
them on ``import package.one_module``; with ``__getattr__ = lazy_getattr(__name__,
HOMES)`` each name loads its submodule when it is first read (and is kept).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(
    package: str, homes: Mapping[str, str], *, module: str | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module`` (default: ``package`` itself): ``name``
    comes from ``package.<homes[name]>``."""
    owner = module or package

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {owner!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[owner], name, value)
        return value

    return __getattr__
