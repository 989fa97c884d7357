"""Read-only views of a workspace: what the index holds, what a scan lists, token
counts, the repository map, and setting up ``.librarian/`` (``init``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import LibrarianError
from ..tokens import Tokenizer, encoding_for_model, get_tokenizer
from ..workspace.files import ScanResult, read_text, scan_workspace
from ..workspace.git import head_commit, is_git_repo
from ..workspace.private import harden
from ..workspace.state import SCHEMA_VERSION
from .workspace import WorkspaceSession

if TYPE_CHECKING:  # the secret rules load with the gate, on use (not for an index run)
    from ..gate import RedactionLog
    from ..index.storage import Storage

__all__ = [
    "IndexStatus",
    "InitResult",
    "RepoMap",
    "TokenCounts",
    "count_tokens",
    "edge_counts",
    "gated_map",
    "index_status",
    "init_state",
    "repo_map",
    "scan_summary",
]


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """Outcome of :meth:`Librarian.index_status` (counts only, no paths)."""

    indexed: bool
    files: int
    languages: tuple[tuple[str, int], ...]
    symbols: int
    chunks: int
    imports: int
    parse_errors: int
    generation: int
    modified_files: int
    new_files: int
    deleted_files: int
    head: str | None
    decisions: int
    runs: int

    @property
    def stale(self) -> bool:
        """True when the workspace has files the index does not reflect."""
        return not self.indexed or bool(self.modified_files + self.new_files + self.deleted_files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "indexed": self.indexed,
            "stale": self.stale,
            "files": self.files,
            "languages": dict(self.languages),
            "symbols": self.symbols,
            "chunks": self.chunks,
            "imports": self.imports,
            "parse_errors": self.parse_errors,
            "generation": self.generation,
            "modified_files": self.modified_files,
            "new_files": self.new_files,
            "deleted_files": self.deleted_files,
            "head": self.head,
            "decisions": self.decisions,
            "runs": self.runs,
        }


def index_status(ws: WorkspaceSession) -> IndexStatus:
    """What the index holds and how far the workspace has moved since (never builds)."""
    state = ws.state
    decisions = 0
    if state.decisions_dir.is_dir():
        for log in state.decisions_dir.glob("*.jsonl"):
            with open(log, encoding="utf-8") as fh:
                decisions += sum(1 for line in fh if line.strip())
    runs = sum(1 for p in state.runs_dir.iterdir() if p.is_dir()) if state.runs_dir.is_dir() else 0
    is_git = is_git_repo(ws.root)
    head = head_commit(ws.root) if is_git else None
    if not state.index_path.exists():
        return IndexStatus(False, 0, (), 0, 0, 0, 0, 0, 0, 0, 0, head, decisions, runs)
    store = ws.open_store()
    records = store.files()
    languages: dict[str, int] = {}
    for rec in records:
        lang = rec.language or "text"
        languages[lang] = languages.get(lang, 0) + 1
    counts = store.counts()
    known = store.file_states()
    scan = scan_workspace(ws.root, ws.config.workspace)
    current = {f.path: (f.size, f.mtime_ns) for f in scan.files}
    modified = sum(
        1 for p, (size, mtime) in current.items() if p in known and known[p][1:3] != (size, mtime)
    )
    return IndexStatus(
        indexed=True,
        files=len(records),
        languages=tuple(sorted(languages.items())),
        symbols=counts.get("symbols", 0),
        chunks=counts.get("chunks", 0),
        imports=counts.get("imports", 0),
        parse_errors=len(store.parse_errors()),
        generation=store.generation(),
        modified_files=modified,
        new_files=sum(1 for p in current if p not in known),
        deleted_files=sum(1 for p in known if p not in current),
        head=head,
        decisions=decisions,
        runs=runs,
    )


def edge_counts(root: Path) -> dict[str, int | None]:
    """Edges of each graph kind in the existing index (read-only); ``ref`` is None while
    the stored graphs wait for the first compose or query to bring them up to date."""
    from ..index.store import open_store

    with open_store(root, readonly=True) as store:
        return store.edge_counts()


@dataclass(frozen=True, slots=True)
class RepoMap:
    """The ranked repository map as rendered under a budget (through the secret gate:
    sensitive files left out, secrets in signatures redacted; ``redactions`` counts them)."""

    text: str
    budget: int
    tokens: int
    tokenizer: str
    redactions: dict[str, Any] = field(default_factory=dict)

    @property
    def files(self) -> tuple[str, ...]:
        """The files the map lists, in map order."""
        return tuple(
            line[:-1] for line in self.text.splitlines() if line and not line.startswith(" ")
        )


def gated_map(
    ws: WorkspaceSession,
    store: Storage,
    tokenizer: Tokenizer,
    budget: int,
    log: RedactionLog | None = None,
) -> str:
    """The ranked map under ``budget``, through the workspace's secret gate: sensitive
    files left out, each shown signature checked against its whole file."""
    from ..index.repomap import render_map

    gate = ws.gate
    sources: dict[str, str | None] = {}

    def source(path: str) -> str | None:
        if path not in sources:
            try:
                sources[path] = read_text(ws.root, path)[0]
            except LibrarianError:
                sources[path] = None
        return sources[path]

    def clean(path: str, signature: str) -> str:
        return gate.clean(signature, surface="map", kind="signature", source=source(path), log=log)

    return render_map(
        store, tokenizer, budget, keep=lambda p: not gate.is_sensitive(p), clean=clean
    )


def repo_map(ws: WorkspaceSession, budget: int, model: str | None) -> RepoMap:
    """The ranked map of the existing index under ``budget`` tokens (read-only)."""
    from ..gate import RedactionLog
    from ..index.store import open_store

    tokenizer = get_tokenizer(model)
    log = RedactionLog()
    with open_store(ws.root, readonly=True) as store:
        text = gated_map(ws, store, tokenizer, budget, log)
    ws.save_scans()
    return RepoMap(text, budget, tokenizer.count(text), tokenizer.name, log.summary())


@dataclass(frozen=True, slots=True)
class InitResult:
    """Outcome of ``init``: where the state folder is and whether it was created."""

    root: Path
    state_dir: Path
    created: bool
    schema_version: int
    config: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "root": str(self.root),
            "state_dir": str(self.state_dir),
            "created": self.created,
            "schema_version": self.schema_version,
            "config": self.config,
        }


def init_state(ws: WorkspaceSession) -> InitResult:
    """Create ``.librarian/`` (own ``.gitignore``, schema version, secret); idempotent."""
    state = ws.state
    existed = state.exists() and state.secret_path.exists()
    state.ensure()
    state.secret()
    harden(state.dir)  # files 0600, folders 0700, whatever wrote them
    return InitResult(
        ws.root, state.dir, not existed, SCHEMA_VERSION, ws.config.source or "defaults"
    )


def _language_of(path: str) -> str:
    """The index's language label for ``path``."""
    from ..index.languages import language_for

    return language_for(path)[0]


