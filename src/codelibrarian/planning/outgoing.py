"""The one door planning's documents leave by: every string passes the secret gate.

Plans quote the intent and composed queries, advice names files, evolution reports
carry composition names — any of them could carry a secret a user pasted. Every
plan, advice and evolution document (CLI output, MCP results, files written) goes
through :func:`outgoing`, which hands it to :class:`codelibrarian.gate.SecretGate`
(the gate every text leaving the library passes): each secret span in every string
is replaced by ``[REDACTED:<rule>]``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["outgoing"]


def outgoing(doc: Any) -> Any:
    """``doc`` with every secret span in every string replaced by ``[REDACTED:<rule>]``."""
    from ..gate import SecretGate

    return SecretGate().clean_value(doc, surface="planning")
