"""Built-in provider probes. Each registers through the ``codelibrarian.providers``
entry-point group, exactly as a third-party plugin would (see ``pyproject.toml``)."""

from __future__ import annotations

__all__: list[str] = []
