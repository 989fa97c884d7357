"""The one gate every text the engine hands out passes: step contexts, step outputs,
handouts, handoff notes, history entries and what the MCP tools return.

:func:`gate_text` redacts secrets span by span with the workspace secret scanner
(``workspace/secrets.py``), the same scanner the composer's policy lane uses.
Everything in :mod:`codelibrarian.execution` calls this one function, so moving
to a shared gate means changing only this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..workspace.secrets import redact, scan_text

__all__ = ["gate_text", "gate_value"]


def gate_text(text: str) -> str:
    """``text`` with every secret the scanner finds replaced by ``[REDACTED:<rule>]``."""
    findings = scan_text(text)
    return redact(text, findings) if findings else text


def gate_value(value: Any) -> Any:
    """A JSON-like value with every string passed through :func:`gate_text`."""
    if isinstance(value, str):
        return gate_text(value)
    if isinstance(value, Mapping):
        return {str(k): gate_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [gate_value(v) for v in value]
    return value
