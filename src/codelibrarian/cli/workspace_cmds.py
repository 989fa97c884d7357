"""``librarian init | doctor | scan | tokens`` (being written)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Register this module's commands on ``app``."""
