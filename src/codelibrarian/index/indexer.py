"""Build and update the index of a workspace, incrementally and crash-safely.

One run:

1. list the workspace (``scan_workspace``: ignore rules, skips with reasons);
2. compare with the index: a file whose size and mtime are unchanged is taken as
   unchanged; otherwise its content hash decides (an edit that restores the old
   content only refreshes the mtime); files no longer listed are deleted;
3. parse what changed, in a process pool sized to the cores for large batches
   (in-process for small ones), and write each batch of results in its own
   transaction, imports resolved against the new file list;
4. when files came or went, re-resolve every file's imports (a new file can
   satisfy an old import); a ``resolve_pending`` flag written before the first
   batch makes a run killed half-way redo this step next time;
5. refresh the git co-change graph when HEAD (or the file set) changed.

A process killed at any point leaves the last committed batch: the next run sees
the remaining files as new or stale and completes the index.
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from ..config import Config
from ..tokens import get_tokenizer
from ..workspace import git
from ..workspace.files import content_hash, scan_workspace
from ..workspace.ignore import GitignoreStack, RootRules, is_always_excluded
from ..workspace.state import State
from . import graph
from .imports import Resolver
from .languages import language_for
from .parse import TOKENIZER_MODEL, parse_batch
from .records import FileData, ImportRecord
from .store import SqliteStore, writer_lock

__all__ = ["IndexStats", "UpdateResult", "index_workspace", "update_paths"]

#: below this many files to parse, a process pool costs more than it saves
POOL_MIN_FILES = 48
_BATCH_FILES = 24

ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What one ``index_workspace`` run found and did."""

    files: int
    parsed: int
    unchanged: int
    deleted: int
    by_language: dict[str, int]
    symbols: int
    references: int
    imports: int
    imports_resolved: int
    chunks: int
    skipped: dict[str, int]
    parse_errors: tuple[tuple[str, str], ...]
    milliseconds: int
    workers: int
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "parsed": self.parsed,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "files_by_language": dict(sorted(self.by_language.items())),
            "symbols": self.symbols,
            "references": self.references,
            "imports": {
                "total": self.imports,
                "resolved": self.imports_resolved,
                "external": self.imports - self.imports_resolved,
            },
            "chunks": self.chunks,
            "skipped": dict(sorted(self.skipped.items())),
            "parse_errors": [{"path": p, "error": e} for p, e in self.parse_errors],
            "seconds": round(self.milliseconds / 1000, 3),
            "workers": self.workers,
        }


def _go_modules(root: Path, paths: Sequence[str]) -> dict[str, str]:
    mods: dict[str, str] = {}
    for p in paths:
        if p == "go.mod" or p.endswith("/go.mod"):
            try:
                text = (root / p).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "module":
                    mods[p.rsplit("/", 1)[0] if "/" in p else ""] = parts[1].strip('"')
                    break
    return mods


def _resolve(resolver: Resolver, data: FileData) -> list[ImportRecord]:
    out: dict[tuple[str, int], ImportRecord] = {}
    for spec, line in data.import_specs:
        shown, target = resolver.resolve(data.language, data.path, spec)
        out.setdefault((shown, line), ImportRecord(data.path, shown, line, target))
    return [out[k] for k in sorted(out, key=lambda k: (k[1], k[0]))]


