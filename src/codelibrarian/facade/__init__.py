"""The parts of the :class:`~codelibrarian.api.Librarian` facade, one per concern.

``Librarian`` is assembled from these mixins so each concern's methods sit together
and ``api.py`` keeps only opening a workspace, indexing, composing and the read-only
views. Every mixin only delegates: the work lives in the package that owns it
(``service/``, ``packs/``, ``execution/``, ``planning/``). Each is wrapped by
:func:`~codelibrarian.boundary.guard_methods`, so its public methods raise only
:mod:`codelibrarian.errors` types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..service.compose import ComposeService
    from ..service.workspace import WorkspaceSession


class FacadePart:
    """What every part reads from the assembled ``Librarian``."""

    _ws: WorkspaceSession

    if TYPE_CHECKING:

        @property
        def _composer(self) -> ComposeService:
            """Compose orchestration (``Librarian`` loads it on first use)."""
