"""Build and update the index of a workspace: staged, incremental, crash-safe.

One run, under the index's writer lock (``lock.py``):

0. **health** — if the lock says the last writer was killed, or the database
   cannot be opened, ``PRAGMA quick_check`` decides; a damaged index is
   discarded and rebuilt (the run's notes say so, once). An index that does not
   exist yet may start as a copy of a sibling checkout's (``seed.py``), whose check
   runs in a thread during stage 1's listing and is waited for before its writes.
1. **files** — list the workspace; a file whose size and mtime match the index
   is unchanged; otherwise it is read, classified (binary, generated, minified,
   very long lines... are skipped with their reason, remembered in ``skipped``)
   and identified by its git blob id. New and changed files are written as
   *listed* rows (stage 0) in one transaction; files no longer listed go. From
   here on every reader sees the whole file list.
2. **parse** — listed files are parsed: symbols, references, imports, chunks and
   full-text rows, committed per batch (stage 2). A file's parse comes from the
   per-user parse cache when its blob was parsed before (``blobcache.py``), else
   from a process pool sized to the cores (``pool.py``: bounded in flight,
   workers die with the parent). ``only`` restricts this run to some files —
   what ``compose`` does to answer first — and leaves the rest listed for a
   later run (``pending`` in the stats).
3. **resolution** — when files came or went, every import is re-resolved (a new
   file can satisfy an old import); a ``resolve_pending`` flag written in stage 1
   makes a killed run redo it.
4. **derived** — once nothing is pending: the git co-change graph (when HEAD or
   the file set changed), the cached file graphs and the registered derived stages
   (``DERIVED``). The graphs are built here only when no stored ones can be brought
   up to date; after an edit or a checkout at another commit (``graphdelta``: only
   the edited files' neighbourhood is re-derived) that is left to the first
   ``compose`` or ``query`` that walks them, which stores the result under this
   same lock (``SqliteStore.derived_graphs``).
5. **layouts** — in a run that answers no task (``librarian index``, the background
   run), the span layouts of the files that have none (``layouts.py``).

A process killed at any point leaves committed batches only: the next run
finds the remaining files listed (or new) and completes them.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config import Config
from ..errors import IndexCorrupt
from ..tokens import get_tokenizer
from ..workspace import git
from ..workspace.files import blob_id, list_candidates, probe, read_candidate
from ..workspace.ignore import GitignoreStack, RootRules, is_always_excluded
from ..workspace.skips import Attributes
from ..workspace.state import State
from . import graph
from .blobcache import BlobCache
from .gitblobs import GitEntry, git_entries
from .health import BackgroundCheck, discard, quick_check
from .history_edits import refresh_past_edits
from .imports import Resolver
from .languages import language_for, load_queries
from .lock import LockOwner, WriterLock
from .parse import (
    TOKENIZER_MODEL,
    ParseOutcome,
    cache_key,
    decode_result,
    parse_batch,
    parser_version,
)
from .pool import ParsePool
from .records import FileData, ImportRecord
from .seed import repo_key, seed_from_sibling
from .storage import IndexStore
from .store import SqliteStore

__all__ = [
    "DERIVED",
    "IndexStats",
    "UpdateResult",
    "index_workspace",
    "update_paths",
]

#: below this many files to parse, a process pool costs more than it saves (forked
#: workers inherit the loaded tokenizer and grammars, so starting them costs ~50 ms)
POOL_MIN_FILES = 16
#: from this many known files with new mtimes, blob ids come from git's index (``gitblobs``)
GIT_IDS_MIN_FILES = 64
_BATCH_FILES = 24
#: a small parse (under ``_BATCH_FILES`` per worker) is cut into this many batches per worker
_BATCHES_PER_WORKER = 4
#: a first build of at least this many files loads without secondary indexes
_BULK_FILES = 500
#: SQLite result codes that mean the file itself is damaged (not busy or locked)
_CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB

ProgressFn = Callable[[int, int], None]
#: told the name of each stage as it starts: check, seed, files, parse, resolve, derived,
#: layouts
StageFn = Callable[[str], None]
#: given the paths waiting to be parsed, the ones to parse in this run
ChooseFn = Callable[[list[str]], Collection[str]]
WaitFn = Callable[[LockOwner | None, float], None]
#: a derived stage: ``(root, store, config) -> note or None``, run once nothing is pending
DerivedStage = Callable[[Path, IndexStore, Config], str | None]
#: derived stages by name, run in name order after the core stages (plug-ins add here)
DERIVED: dict[str, DerivedStage] = {}

_UNSET: object = object()
_SEEDED = "started from another checkout's index of this repository"


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
    #: files listed but not parsed yet (a run restricted with ``only``)
    pending: int = 0
    #: parses taken from the per-user cache
    cache_hits: int = 0
    #: the index started as a copy of another checkout's
    seeded: bool = False
    #: the index was found damaged and rebuilt from the workspace
    rebuilt: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "parsed": self.parsed,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "pending": self.pending,
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
            "cache_hits": self.cache_hits,
            "seeded": self.seeded,
            "rebuilt": self.rebuilt,
            "notes": list(self.notes),
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


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


# ------------------------------------------------------------------ stage 1: files


@dataclass(slots=True)
class _Listing:
    """What stage 1 found: listed files and what changed since the index's last look."""

    listed: dict[str, int] = field(default_factory=dict)  # path -> mtime_ns
    changed: list[tuple[str, str, str, int, int, int]] = field(default_factory=list)
    touched: list[tuple[str, int]] = field(default_factory=list)
    skip_rows: list[tuple[str, str, int, int]] = field(default_factory=list)
    skip_gone: list[str] = field(default_factory=list)
    skip_counts: Counter[str] = field(default_factory=Counter)
    deleted: list[str] = field(default_factory=list)
    #: listed paths the index did not know before this run
    new: list[str] = field(default_factory=list)
    #: ``path -> blob id`` of the listed files waiting to be parsed once this listing is
    #: written (changed ones, and ones an earlier run listed but did not parse)
    waiting: dict[str, str] = field(default_factory=dict)


