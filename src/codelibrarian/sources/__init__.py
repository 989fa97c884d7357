"""Context sources: one per lane, each turning a trigger into composer candidates.

Built-in sources (registered through the ``codelibrarian.sources`` entry-point
group, like any plug-in): ``policy``, ``rules``, ``local``, ``structure``,
``retrieved`` and ``history``. Their scoring rules are in each module's
docstring and in ``docs/compose.md``.
"""

from __future__ import annotations

from .base import BUILTIN_SOURCES, ENTRY_POINT_GROUP, Source, SourceContext, load_sources

__all__ = ["BUILTIN_SOURCES", "ENTRY_POINT_GROUP", "Source", "SourceContext", "load_sources"]