def _batches(items: Sequence[tuple[str, int]], size: int) -> Iterator[list[tuple[str, int]]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


def index_workspace(
    root: Path,
    config: Config | None = None,
    *,
    progress: ProgressFn | None = None,
    workers: int | None = None,
) -> IndexStats:
    """Bring the index of the repository at ``root`` up to date; returns the run's stats."""
    started = time.perf_counter()
    cfg = config or Config()
    root = Path(root).resolve()
    state = State(root).ensure()
    with writer_lock(state.index_path), SqliteStore(state.index_path) as store:
        scan = scan_workspace(root, cfg.workspace)
        listed = {f.path: f for f in scan.files}
        known = store.file_states()
        deleted = sorted(set(known) - set(listed))
        todo: list[tuple[str, int]] = []
        touched: list[tuple[str, int]] = []
        for path in sorted(listed):
            wf = listed[path]
            old = known.get(path)
            if old is not None and old[1] == wf.size and old[2] == wf.mtime_ns:
                continue
            if old is not None:
                try:
                    same = content_hash((root / path).read_bytes()) == old[0]
                except OSError:
                    same = False
                if same:
                    touched.append((path, wf.mtime_ns))
                    continue
            todo.append((path, wf.mtime_ns))
        file_set_changed = bool(deleted) or any(p not in known for p, _ in todo)
        if file_set_changed:
            store.set_meta({"resolve_pending": "1"})
        if deleted:
            store.delete_files(deleted)
        if touched:
            store.touch_files(touched)

        resolver = Resolver(listed, _go_modules(root, sorted(listed)))
        n_workers = workers or cfg.index.workers or os.cpu_count() or 1
        parse_errors, used = _parse_and_write(
            store,
            root,
            todo,
            resolver=resolver,
            max_tokens=cfg.index.chunk_max_tokens,
            n_workers=n_workers,
            progress=progress,
        )

        if file_set_changed or store.meta("resolve_pending") == "1":
            _reresolve(store, resolver)
            store.set_meta({"resolve_pending": "0"})
        notes = _refresh_cochange(root, store, cfg, set(listed), file_set_changed)
        counts = store.counts()
        by_lang = Counter(language_for(p)[0] for p in listed)
        resolved = store.count_resolved_imports()
        # files with a recorded parse error, including ones from earlier runs
        all_errors = store.parse_errors()
    return IndexStats(
        files=counts["files"],
        parsed=len(todo),
        unchanged=len(listed) - len(todo),
        deleted=len(deleted),
        by_language=dict(by_lang),
        symbols=counts["symbols"],
        references=counts["refs"],
        imports=counts["imports"],
        imports_resolved=resolved,
        chunks=counts["chunks"],
        skipped=scan.skip_counts(),
        parse_errors=tuple(all_errors) if all_errors else tuple(sorted(parse_errors)),
        milliseconds=int((time.perf_counter() - started) * 1000),
        workers=used,
        notes=tuple(notes),
    )


def _parse_and_write(
    store: SqliteStore,
    root: Path,
    todo: Sequence[tuple[str, int]],
    *,
    resolver: Resolver,
    max_tokens: int,
    n_workers: int,
    progress: ProgressFn | None,
) -> tuple[list[tuple[str, str]], int]:
    """Parse ``todo`` and write each batch in its own transaction; ``(errors, workers)``."""
    parse_errors: list[tuple[str, str]] = []
    done = 0
    if progress:
        progress(0, len(todo))
    batches = list(_batches(todo, _BATCH_FILES))
    use_pool = n_workers > 1 and len(todo) >= POOL_MIN_FILES
    pool: ProcessPoolExecutor | None = None
    results: Iterable[list[FileData | tuple[str, str]]]
    if use_pool:
        forking = "fork" in _start_methods()
        if forking:  # load the encoder once here: forked workers inherit it (~1 s CPU each)
            get_tokenizer(TOKENIZER_MODEL).count("warm")
        ctx = get_context("fork") if forking else get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx)
        n = len(batches)
        results = pool.map(parse_batch, [str(root)] * n, batches, [max_tokens] * n)
    else:
        results = (parse_batch(str(root), b, max_tokens) for b in batches)
    try:
        for batch_result in results:
            rows: list[tuple[FileData, list[ImportRecord]]] = []
            vanished: list[str] = []
            for item in batch_result:
                if isinstance(item, FileData):
                    rows.append((item, _resolve(resolver, item)))
                    if item.parse_error:
                        parse_errors.append((item.path, item.parse_error))
                else:
                    vanished.append(item[0])
            store.write_files(rows)
            if vanished:
                store.delete_files(vanished)
            done += len(batch_result)
            if progress:
                progress(done, len(todo))
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return parse_errors, (n_workers if use_pool else 1)


def update_paths(
    root: Path,
    paths: Iterable[str],
    config: Config | None = None,
    *,
    store: SqliteStore | None = None,
) -> UpdateResult:
    """Re-index just ``paths`` (repo-relative): what an editor save or ``--watch`` needs.

    A path that no longer exists, became ignored, binary or too large is removed
    from the index; one whose content hash is unchanged is left alone. Skips the
    full workspace scan, so a one-file update costs one parse and one transaction.
    ``store`` lets a long-running caller (``--watch``) keep the index open.
    """
    cfg = config or Config()
    root = Path(root).resolve()
    state = State(root).ensure()
    with writer_lock(state.index_path):
        if store is not None:
            return _update(root, sorted(set(paths)), cfg, store)
        with SqliteStore(state.index_path) as own:
            return _update(root, sorted(set(paths)), cfg, own)