def scan(ws: WorkspaceSession) -> ScanResult:
    """The files the librarian reads, with skips by reason."""
    return scan_workspace(ws.root, ws.config.workspace)


def scan_summary(result: ScanResult) -> dict[str, Any]:
    """The JSON shape of ``librarian scan``."""
    by_ext: dict[str, dict[str, int]] = {}
    by_lang: dict[str, dict[str, int]] = {}
    for f in result.files:
        ext = PurePosixPath(f.path).suffix.lower() or "(none)"
        lang = _language_of(f.path)
        for table, key in ((by_ext, ext), (by_lang, lang)):
            row = table.setdefault(key, {"files": 0, "bytes": 0})
            row["files"] += 1
            row["bytes"] += f.size

    def ordered(table: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        return dict(sorted(table.items(), key=lambda kv: (-kv[1]["files"], kv[0])))

    return {
        "ok": True,
        "root": str(result.root),
        "is_git": result.is_git,
        "files": len(result.files),
        "total_bytes": result.total_bytes,
        "by_language": ordered(by_lang),
        "by_extension": ordered(by_ext),
        "skipped": result.skip_counts(),
        "skipped_files": [{"path": s.path, "reason": s.reason} for s in result.skipped],
        "notes": [{"path": s.path, "note": s.reason} for s in result.notes],
    }


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """Tokens per listed file (largest first) with the model's encoding."""

    model: str
    encoding: str
    safety_factor_permille: int
    tokenizer: str
    rows: tuple[tuple[str, int, int], ...]  # (path, tokens, bytes)

    @property
    def total_tokens(self) -> int:
        return sum(r[1] for r in self.rows)


def count_tokens(
    ws: WorkspaceSession,
    keep: Callable[[str], bool],
    *,
    model: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TokenCounts:
    """Count the tokens of every listed file ``keep`` accepts (``model`` defaults to the
    configured one); ``progress(done, total)`` after each file."""
    model_name = model or ws.config.compose.model
    tokenizer = get_tokenizer(model_name)
    encoding, factor = encoding_for_model(model_name)
    selected = [f for f in scan(ws).files if keep(f.path)]
    rows: list[tuple[str, int, int]] = []
    for done, f in enumerate(selected, 1):
        text, _ = read_text(ws.root, f.path)
        rows.append((f.path, tokenizer.count(text), f.size))
        if progress is not None:
            progress(done, len(selected))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return TokenCounts(model_name, encoding, factor, tokenizer.name, tuple(rows))
