"""The repository as files on disk: listing, ignore rules, git, the state folder."""

from __future__ import annotations

from .files import ScanResult, Skip, WorkspaceFile, content_hash, read_text, scan_workspace
from .state import State

__all__ = [
    "ScanResult",
    "Skip",
    "State",
    "WorkspaceFile",
    "content_hash",
    "read_text",
    "scan_workspace",
]
