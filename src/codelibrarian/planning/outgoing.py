"""The one door planning's documents leave by: every string passes the secret scanner.

Plans quote the intent and composed queries, advice names files, evolution reports
carry composition names — any of them could carry a secret a user pasted. Every
plan, advice and evolution document (CLI output, MCP results, files written) goes
through :func:`outgoing`, which redacts each secret span in every string of the
document (``workspace.secrets``, the scanner the policy lane uses). One function,
so the whole of planning re-points at once when the gate moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["outgoing"]


def outgoing(doc: Any) -> Any:
    """``doc`` with every secret span in every string replaced by ``[REDACTED:<rule>]``."""
    from ..workspace.secrets import redact, scan_text

    if isinstance(doc, str):
        found = scan_text(doc)
        return redact(doc, found) if found else doc
    if isinstance(doc, Mapping):
        return {k: outgoing(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [outgoing(v) for v in doc]
    return doc