def _list(root: Path, cfg: Config, store: IndexStore) -> _Listing:
    ws = cfg.workspace
    cands = list_candidates(root, ws)
    attributes = Attributes.load(root)
    real_root = os.path.realpath(root)
    known = store.file_states()
    skipped_known = store.skipped_states()
    out = _Listing()
    still_skipped: set[str] = set()

    def skip(rel: str, reason: str, size: int, mtime: int) -> None:
        out.skip_counts[reason] += 1
        still_skipped.add(rel)
        if skipped_known.get(rel) != (reason, size, mtime):
            out.skip_rows.append((rel, reason, size, mtime))

    for rel in cands.unreadable_dirs:
        skip(rel, "unreadable", -1, -1)
    to_look: list[tuple[str, os.stat_result]] = []
    for rel in cands.paths:
        st, reason = probe(root, real_root, rel, ws, attributes)
        if st is None:
            if reason is not None:
                skip(rel.rstrip("/"), reason, -1, -1)
            continue
        size, mtime = st.st_size, st.st_mtime_ns
        old = known.get(rel)
        if old is not None and old[1] == size and old[2] == mtime:
            out.listed[rel] = mtime
            continue
        was = skipped_known.get(rel)
        if was is not None and was[1:] == (size, mtime):
            skip(rel, was[0], size, mtime)
            continue
        to_look.append((rel, st))
    # many known files with new mtimes (a clone, a worktree, a seeded index): git's own
    # index says which are unchanged without reading them (``gitblobs``): those whose
    # stat data, taken above, are what git recorded for their blob
    moved = sum(1 for rel, _ in to_look if rel in known)
    git_ids: dict[str, GitEntry] = git_entries(root) if moved >= GIT_IDS_MIN_FILES else {}
    for rel, st in to_look:
        size, mtime = st.st_size, st.st_mtime_ns
        old = known.get(rel)
        entry = git_ids.get(rel)
        if old is not None and entry is not None and entry.blob == old[0] and entry.holds(st):
            out.listed[rel] = mtime
            out.touched.append((rel, mtime))
            continue
        data, reason = read_candidate(root, rel, ws)
        if data is None:
            skip(rel, reason or "unreadable", size, mtime)
            continue
        digest = blob_id(data)
        out.listed[rel] = mtime
        if old is not None and old[0] == digest:
            out.touched.append((rel, mtime))
            continue
        label, _ = language_for(rel)
        out.changed.append((rel, label, digest, len(data), mtime, _lines(data)))
    out.deleted = sorted(set(known) - set(out.listed))
    out.new = [r[0] for r in out.changed if r[0] not in known]
    out.waiting = {p: k[0] for p, k in known.items() if k[3] < 2 and p in out.listed}
    out.waiting.update((r[0], r[2]) for r in out.changed)
    out.skip_gone = sorted(set(skipped_known) - still_skipped)
    return out