def _update(root: Path, paths: list[str], cfg: Config, store: SqliteStore) -> UpdateResult:
    rules = RootRules.load(root, cfg.workspace.ignore)
    known = store.file_states(paths)
    todo: list[tuple[str, int]] = []
    removed: list[str] = []
    for rel in paths:
        keep, mtime = _indexable(root, rel, rules, cfg.workspace.max_file_bytes)
        if not keep:
            if rel in known:
                removed.append(rel)
            continue
        old = known.get(rel)
        try:
            digest = content_hash((root / rel).read_bytes())
        except OSError:
            continue
        if old is not None and old[0] == digest:
            continue
        todo.append((rel, mtime))
    if not todo and not removed:
        return UpdateResult((), ())
    set_changed = bool(removed) or any(p not in known for p, _ in todo)
    if set_changed:
        store.set_meta({"resolve_pending": "1"})
    if removed:
        store.delete_files(removed)
    all_paths = store.paths()
    all_paths.extend(p for p, _ in todo if p not in known)
    resolver = _resolver(root, all_paths)
    _parse_and_write(
        store,
        root,
        todo,
        resolver=resolver,
        max_tokens=cfg.index.chunk_max_tokens,
        n_workers=1,
        progress=None,
    )
    if set_changed:
        _reresolve(store, resolver)
        store.set_meta({"resolve_pending": "0"})
    return UpdateResult(tuple(p for p, _ in todo), tuple(removed))


_RESOLVER_CACHE: list[tuple[frozenset[str], Resolver]] = []


def _resolver(root: Path, paths: Iterable[str]) -> Resolver:
    """A resolver for this file set, reused while the set is unchanged (watch mode)."""
    key = frozenset(paths) | {f"\0{root}"}
    for cached_key, cached in _RESOLVER_CACHE:
        if cached_key == key:
            return cached
    real = sorted(p for p in key if not p.startswith("\0"))
    resolver = Resolver(real, _go_modules(root, real))
    _RESOLVER_CACHE[:] = [(key, resolver)]
    return resolver


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """Paths re-indexed and paths removed by ``update_paths``."""

    changed: tuple[str, ...]
    removed: tuple[str, ...]


def _gitignored(root: Path, rel: str) -> bool:
    """``rel`` or one of its folders is ignored by a ``.gitignore`` on its way from the root."""
    stack = GitignoreStack()
    parts = rel.split("/")
    for k in range(len(parts)):
        stack.push_dir(root, "/".join(parts[:k]))
        target = "/".join(parts[: k + 1]) + ("/" if k < len(parts) - 1 else "")
        if stack.ignored(target):
            return True
    return False


def _indexable(root: Path, rel: str, rules: RootRules, max_bytes: int) -> tuple[bool, int]:
    if is_always_excluded(rel) or rules.ignored(rel) or _gitignored(root, rel):
        return False, 0
    path = root / rel
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return False, 0
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError:
        return False, 0
    return (b"\0" not in head), st.st_mtime_ns


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _reresolve(store: SqliteStore, resolver: Resolver) -> None:
    languages = {f.path: f.language for f in store.files()}
    changes: list[tuple[str, str, int, str | None]] = []
    for path, spec, line, resolved in store.import_specs():
        _, target = resolver.resolve(languages.get(path, ""), path, spec)
        if target != resolved:
            changes.append((path, spec, line, target))
    store.set_import_resolutions(changes)


def _refresh_cochange(
    root: Path, store: SqliteStore, cfg: Config, paths: set[str], file_set_changed: bool
) -> list[str]:
    if cfg.index.cochange_commits <= 0 or not git.is_git_repo(root):
        if store.meta("cochange_key") not in (None, ""):
            store.set_cochange([], "")
        return []
    head = git.head_commit(root) or ""
    key = f"{head}:{cfg.index.cochange_commits}:{cfg.index.cochange_max_files}"
    if store.meta("cochange_key") == key and not file_set_changed:
        return []
    try:
        commits = git.recent_commits(root, limit=cfg.index.cochange_commits)
    except Exception as exc:  # git trouble must not fail the index
        return [f"co-change graph not refreshed: {exc}"]
    edges = graph.cochange_edges(
        (c.files for c in commits), max_files=cfg.index.cochange_max_files, known=paths
    )
    store.set_cochange(edges, key)
    return []
