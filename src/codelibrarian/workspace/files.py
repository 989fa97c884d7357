"""List the repository's files the way a user expects, recording every skip.

In a git work tree the listing is what git would show: tracked files plus
untracked files that are not ignored. Elsewhere it is a walk that honours
``.gitignore`` files at every level. Both honour ``.librarianignore`` and the
config's ``[workspace].ignore`` patterns, and never list ``.git/`` or
``.librarian/``.

A file is skipped, with a reason, when it is binary (a NUL byte in its first
8 KiB), larger than ``max_file_bytes``, a symlink loop, a symlink resolving
outside the repository, or unreadable. ``not_a_file`` covers listed entries
that are not regular files (submodules, symlinks to folders, nested
repositories). Files that cannot help an agent (vendored, generated, minified,
very long lines) are skipped too, as ``skips.py`` decides. Text that is not
valid UTF-8 is still listed and is noted as ``decoded_with_replacement``.

Files are identified by ``blob_id``: git's object id of their bytes, the same
inside and outside a git repository, so a parse can be shared by every
checkout that holds the same content.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..config import WorkspaceConfig
from ..errors import UsageError, WorkspaceError
from . import git
from .ignore import GitignoreStack, RootRules, is_always_excluded
from .skips import CONTENT_SKIPS, Attributes, skip_for_content, skip_for_path

__all__ = [
    "SKIP_REASONS",
    "Candidates",
    "ScanResult",
    "Skip",
    "WorkspaceFile",
    "blob_id",
    "classify_content",
    "content_hash",
    "list_candidates",
    "probe",
    "read_candidate",
    "read_text",
    "scan_workspace",
]

#: every reason a listed path can be skipped for
SKIP_REASONS: tuple[str, ...] = (
    "binary",
    "too_large",
    "symlink_loop",
    "symlink_outside_repo",
    "unreadable",
    "not_a_file",
    *CONTENT_SKIPS,
)
DECODED_WITH_REPLACEMENT = "decoded_with_replacement"
_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    path: str  # repo-relative POSIX path
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skip:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    root: Path
    files: tuple[WorkspaceFile, ...]  # sorted by path
    skipped: tuple[Skip, ...]  # sorted by (path, reason)
    notes: tuple[Skip, ...]  # listed files with a remark, e.g. decoded_with_replacement
    is_git: bool

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def skip_counts(self) -> dict[str, int]:
        """Skips per reason, in ``SKIP_REASONS`` order, zero counts omitted."""
        counts = dict.fromkeys(SKIP_REASONS, 0)
        for skip in self.skipped:
            counts[skip.reason] = counts.get(skip.reason, 0) + 1
        return {k: v for k, v in counts.items() if v}


def content_hash(data: bytes) -> str:
    """Stable content id: blake2b, 16-byte digest, 32 hex characters."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def blob_id(data: bytes) -> str:
    """Git's object id of ``data`` as a blob: sha1 of ``b"blob <size>\\0" + data``, 40 hex."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def classify_content(rel: str, data: bytes, config: WorkspaceConfig) -> str | None:
    """The skip reason of a file given its bytes (binary, generated, ...), or None."""
    if b"\0" in data[:_SNIFF_BYTES]:
        return "binary"
    return skip_for_content(rel, data, enabled=config.skip, max_line_chars=config.max_line_chars)


def _check_rel(rel: str) -> str:
    posix = PurePosixPath(rel)
    if not rel or posix.is_absolute() or ".." in posix.parts:
        raise UsageError(
            f"{rel!r} is not a path inside the repository.",
            hint="Pass a repo-relative POSIX path such as 'src/app.py'.",
        )
    return posix.as_posix()


def read_text(root: Path, rel: str) -> tuple[str, bool]:
    """The text of ``root/rel`` and whether invalid UTF-8 had to be replaced."""
    path = root / _check_rel(rel)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WorkspaceError(
            f"cannot read {rel}: {exc.strerror or exc}.",
            hint="Check that the file exists and is readable; re-run `librarian scan`.",
        ) from None
    return _decode(data)


def _decode(data: bytes) -> tuple[str, bool]:
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


# ---------------------------------------------------------------- candidates


def _git_candidates(root: Path) -> list[str]:
    out = git._run(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({os.fsdecode(p) for p in out.split(b"\0") if p})


def _walk_candidates(root: Path, rules: RootRules) -> tuple[list[str], list[str]]:
    """Paths under ``root`` not ignored by nested ``.gitignore`` files, and unreadable folders."""
    found: list[str] = []
    unreadable: list[str] = []
    stack = GitignoreStack()

    def visit(rel_dir: str) -> None:
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            unreadable.append(rel_dir)
            return
        pushed = stack.push_dir(root, rel_dir)
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name in (".git", ".librarian"):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if stack.ignored(rel + "/") or rules.ignored(rel + "/"):
                    continue
                visit(rel)
            elif not stack.ignored(rel):
                found.append(rel)
        stack.pop(pushed)

    visit("")
    return found, unreadable


@dataclass(frozen=True, slots=True)
class Candidates:
    """Repo-relative paths to classify, folders that could not be read, and the mode."""

    paths: tuple[str, ...]
    unreadable_dirs: tuple[str, ...]
    is_git: bool


def list_candidates(root: Path, config: WorkspaceConfig | None = None) -> Candidates:
    """Paths to consider (before skips), honouring every ignore rule."""
    cfg = config or WorkspaceConfig()
    rules = RootRules.load(root, cfg.ignore)
    is_git = git.is_git_repo(root)
    unreadable: list[str] = []
    if is_git:
        raw = _git_candidates(root)
    else:
        raw, unreadable = _walk_candidates(root, rules)
    kept = {p for p in raw if not is_always_excluded(p) and not rules.ignored(p.rstrip("/"))}
    return Candidates(tuple(sorted(kept)), tuple(sorted(u for u in unreadable if u)), is_git)


# ---------------------------------------------------------------- scanning


def probe(
    root: Path, real_root: str, rel: str, cfg: WorkspaceConfig, attributes: Attributes
) -> tuple[os.stat_result | None, str | None]:
    """Stat one candidate without reading it.

    ``(stat, None)``: a regular file to read; ``(None, reason)``: skipped;
    ``(None, None)``: gone (tracked but deleted in the work tree).
    """
    if rel.endswith("/"):
        # git lists an untracked nested repository as "dir/"
        return None, "not_a_file"
    by_path = skip_for_path(rel, enabled=cfg.skip, attributes=attributes)
    if by_path is not None:
        return None, by_path
    path = os.path.join(root, rel)  # noqa: PTH118 - once per listed file: no pathlib objects
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return None, None
    except OSError:
        return None, "unreadable"
    if stat.S_ISLNK(link.st_mode):
        try:
            st = os.stat(path)  # noqa: PTH116
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None, "symlink_loop"
            target = os.path.realpath(path)
            inside = os.path.commonpath([real_root, target]) == real_root
            return None, ("unreadable" if inside else "symlink_outside_repo")
        target = os.path.realpath(path)
        if os.path.commonpath([real_root, target]) != real_root:
            return None, "symlink_outside_repo"
    else:
        st = link
    if not stat.S_ISREG(st.st_mode):
        return None, "not_a_file"
    if st.st_size > cfg.max_file_bytes:
        return None, "too_large"
    return st, None


def read_candidate(root: Path, rel: str, cfg: WorkspaceConfig) -> tuple[bytes | None, str | None]:
    """``(bytes, None)`` of a probed file, or ``(None, reason)`` when it must be skipped."""
    max_bytes = cfg.max_file_bytes
    try:
        with open(root / rel, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError:
        return None, "unreadable"
    if len(data) > max_bytes:  # grew since stat
        return None, "too_large"
    reason = classify_content(rel, data, cfg)
    if reason is not None:
        return None, reason
    return data, None


def _classify(
    root: Path, real_root: str, rel: str, cfg: WorkspaceConfig, attributes: Attributes
) -> tuple[WorkspaceFile | None, str | None, bool]:
    """``(file, skip_reason, replaced)`` for one candidate path."""
    st, reason = probe(root, real_root, rel, cfg, attributes)
    if st is None:
        return None, reason, False
    data, reason = read_candidate(root, rel, cfg)
    if data is None:
        return None, reason, False
    _, replaced = _decode(data)
    return WorkspaceFile(path=rel, size=len(data), mtime_ns=st.st_mtime_ns), None, replaced


def scan_workspace(root: Path, config: WorkspaceConfig | None = None) -> ScanResult:
    """List the repository's files under ``root`` with every skip and its reason."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise WorkspaceError(
            f"{root} is not a folder.", hint="Pass the repository root (a folder) to --repo."
        )
    cfg = config or WorkspaceConfig()
    listed = list_candidates(root, cfg)
    is_git = listed.is_git
    real_root = os.path.realpath(root)
    files: list[WorkspaceFile] = []
    skipped = [Skip(rel, "unreadable") for rel in listed.unreadable_dirs]
    notes: list[Skip] = []
    attributes = Attributes.load(root)
    for rel in listed.paths:
        found, reason, replaced = _classify(root, real_root, rel, cfg, attributes)
        if found is not None:
            files.append(found)
            if replaced:
                notes.append(Skip(rel, DECODED_WITH_REPLACEMENT))
        elif reason is not None:
            skipped.append(Skip(rel.rstrip("/"), reason))
    return ScanResult(
        root=root,
        files=tuple(sorted(files, key=lambda f: f.path)),
        skipped=tuple(sorted(skipped, key=lambda s: (s.path, s.reason))),
        notes=tuple(sorted(notes, key=lambda s: (s.path, s.reason))),
        is_git=is_git,
    )