# ------------------------------------------------------------------ the run


def index_workspace(
    root: Path,
    config: Config | None = None,
    *,
    progress: ProgressFn | None = None,
    workers: int | None = None,
    only: Collection[str] | None = None,
    command: str = "index",
    lock_timeout: float | None = None,
    on_wait: WaitFn | None = None,
    on_stage: StageFn | None = None,
    check: bool = False,
    choose: ChooseFn | None = None,
    stamp: str | None = None,
    cache: BlobCache | object | None = _UNSET,
) -> IndexStats:
    """Bring the index of the repository at ``root`` up to date; returns the run's stats.

    ``only`` parses just those paths this run (the rest stay listed, ``pending``).
    ``lock_timeout`` (seconds; default ``[index].lock_timeout``) bounds the wait for
    another writer, raising ``IndexBusy``; ``on_wait`` hears who it is while waiting.
    ``on_stage`` hears each stage's name as it starts. ``check`` runs ``PRAGMA
    quick_check`` first even after a clean shutdown (``librarian index`` does: it is
    the command that repairs). ``choose`` picks, from the files waiting to be
    parsed, those to parse this run (answer first; ``only`` takes precedence).
    ``stamp`` records what the workspace looked like when the index is complete
    (``meta.workspace_stamp``, cleared by any other run), so a later process can
    skip a run when nothing moved. ``cache`` overrides the per-user parse cache
    (None: no cache).
    """
    started = time.perf_counter()
    cfg = config or Config()
    root = Path(root).resolve()
    state = State(root).ensure()
    db = state.index_path
    timeout = cfg.index.lock_timeout if lock_timeout is None else lock_timeout
    blobs = BlobCache.open(cfg.cache) if cache is _UNSET else cache
    assert blobs is None or isinstance(blobs, BlobCache)
    stage = on_stage or _quiet
    warming: threading.Thread | None = None
    try:
        with WriterLock(db, command=command, timeout=timeout, on_wait=on_wait) as lock:
            notes: list[str] = []
            rebuilt = False
            if lock.unclean or check:
                stage("check")
            problems = quick_check(db) if lock.unclean or check else []
            if problems:
                rebuilt = _rebuild(db, notes, problems[0])
            key = _repo_key(root, blobs)
            seeded = False
            if not db.exists() and blobs is not None:
                stage("seed")
                # the changed files' parse needs the tokenizer: it loads while the copy
                # below waits on the file system (the workers fork after it, ``_warm``)
                warming = _prewarm()
                # the copy's quick_check runs while the files are listed (``_run_once``)
                seeded = seed_from_sibling(root, db, blobs, key, check=False) is not None
                if seeded:
                    notes.append(_SEEDED)
            if _other_parser(db):
                # rows parsed by another release's queries or payload would stay as they
                # are for every unchanged file: start again (its parses miss the cache too)
                discard(db)
                if seeded:
                    notes.remove(_SEEDED)
                    seeded = False
                notes.append(_REPARSED)
            stats = None
            for last in (False, True):  # a damaged index is rebuilt from scratch, once
                try:
                    stats = _run_once(
                        root, cfg, db, blobs, notes,
                        progress=progress, workers=workers, only=only, last=last, stage=stage,
                        choose=choose, stamp=stamp, seed_check=seeded, warming=warming,
                    )  # fmt: skip
                except _UnsoundSeed as exc:
                    discard(db)
                    notes.remove(_SEEDED)
                    notes.append(
                        f"another checkout's index failed its check once copied ({exc.why[:120]}); "
                        "built this one from the workspace"
                    )
                    seeded = False
                    continue
                if stats is not None:
                    break
                rebuilt = True
            assert stats is not None
            if blobs is not None:
                blobs.register_index(key, db)
                blobs.finish()
    finally:
        if warming is not None:
            warming.join()
        if cache is _UNSET and blobs is not None:
            blobs.close()
    return replace(
        stats,
        milliseconds=int((time.perf_counter() - started) * 1000),
        notes=tuple(notes) + stats.notes,
        seeded=seeded,
        rebuilt=rebuilt,
    )


