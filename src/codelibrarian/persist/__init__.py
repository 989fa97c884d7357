"""The disk side of the composer: on-disk composition cache and the decision log.

Both take their directory as an argument (``State(root).cache_dir`` and
``State(root).decisions_dir``); time comes in as epoch seconds.
"""

from __future__ import annotations

from .cache import DiskCache, TieredCache
from .decisions import DecisionLog

__all__ = ["DecisionLog", "DiskCache", "TieredCache"]
