"""Stable, path-free artifact ids and workspace fingerprints (HMAC-SHA256).

The seed hashed ``kind:lane:pathHmac:chunk``, so two artifacts of one kind and
lane in one file (two violations in ``src/auth.py``) got the same id. Here the
HMAC covers every component, length-prefixed so no two component lists can
serialize alike, plus a caller-chosen ``discriminator`` (a violation id, a hunk
header, a symbol name) that separates artifacts sharing a path and chunk.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

from ..errors import UsageError

__all__ = ["ID_LENGTH", "artifact_id", "workspace_fingerprint"]

ID_LENGTH = 24
_VERSION = b"codelibrarian-artifact-v1"


def _frame(parts: Iterable[str]) -> bytes:
    out = bytearray()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        out += len(data).to_bytes(8, "big") + data
    return bytes(out)


def artifact_id(  # noqa: PLR0917 - positional order is the documented contract
    secret: bytes,
    kind: str,
    lane: str,
    rel_path: str,
    chunk_index: int = 0,
    discriminator: str = "",
) -> str:
    """24 hex characters (96 bits), stable per workspace secret, revealing no path."""
    if not secret:
        raise UsageError(
            "the workspace secret is empty",
            hint="Pass State(root).secret(); it is created once per workspace.",
        )
    if chunk_index < 0:
        raise UsageError(f"chunk_index must be >= 0, got {chunk_index}")
    message = _VERSION + _frame((kind, lane, rel_path, str(chunk_index), discriminator))
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:ID_LENGTH]


def workspace_fingerprint(secret: bytes, files: Iterable[tuple[str, str]]) -> str:
    """HMAC over the sorted ``(relative path, content hash)`` listing: 32 hex characters."""
    mac = hmac.new(secret, b"codelibrarian-workspace-v1", hashlib.sha256)
    for path, content_hash in sorted(files):
        mac.update(_frame((path, content_hash)))
    return mac.hexdigest()[:32]