def _run_once(
    root: Path,
    cfg: Config,
    db: Path,
    blobs: BlobCache | None,
    notes: list[str],
    *,
    progress: ProgressFn | None,
    workers: int | None,
    only: Collection[str] | None,
    stage: StageFn,
    choose: ChooseFn | None = None,
    stamp: str | None = None,
    last: bool = False,
    seed_check: bool = False,
    warming: threading.Thread | None = None,
) -> IndexStats | None:
    """One pass over a sound database; None after discarding a damaged one (unless ``last``).

    ``seed_check``: the database is a sibling's copy not checked yet; its
    ``quick_check`` runs in a thread while the files are listed (reads only), and
    ``_UnsoundSeed`` is raised before anything is written to it if it fails.
    """
    try:
        store = SqliteStore(db, locked=True)
    except IndexCorrupt as exc:
        if seed_check:
            raise _UnsoundSeed(exc.message) from None
        if last:
            raise
        _rebuild(db, notes, exc.message)
        return None
    pending = BackgroundCheck(db) if seed_check else None
    try:
        with store:
            return _index(
                root, cfg, store, blobs,
                progress=progress, workers=workers, only=only, stage=stage,
                choose=choose, stamp=stamp, seed_check=pending, warming=warming,
            )  # fmt: skip
    except sqlite3.DatabaseError as exc:
        if pending is not None and (pending.problems() or _corrupt(exc)):
            raise _UnsoundSeed(str(exc)) from None
        if last or not _corrupt(exc):
            raise
        _rebuild(db, notes, str(exc))
        return None
    finally:
        if pending is not None:
            pending.problems()  # never left running past the run


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in _CORRUPT_CODES


