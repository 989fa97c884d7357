"""Gitignore-style matching: ``.librarianignore``, config patterns, nested ``.gitignore``.

Two pieces:

* :class:`RootRules` — patterns anchored at the repository root
  (``.librarianignore`` plus ``[workspace].ignore``), applied in every mode.
* :class:`GitignoreStack` — the ``.gitignore`` files met while walking a
  folder that is not a git repository. Each file's patterns are relative to
  its own folder, and a deeper file overrides a shallower one, as in git.

Paths given to the matchers are repo-relative POSIX strings; folders end in ``/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

__all__ = [
    "ALWAYS_EXCLUDED",
    "LIBRARIANIGNORE",
    "GitignoreStack",
    "RootRules",
    "is_always_excluded",
    "read_patterns",
]

LIBRARIANIGNORE = ".librarianignore"
#: folder names never listed, whatever the ignore files say
ALWAYS_EXCLUDED: frozenset[str] = frozenset({".git", ".librarian"})


def is_always_excluded(rel: str) -> bool:
    """True when any component of ``rel`` is ``.git`` or ``.librarian``."""
    return any(part in ALWAYS_EXCLUDED for part in rel.strip("/").split("/"))


def read_patterns(path: Path) -> list[str]:
    """Lines of an ignore file (missing or unreadable file: no patterns)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()


@dataclass(frozen=True, slots=True)
class RootRules:
    """Root-anchored patterns from ``.librarianignore`` and the config."""

    spec: GitIgnoreSpec

    @classmethod
    def load(cls, root: Path, extra: Iterable[str] = ()) -> RootRules:
        lines = read_patterns(root / LIBRARIANIGNORE) + list(extra)
        return cls(GitIgnoreSpec.from_lines(lines))

    def ignored(self, rel: str) -> bool:
        """True when ``rel`` (or, for a file, one of its parent folders) is ignored."""
        if self.spec.match_file(rel):
            return True
        parts = rel.rstrip("/").split("/")
        return any(self.spec.match_file("/".join(parts[:k]) + "/") for k in range(1, len(parts)))


@dataclass(slots=True)
class GitignoreStack:
    """The ``.gitignore`` files that apply inside the folder being walked."""

    #: (folder prefix ending in "/" or "" for the root, spec), shallow to deep
    layers: list[tuple[str, GitIgnoreSpec]] = field(default_factory=list)

    def push_dir(self, root: Path, rel_dir: str) -> int:
        """Read ``rel_dir/.gitignore`` if present; returns how many layers to pop later."""
        prefix = f"{rel_dir}/" if rel_dir else ""
        lines = read_patterns(root / prefix / ".gitignore")
        if not any(line.strip() and not line.startswith("#") for line in lines):
            return 0
        self.layers.append((prefix, GitIgnoreSpec.from_lines(lines)))
        return 1

    def pop(self, count: int) -> None:
        for _ in range(count):
            self.layers.pop()

    def ignored(self, rel: str) -> bool:
        """Does the deepest matching layer ignore ``rel`` (a file, or a folder ending "/")?"""
        for prefix, spec in reversed(self.layers):
            if prefix and not rel.startswith(prefix):
                continue
            result = spec.check_file(rel[len(prefix) :])
            if result.include is not None:
                return bool(result.include)
        return False