class _UnsoundSeed(Exception):
    """The sibling index copied to start from failed its check (``why``)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


_REPARSED = (
    "the index was parsed by another version of the parser (its queries or output "
    "changed); rebuilt it from the workspace"
)


def _other_parser(db: Path) -> bool:
    """Whether ``db`` holds files parsed by a parser other than this one
    (``meta.parser_version``; an index from before the key was kept counts as other).
    An unreadable or empty database is left to the normal path."""
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            if conn.execute("SELECT 1 FROM files WHERE stage = 2 LIMIT 1").fetchone() is None:
                return False
            row = conn.execute("SELECT value FROM meta WHERE key = 'parser_version'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return row is None or str(row[0]) != parser_version()


def _quiet(_stage: str) -> None:
    return None


def _repo_key(root: Path, blobs: BlobCache | None) -> str:
    return repo_key(root) if blobs is not None and blobs.usable else ""


def _rebuild(db: Path, notes: list[str], why: str) -> bool:
    discard(db)
    notes.append(f"the index was damaged ({why[:120]}); rebuilt it from the workspace")
    return True


def _index(
    root: Path,
    cfg: Config,
    store: IndexStore,
    blobs: BlobCache | None,
    *,
    progress: ProgressFn | None,
    workers: int | None,
    only: Collection[str] | None,
    stage: StageFn,
    choose: ChooseFn | None = None,
    stamp: str | None = None,
    seed_check: BackgroundCheck | None = None,
    warming: threading.Thread | None = None,
) -> IndexStats:
    stage("files")
    if store.meta("parser_version") != parser_version():
        # every file parsed from here on is this parser's (``_other_parser``)
        store.set_meta({"parser_version": parser_version()})
    listing = _list(root, cfg, store)
    if seed_check is not None and (problems := seed_check.problems()):
        raise _UnsoundSeed(problems[0])  # nothing written yet: the copy is discarded
    listed = listing.listed
    cores = os.cpu_count() or 1
    # more workers than cores only costs memory: a configured count is capped at the cores
    n_workers = workers or min(cfg.index.workers, cores) or cores
    max_tokens = cfg.index.chunk_max_tokens
    early: _Parse | None = None
    if only is None and choose is None:
        # every waiting file is parsed this run: the workers start on them now and parse
        # while this process writes the listing (a parse reads files, never the index)
        early = _Parse.start(
            root,
            [(p, listed[p]) for p in sorted(listing.waiting)],
            listing.waiting,
            max_tokens=max_tokens,
            n_workers=n_workers,
            blobs=blobs,
            warming=warming,
        )
    try:
        file_set_changed = bool(listing.deleted) or bool(listing.new)
        if file_set_changed:
            store.set_meta({"resolve_pending": "1"})
        if listing.deleted:
            store.delete_files(listing.deleted)
        store.set_skipped(listing.skip_rows, listing.skip_gone)
        if listing.touched:
            store.touch_files(listing.touched)
        store.list_files(listing.changed, new=listing.new)

        pending = [p for p in store.pending_paths() if p in listed]
        wanted: set[str] | None = None
        if only is not None:
            wanted = set(only)
        elif choose is not None:
            wanted = set(choose(pending))
        todo_paths = pending if wanted is None else [p for p in pending if p in wanted]
        todo = [(p, listed[p]) for p in todo_paths]
        if early is not None and early.todo != todo:  # not expected: parse what is written
            early.stop()
            early = None
        resolver = Resolver(listed, _go_modules(root, sorted(listed)))
        stage("parse")
        # a cold build (nothing parsed yet, everything to do): no secondary indexes
        # until the end; answer-first and background runs keep them for their readers
        cold = len(todo) >= _BULK_FILES and len(todo) == len(listed) and wanted is None
        with store.bulk_load() if cold else contextlib.nullcontext():
            if early is None:
                early = _Parse.of_listed(
                    store,
                    root,
                    todo,
                    max_tokens=max_tokens,
                    n_workers=n_workers,
                    blobs=blobs,
                    warming=warming,
                )
            parse_errors = early.write(store, resolver=resolver, progress=progress, blobs=blobs)
    except BaseException:
        if early is not None:
            early.stop()
        raise
    used, hits = early.used, len(early.cached)
    if file_set_changed or store.meta("resolve_pending") == "1":
        stage("resolve")
        _reresolve(store, resolver)
        store.set_meta({"resolve_pending": "0"})
    left = len(pending) - len(todo)
    notes: list[str] = []
    if left == 0:
        stage("derived")
        notes += _refresh_cochange(root, store, cfg, set(listed), file_set_changed)
        notes += refresh_past_edits(root, store, cfg)
        # a full build now; a delta after an edit or a checkout at another commit is
        # left to the first compose or query that walks the graphs, which stores it
        store.refresh_graphs(defer=True)
        notes += _run_derived(root, store, cfg)
        if only is None and choose is None:  # not while a task waits for its answer
            stage("layouts")
            notes += _write_layouts(store)
    store.set_meta({"workspace_stamp": stamp if stamp and left == 0 else ""})
    counts = store.counts()
    by_lang = Counter(language_for(p)[0] for p in listed)
    all_errors = store.parse_errors()
    return IndexStats(
        files=counts["files"],
        parsed=len(todo),
        unchanged=len(listed) - len(listing.changed),
        deleted=len(listing.deleted),
        by_language=dict(by_lang),
        symbols=counts["symbols"],
        references=counts["refs"],
        imports=counts["imports"],
        imports_resolved=store.count_resolved_imports(),
        chunks=counts["chunks"],
        skipped=dict(listing.skip_counts),
        parse_errors=tuple(all_errors) if all_errors else tuple(sorted(parse_errors)),
        milliseconds=0,
        workers=used,
        notes=tuple(notes),
        pending=left,
        cache_hits=hits,
    )


def _run_derived(root: Path, store: IndexStore, cfg: Config) -> list[str]:
    notes: list[str] = []
    for name in sorted(DERIVED):
        try:
            note = DERIVED[name](root, store, cfg)
        except Exception as exc:  # a derived stage must not fail the index
            note = f"derived stage {name} failed: {type(exc).__name__}: {exc}"[:300]
        if note:
            notes.append(note)
    return notes


def _write_layouts(store: IndexStore) -> list[str]:
    """Store the span layouts of parsed files that have none (``layouts.py``): a run that
    answers no task (``librarian index``, the background run) builds them once, so no
    reader has to."""
    from .layouts import write_layouts

    try:
        write_layouts(store)
    except Exception as exc:  # derived data: its readers build what is missing
        return [f"span layouts not stored: {type(exc).__name__}: {exc}"[:300]]
    return []


# ------------------------------------------------------------------ stage 2: parse


@dataclass(slots=True)
class _Parse:
    """One run's parse: cached parses looked up, the rest handed to the workers (or
    parsed here, for a few files) as soon as ``start`` returns; ``write`` stores each
    batch in its own transaction, in ``todo`` order."""

    todo: list[tuple[str, int]]
    root: Path
    max_tokens: int
    batches: list[list[tuple[str, int]]]
    cached: dict[str, bytes]
    outcomes: Iterator[list[ParseOutcome]]
    pool: ParsePool | None
    used: int

    @classmethod
    def start(
        cls,
        root: Path,
        todo: Sequence[tuple[str, int]],
        hashes: Mapping[str, str],
        *,
        max_tokens: int,
        n_workers: int,
        blobs: BlobCache | None,
        warming: threading.Thread | None = None,
    ) -> _Parse:
        """``hashes`` holds the blob id of each path in ``todo`` (the cache's key);
        ``warming`` is a thread loading the tokenizer, joined before workers fork."""
        keys = {p: cache_key(hashes[p], p, max_tokens) for p, _ in todo if p in hashes}
        cached: dict[str, bytes] = {}
        if blobs is not None and keys:
            found = blobs.get_many(sorted(set(keys.values())))
            cached = {p: found[k] for p, k in keys.items() if k in found}
        missing = [p for p, _ in todo if p not in cached]
        use_pool = n_workers > 1 and len(missing) >= POOL_MIN_FILES
        # a few dozen files (a second checkout's changes) are shared out over the workers
        # in several batches each rather than filling one batch, so this process writes
        # the first batches while the workers parse the last ones; batches only group
        # commits, never change a row
        size = (
            min(_BATCH_FILES, -(-len(todo) // (n_workers * _BATCHES_PER_WORKER)))
            if use_pool
            else _BATCH_FILES
        )
        batches = list(_batches(todo, size))
        tasks = [(str(root), [t for t in b if t[0] not in cached], max_tokens) for b in batches]
        pool: ParsePool | None = None
        if use_pool:
            pool = ParsePool(n_workers, warm=lambda: _warm(missing, warming))
            outcomes: Iterator[list[ParseOutcome]] = pool.ordered_map(parse_batch, tasks)
        else:
            outcomes = (parse_batch(*t) if t[1] else [] for t in tasks)
        return cls(
            list(todo), root, max_tokens, batches, cached, outcomes, pool,
            n_workers if use_pool else 1,
        )  # fmt: skip

    @classmethod
    def of_listed(
        cls,
        store: IndexStore,
        root: Path,
        todo: Sequence[tuple[str, int]],
        *,
        max_tokens: int,
        n_workers: int,
        blobs: BlobCache | None,
        warming: threading.Thread | None = None,
    ) -> _Parse:
        """:meth:`start` for files the index already lists: their blob ids are read from
        it (by path for a few hundred files, else the whole table in one read)."""
        paths = [p for p, _ in todo]
        states = store.file_states(paths) if len(paths) < 512 else store.file_states()
        return cls.start(
            root,
            todo,
            {p: states[p][0] for p in paths if p in states},
            max_tokens=max_tokens,
            n_workers=n_workers,
            blobs=blobs,
            warming=warming,
        )

    def write(
        self,
        store: IndexStore,
        *,
        resolver: Resolver,
        progress: ProgressFn | None,
        blobs: BlobCache | None,
    ) -> list[tuple[str, str]]:
        """Store every batch as its parse arrives; returns the parse errors."""
        parse_errors: list[tuple[str, str]] = []
        if progress:
            progress(0, len(self.todo))
        done = 0
        try:
            for batch, parsed in zip(self.batches, self.outcomes, strict=True):
                by_path = {o[0]: o for o in parsed}
                rows: list[tuple[FileData, list[ImportRecord]]] = []
                vanished: list[str] = []
                fresh: list[tuple[str, bytes]] = []
                for path, mtime in batch:
                    data = _from_cache(
                        path, mtime, self.cached.get(path), self.root, self.max_tokens
                    )
                    if data is None:
                        outcome = by_path[path]
                        if len(outcome) == 2:
                            vanished.append(path)
                            continue
                        payload = outcome[2]
                        data = decode_result(path, mtime, payload)
                        fresh.append((cache_key(data.content_hash, path, self.max_tokens), payload))
                    rows.append((data, _resolve(resolver, data)))
                    if data.parse_error:
                        parse_errors.append((path, data.parse_error))
                store.write_files(rows)
                if vanished:
                    store.delete_files(vanished)
                if blobs is not None:
                    blobs.put_many(fresh)
                done += len(batch)
                if progress:
                    progress(done, len(self.todo))
        except BaseException:
            self.stop()
            raise
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        return parse_errors

    def stop(self) -> None:
        """Kill the workers now (an interrupted run, or a parse not wanted after all)."""
        if self.pool is not None:
            self.pool.stop()
            self.pool = None


def _parse_and_write(
    store: IndexStore,
    root: Path,
    todo: Sequence[tuple[str, int]],
    *,
    resolver: Resolver,
    max_tokens: int,
    n_workers: int,
    blobs: BlobCache | None,
) -> list[tuple[str, str]]:
    """Parse ``todo`` (cache first) and write each batch; returns the parse errors."""
    run = _Parse.of_listed(
        store, root, todo, max_tokens=max_tokens, n_workers=n_workers, blobs=blobs
    )
    return run.write(store, resolver=resolver, progress=None, blobs=blobs)


def _warm(paths: Sequence[str], warming: threading.Thread | None = None) -> None:
    """Load the tokenizer and the grammars of ``paths`` (forked workers inherit them);
    a thread still loading the tokenizer (``_prewarm``) is waited for, never forked over."""
    if warming is not None:
        warming.join()
    get_tokenizer(TOKENIZER_MODEL).count("warm")
    for name in sorted({lang.name for lang in (language_for(p)[1] for p in paths) if lang}):
        with contextlib.suppress(Exception):  # a grammar that fails, fails in the worker
            load_queries(name)


def _prewarm() -> threading.Thread:
    """Load the tokenizer in a thread (it holds the interpreter, so it runs beside work
    that waits on the file system or SQLite: the seed's copy, its check, git's listing)."""

    def load() -> None:
        with contextlib.suppress(Exception):  # a tokenizer that fails, fails at its use
            get_tokenizer(TOKENIZER_MODEL).count("warm")

    thread = threading.Thread(target=load, name="librarian-tokenizer", daemon=True)
    thread.start()
    return thread


def _from_cache(
    path: str, mtime: int, payload: bytes | None, root: Path, max_tokens: int
) -> FileData | None:
    """A cached parse as ``FileData``, re-parsed in process if the payload is unreadable."""
    if payload is None:
        return None
    try:
        return decode_result(path, mtime, payload)
    except ValueError:
        outcome = parse_batch(str(root), [(path, mtime)], max_tokens)[0]
        if len(outcome) == 2:
            return None
        return decode_result(path, mtime, outcome[2])


# ------------------------------------------------------------------ watch: a few paths


def update_paths(
    root: Path,
    paths: Iterable[str],
    config: Config | None = None,
    *,
    store: IndexStore | None = None,
) -> UpdateResult:
    """Re-index just ``paths`` (repo-relative): what an editor save or ``--watch`` needs.

    A path that no longer exists, became ignored or skipped is removed from the
    index; one whose blob id is unchanged is left alone. Skips the full workspace
    scan, so a one-file update costs one parse and a couple of transactions.
    ``store`` lets a long-running caller (``--watch``) keep the index open.
    """
    cfg = config or Config()
    root = Path(root).resolve()
    state = State(root).ensure()
    with WriterLock(state.index_path, command="watch", timeout=cfg.index.lock_timeout):
        if store is not None:
            return _update(root, sorted(set(paths)), cfg, store)
        with SqliteStore(state.index_path, locked=True) as own:
            return _update(root, sorted(set(paths)), cfg, own)


def _update(root: Path, paths: list[str], cfg: Config, store: IndexStore) -> UpdateResult:
    rules = RootRules.load(root, cfg.workspace.ignore)
    attributes = Attributes.load(root)
    real_root = os.path.realpath(root)
    known = store.file_states(paths)
    listed: list[tuple[str, str, str, int, int, int]] = []
    todo: list[tuple[str, int]] = []
    removed: list[str] = []
    skips: list[tuple[str, str, int, int]] = []
    for rel in paths:
        st: os.stat_result | None = None
        data: bytes | None = None
        reason: str | None = None
        if not (is_always_excluded(rel) or rules.ignored(rel) or _gitignored(root, rel)):
            st, reason = probe(root, real_root, rel, cfg.workspace, attributes)
            if st is not None:
                data, reason = read_candidate(root, rel, cfg.workspace)
        if st is None or data is None:
            if reason is not None:
                skips.append((rel, reason, -1, -1))
            if rel in known:
                removed.append(rel)
            continue
        old = known.get(rel)
        digest = blob_id(data)
        if old is not None and old[0] == digest and old[3] == 2:
            continue
        label, _ = language_for(rel)
        listed.append((rel, label, digest, len(data), st.st_mtime_ns, _lines(data)))
        todo.append((rel, st.st_mtime_ns))
    if not todo and not removed:
        store.set_skipped(skips)
        return UpdateResult((), ())
    set_changed = bool(removed) or any(p not in known for p, _ in todo)
    if set_changed:
        store.set_meta({"resolve_pending": "1"})
    if removed:
        store.delete_files(removed)
    store.set_skipped(skips, [p for p, _ in todo])
    store.list_files(listed)
    resolver = _resolver(root, store.paths())
    _parse_and_write(
        store,
        root,
        todo,
        resolver=resolver,
        max_tokens=cfg.index.chunk_max_tokens,
        n_workers=1,
        blobs=None,
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


# ------------------------------------------------------------------ stages 3 and 4


def _reresolve(store: IndexStore, resolver: Resolver) -> None:
    languages = {f.path: f.language for f in store.files()}
    changes: list[tuple[str, str, int, str | None]] = []
    for path, spec, line, resolved in store.import_specs():
        _, target = resolver.resolve(languages.get(path, ""), path, spec)
        if target != resolved:
            changes.append((path, spec, line, target))
    store.set_import_resolutions(changes)


def _refresh_cochange(
    root: Path, store: IndexStore, cfg: Config, paths: set[str], file_set_changed: bool
) -> list[str]:
    if cfg.index.cochange_commits <= 0 or not git.is_git_repo(root):
        if store.meta("cochange_key") not in (None, ""):
            store.history.set_cochange([], "")
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
    store.history.set_cochange(edges, key)
    return []
