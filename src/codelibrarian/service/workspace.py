"""One open workspace: config, state, the index connection and what changed.

A :class:`WorkspaceSession` is long-lived (an MCP server keeps one per
repository), so it remembers what is cheap to check and expensive to rebuild:
the git-status signature that decides whether the index must be refreshed, the
commit times recency is computed from, and a memo of per-generation values the
sources share (file list, file texts, fingerprint).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config, find_config_file, load_config
from ..errors import UnverifiedByTrace, UsageError
from ..options import AS_OF, MAX_AS_OF, check_text
from ..trigger import Trigger
from ..workspace.git import (
    FileDiff,
    diff_against,
    head_commit,
    is_git_repo,
    parse_unified_diff,
    recent_commits,
    working_diff,
)
from ..workspace.state import State
from .quietwatch import QuietWatch
from .treestamp import TreeStamp, git_stats

if TYPE_CHECKING:
    from ..gate import SecretGate
    from ..index.indexer import IndexStats
    from ..index.storage import Storage
    from ..persist.scans import ScanCache
    from ..policy_engine import PolicyEngine
    from ..sources import Source

__all__ = ["MAX_AS_OF", "IndexReadiness", "WorkspaceSession", "check_text", "now_or"]


def now_or(as_of: int | None) -> int:
    """``as_of`` when given (checked), else the clock (epoch seconds): the shell's one
    clock read."""
    if as_of is None:
        return int(time.time())
    checked: int = AS_OF.check(as_of)
    return checked


def _config_stamp(root: Path) -> object:
    """Which config file applies to ``root``, with its size and mtime (None: defaults)."""
    found = find_config_file(root)
    if found is None:
        return None
    try:
        st = found[0].stat()
    except OSError:
        return str(found[0])
    return (str(found[0]), st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class IndexReadiness:
    """How much of the index a call could use, and what it said about it.

    ``parsed`` of ``files`` are fully indexed (symbols, references, imports,
    chunks, full-text search); the rest are listed only. ``writer`` is the pid of
    the process finishing the index (a background run, an index, ``--watch``) when
    there is one; ``notes`` are what this call's index run had to say once (a
    damaged index rebuilt).
    """

    files: int
    parsed: int
    writer: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def pending(self) -> int:
        return max(0, self.files - self.parsed)

    def degradations(self) -> tuple[UnverifiedByTrace, ...]:
        """What was not available, as P23 ``unverified_by_trace`` records."""
        out: list[UnverifiedByTrace] = []
        if self.pending:
            then = (
                f"is being indexed in the background (pid {self.writer})"
                if self.writer is not None
                else "will be indexed on the next call"
            )
            out.append(
                UnverifiedByTrace(
                    "index_partial",
                    f"symbols, references and full-text search cover {self.parsed} of "
                    f"{self.files} files; the rest {then}",
                )
            )
        out.extend(UnverifiedByTrace("index_rebuilt", note) for note in self.notes)
        return tuple(out)


class WorkspaceSession:
    """The shell's view of one repository (see the module docstring)."""

    def __init__(self, repo_path: str | os.PathLike[str], config: Config | None = None) -> None:
        root = Path(repo_path).expanduser().resolve()
        if not root.is_dir():
            raise UsageError(f"{repo_path} is not a directory", hint="Pass a repository folder.")
        self.root = root
        self._config_stamp = _config_stamp(root)
        self.config = config if config is not None else load_config(root)
        self.state = State(root)
        self._sources: tuple[Source, ...] | None = None
        self._store: Storage | None = None
        self._indexed = False
        self._signature: tuple[Any, ...] | None = None
        self._head: str | None = None
        self._tracked_clean = False
        self._is_git: bool | None = None
        self._commit_times: tuple[str | None, dict[str, int]] | None = None
        #: the tree's stamp taken before the last full ``git status`` and the untracked
        #: files it listed: while the stamp holds, so does that list
        self._status: tuple[TreeStamp, tuple[str, ...]] | None = None
        self._stampable = True
        #: the quick ``git status`` a full call started for the next call, watched
        self._primed: _Primed | None = None
        #: armed before the last quick ``git status``: while its queue is empty, that
        #: call's signature, HEAD and clean flag still hold (``quietwatch.py``)
        self._quiet: tuple[QuietWatch, tuple[Any, ...], str | None, bool] | None = None
        self._watchable = True
        self.memo: dict[str, Any] = {}

    # the policy engine, its secret gate and the stored scans load on first use: an
    # index run needs none of them, and a fresh ``librarian index`` process would pay
    # for importing the composer and the secret rules

    @cached_property
    def scans(self) -> ScanCache:
        """The secret spans found in files so far, kept in ``.librarian/cache``."""
        from ..persist.scans import ScanCache

        return ScanCache(self.state.cache_dir / "secret-spans.json")

    @cached_property
    def policy(self) -> PolicyEngine:
        """Sensitive files and the secret gate of this workspace's config."""
        from ..policy_engine import PolicyEngine

        return PolicyEngine(self.config, spans=self.scans)

    @property
    def gate(self) -> SecretGate:
        """The secret gate every outgoing text of this workspace passes (docs/secrets.md)."""
        return self.policy.gate

    def one_call(self) -> None:
        """This session makes one call (a CLI command's): its first call does not stamp,
        watch or start a status for a next call that never comes."""
        self._stampable = False

    def config_changed(self) -> bool:
        """Whether the repository's config file changed since this session loaded it."""
        return _config_stamp(self.root) != self._config_stamp

    # ------------------------------------------------------------ the index

    def index(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        on_wait: Callable[[Any, float], None] | None = None,
        on_stage: Callable[[str], None] | None = None,
        check: bool = False,
        choose: Callable[[list[str]], list[str]] | None = None,
        stamp: str | None = None,
    ) -> IndexStats:
        """Build or refresh the index incrementally; returns the indexer's stats.

        ``on_wait`` hears who holds the index lock while waiting for it, ``on_stage``
        each stage's name; ``check`` runs ``quick_check`` first (see ``index_workspace``).
        """
        from ..index.indexer import index_workspace

        self.state.ensure()
        # the index run writes only .librarian/, which no watch covers: a freshness
        # watch (and the status started under it) still stands for the tree after it
        self.close(keep_watch=True)
        stats = index_workspace(
            self.root,
            self.config,
            progress=progress,
            on_wait=on_wait,
            on_stage=on_stage,
            check=check,
            choose=choose,
            stamp=stamp,
        )
        self._indexed = True
        return stats

    def open_store(self) -> Storage:
        """The index connection, opened (and migrated) on first use."""
        from ..index.store import open_store

        if self._store is None:
            # not read-only: the store caches derived graphs for the next call
            self._store = open_store(self.root)
        return self._store

    def close(self, *, keep_watch: bool = False) -> None:
        """Release the index connection (and keep what the secret gate learned).

        ``keep_watch``: a long-lived process (a resident server) that releases the
        connection between calls keeps its freshness watch armed, so the next call
        still knows without git whether the tree changed (``quietwatch.py``); the
        watch stands for the tree, not for the connection."""
        self.save_scans()
        if self._quiet is not None and not keep_watch:
            self._quiet[0].close()
            self._quiet = None
        if self._primed is not None and not keep_watch:
            self._primed.stop()
            self._primed = None
        if self._store is not None:
            self._store.close()
            self._store = None

    def ensure_index(
        self,
        *,
        refresh: bool,
        progress: Callable[[int, int], None] | None = None,
        task: str | None = None,
        files: Iterable[str] = (),
    ) -> IndexReadiness:
        """Index on first use; refresh when the workspace may have changed since.

        In a git repository the check is cheap: HEAD, ``git status`` and the size
        and modification time of every file it lists; a digest of them (with the
        config and parser versions) is stored when an index run completes, so a
        fresh process skips the run when nothing moved. Outside git every refresh
        runs the (incremental) indexer.

        Answer first: with a ``task`` (compose, query), when more than
        ``[index].first_files`` files wait to be parsed, only the files the task
        needs most are parsed now (``priority.first_files``) and the rest goes to a
        background run (or the next calls, with ``[index].background = false``).
        When another process is writing the index, this does not wait: it answers
        from what that process has committed. The returned readiness says which.
        """
        from ..index.lock import GRAPHS_COMMAND, holder

        db = self.state.index_path
        exists = db.exists()
        if exists and self._indexed and not refresh:
            self._tracked_clean = False
            return self.readiness()
        writer = holder(db) if exists else None
        # a reader storing the graphs changes no content: look at the workspace as usual
        # (an index run, if one is needed, waits the moment it takes)
        if writer is not None and writer.command != GRAPHS_COMMAND:
            self._tracked_clean = False
            return self.readiness(writer=writer.pid)
        signature = self.workspace_signature()
        if exists and signature is not None:
            if self._indexed and signature == self._signature:
                ready = self.readiness()
                if not ready.pending:
                    return ready
            stamp = self._stamp(signature)
            if self.open_store().meta("workspace_stamp") == stamp:
                self._indexed, self._signature = True, signature
                return self.readiness()
        stats = self.index(
            progress=progress,
            choose=self._chooser(task, files),
            stamp=self._stamp(signature) if signature is not None else None,
        )
        self._signature = signature
        pid = None
        if stats.pending and self.config.index.background:
            from ..index.background import start_background

            pid = start_background(self.root)
        notes = tuple(stats.notes) if stats.rebuilt else ()
        return IndexReadiness(stats.files, stats.files - stats.pending, pid, notes)

    def readiness(self, *, writer: int | None = None) -> IndexReadiness:
        """How far the committed index is (listed and parsed files)."""
        listed, parsed = self.open_store().progress()
        return IndexReadiness(listed, parsed, writer)

    def _stamp(self, signature: tuple[Any, ...]) -> str:
        from ..index.parse import parser_version

        ignore = self.root / ".librarianignore"
        try:
            st = ignore.stat()
            ignore_stamp: object = (st.st_size, st.st_mtime_ns)
        except OSError:
            ignore_stamp = None
        raw = repr((signature, self._config_stamp, ignore_stamp, parser_version()))
        return hashlib.blake2b(raw.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()

    def _chooser(
        self, task: str | None, files: Iterable[str]
    ) -> Callable[[list[str]], list[str]] | None:
        limit = self.config.index.first_files
        if task is None or limit <= 0:
            return None
        named = [str(f) for f in files]

        def choose(pending: list[str]) -> list[str]:
            if len(pending) <= limit:
                return pending
            from ..index.priority import first_files

            changed = [d.path for d in self.working_changes()] if self.is_git() else []
            first = first_files(self.root, pending, task, limit=limit, must=[*named, *changed])
            # nothing matched the task: still make progress, in path order
            return first or pending[:limit]

        return choose

    # ------------------------------------------------------------------ git

    def is_git(self) -> bool:
        if self._is_git is None:
            self._is_git = is_git_repo(self.root)
        return self._is_git

    def head(self, *, refreshed: bool) -> str | None:
        """HEAD: remembered from the last signature when ``refreshed``, else asked of git."""
        if not self.is_git():
            return None
        commitish = self._head if refreshed else None
        return commitish if commitish is not None else head_commit(self.root)

    def workspace_signature(self) -> tuple[Any, ...] | None:
        """HEAD, the paths ``git status`` lists and their size and mtime.

        A call that must list the untracked files (the first, or one after the tree
        changed) runs the full ``git status`` and, while git walks the tree, stamps it
        (``treestamp.py``) and watches every folder it stamps (``quietwatch.py``); it
        then starts a quick ``git status`` (tracked files only) in the background,
        watched from before it started. The next call takes that answer when the
        watch stayed quiet, and from then on a call that finds the watch quiet runs
        no git at all. When the watch saw a change but the stamp still holds (no file
        added, removed or renamed, no ignore rule or index entry changed), git is
        asked about tracked files only and the untracked ones the full call listed
        are re-read here. Every path gives the signature a full call would.
        """
        if not self.is_git():
            return None
        if self._quiet is not None:
            watch, signature, head, clean = self._quiet
            if watch.quiet():
                self._head, self._tracked_clean = head, clean
                return signature
            watch.close()
            self._quiet = None
        primed, self._primed = self._primed, None
        if primed is not None:
            got = primed.collect(self.root)
            if got is not None:
                signature, self._head, self._tracked_clean = got
                self._quiet = (primed.watch, signature, self._head, self._tracked_clean)
                return signature
        kept = self._status
        # armed before the stamp is checked: a change after the check shows in its queue
        armed = None
        if kept is not None and self._watchable:
            armed = QuietWatch.arm(self.root, kept[0].folders())
            self._watchable = armed is not None
        if kept is None or not kept[0].unchanged():
            if armed is not None:
                armed.close()
            return self._full_signature()
        status = _git_status(self.root, untracked=False)
        if status is None:
            if armed is not None:
                armed.close()
            self._status = None
            return None
        head, entries, tracked_clean, _ = status
        entries += [_stat_entry(self.root, rel) for rel in kept[1]]
        self._head = head
        # nothing staged or modified: the working diff against HEAD is empty
        self._tracked_clean = tracked_clean
        signature = (head, tuple(sorted(entries)))
        if armed is not None:
            self._quiet = (armed, signature, head, tracked_clean)
        return signature

    def _full_signature(self) -> tuple[Any, ...] | None:
        """The signature from a full ``git status``, the tree stamped and watched while
        git looks, and the next call's quick status started (see
        :meth:`workspace_signature`)."""
        root = self.root
        watch = None
        if self._stampable and self._watchable:
            watch = QuietWatch.open()
            self._watchable = watch is not None
        # git's own files before git starts, and the moment it starts: anything that
        # changes while git and the walk look makes the stamp untrusted
        before = git_stats(root)
        since = time.time_ns()
        proc = _start_status(root, untracked=True)
        stamp = None
        if proc is not None and self._stampable:
            stamp = TreeStamp.take(
                root, since=since, on_folder=None if watch is None else watch.add
            )
            self._stampable = stamp is None or stamp.usable
        out = _finish(proc)
        if out is None:
            if watch is not None:
                watch.close()
            self._status = None
            return None
        # git saw one state of its own files: the same before it started, when the walk
        # began and after it ended
        steady = (
            stamp is not None
            and stamp.usable
            and stamp.git_files() == before
            and git_stats(root) == before
        )
        head, entries, tracked_clean, untracked = _parse_status(root, out)
        self._head = head
        # nothing staged or modified: the working diff against HEAD is empty
        self._tracked_clean = tracked_clean
        signature = (head, tuple(sorted(entries)))
        self._status = (stamp, untracked) if steady and stamp is not None else None
        if watch is None:
            return signature
        if not watch.alive():
            self._watchable = False
            return signature
        # watched from here on: git's files unchanged since before git started means
        # git saw one state of them, and the quick status below starts after the watch
        quick = None
        if steady and watch.add_git(root) and git_stats(root) == before:
            quick = _start_status(root, untracked=False, locks=False)
        if quick is None:
            watch.close()
        else:
            self._primed = _Primed(watch, untracked, quick)
        return signature

    def trigger(
        self,
        task: str,
        *,
        as_of: int,
        event: str = "manual",
        files: Iterable[str] = (),
        base: str | None = None,
        diff_text: str | None = None,
        model: str | None = None,
        agent_role: str | None = None,
        refreshed: bool = True,
    ) -> Trigger:
        """The one way a task becomes a :class:`~codelibrarian.trigger.Trigger` here.

        The change is ``diff_text`` when given, else the diff from ``base``, else the
        working change (none outside git); HEAD is the one the last refresh saw when
        ``refreshed`` (else git is asked); the model defaults to ``[compose] model``.
        """
        return Trigger.create(
            task,
            as_of=as_of,
            event=event,
            files=files,
            base=base,
            diff_text=diff_text,
            no_change=not self.is_git() and diff_text is None,
            commitish=self.head(refreshed=refreshed),
            model=model or self.config.compose.model,
            agent_role=agent_role,
        )

    def changes(self, trigger: Trigger) -> tuple[FileDiff, ...]:
        """The trigger's change: a given diff, the diff against a base, or the working diff."""
        change = trigger.change
        if change.mode == "diff":
            return parse_unified_diff(change.diff_text or "")
        if change.mode == "base":
            return diff_against(self.root, change.base or "HEAD")
        if change.mode == "auto":
            if self._tracked_clean:
                return ()
            return working_diff(self.root)
        return ()

    def working_changes(self) -> tuple[FileDiff, ...]:
        """The staged + unstaged diff against HEAD (empty outside git)."""
        return working_diff(self.root) if self.is_git() else ()

    def recency(self, as_of: int, commitish: str | None) -> dict[str, int]:
        """Git recency bucket of each file touched by the last 50 commits."""
        if not self.is_git():
            return {}
        if self._commit_times is None or self._commit_times[0] != commitish:
            newest: dict[str, int] = {}
            for commit in recent_commits(self.root, limit=50):
                for path in commit.files:
                    if commit.timestamp > newest.get(path, -1):
                        newest[path] = commit.timestamp
            self._commit_times = (commitish, dict(sorted(newest.items())))
        times = self._commit_times[1]
        # one bucket per commit time (at most 50), not per file (a commit may touch 20k)
        from ..composer import recency_bucket

        buckets = {ts: recency_bucket(as_of - ts) for ts in set(times.values())}
        return {p: buckets[ts] for p, ts in times.items()}

    # ------------------------------------------------- shared, per generation

    def is_sensitive(self, path: str) -> bool:
        return self.policy.is_sensitive(path)

    def save_scans(self) -> None:
        """Persist the secret spans found in files scanned so far (when the folder exists)."""
        if "scans" in self.__dict__ and self.state.exists():
            self.scans.save()

    def bound_state(self) -> int:
        """Evict old decision logs and sidecars beyond ``[state]``'s caps (wall clock)."""
        from ..persist.bounds import prune_decisions

        caps = self.config.state
        return prune_decisions(
            self.state.decisions_dir,
            max_bytes=caps.decisions_max_mb * 1024 * 1024,
            max_age_seconds=caps.decisions_max_age_days * 86_400,
            now=int(time.time()),
        )

    def resolve_files(self, files: Iterable[str]) -> tuple[str, ...]:
        """Repository-relative, normalised paths for ``files`` (absolute ones inside the
        repository are made relative); a path outside the repository is a usage error."""
        out: dict[str, None] = {}
        for given in files:
            raw = given.strip().replace("\\", "/") if isinstance(given, str) else ""
            if not raw:
                continue
            if posixpath.isabs(raw):
                try:
                    rel = Path(posixpath.normpath(raw)).relative_to(self.root).as_posix()
                except ValueError:
                    rel = "../"
            else:
                rel = posixpath.normpath(raw)
            if rel == ".." or rel.startswith("../"):
                raise UsageError(
                    f"{given!r} is outside the repository",
                    hint="Pass paths inside the repository, relative to its root.",
                )
            if rel not in ("", "."):
                out[rel] = None
        return tuple(out)

    def file_warnings(self, files: Iterable[str], store: Storage) -> tuple[str, ...]:
        """What the caller should know about explicit ``files``: not indexed, or sensitive."""
        indexed = set(self.indexed_files(store))
        notes: list[str] = []
        for rel in files:
            rule = self.policy.sensitive_rule(rel)
            if rule is not None:
                notes.append(f"{rel}: a sensitive file ({rule}); excluded by policy")
            elif rel not in indexed:
                notes.append(f"{rel}: not in the index (missing, ignored or not text); left out")
        return tuple(notes)

    def sources(self) -> tuple[Source, ...]:
        """The registered sources (built-ins and plug-ins), loaded once."""
        if self._sources is None:
            from ..sources import load_sources

            self._sources = load_sources()
        return self._sources

    def generation_memo(self, store: Storage) -> dict[str, Any]:
        """The memo of the index's current generation (emptied when it moves on, or when
        the index was deleted and rebuilt: a new database restarts the counter)."""
        generation = (store.meta("created"), store.generation())
        if self.memo.get("generation") != generation:
            self.memo = {"generation": generation}
        return self.memo

    def indexed_files(self, store: Storage) -> tuple[str, ...]:
        """Every indexed path, sorted (memoised per generation)."""
        memo = self.generation_memo(store)
        files = memo.get("files")
        if files is None:
            files = tuple(sorted(r.path for r in store.files()))
            memo["files"] = files
        return tuple(files)

    def fingerprint(self, store: Storage) -> str:
        """The workspace fingerprint (HMAC of every path and content hash)."""
        cached = self.memo.get("fingerprint")
        if cached is None:
            from ..composer.fingerprint import workspace_fingerprint

            cached = workspace_fingerprint(
                self.state.secret(), ((r.path, r.content_hash) for r in store.files())
            )
            self.memo["fingerprint"] = cached
        return str(cached)


def _stat_entry(root: Path, rel: str) -> tuple[str, int, int]:
    try:
        st = (root / rel).stat()
    except OSError:
        return (rel, -1, -1)
    return (rel, st.st_size, st.st_mtime_ns)


def _start_status(
    root: Path, *, untracked: bool, locks: bool = True
) -> subprocess.Popen[bytes] | None:
    """``git status`` started (None when git cannot be run). ``locks=False``: git takes
    no lock and writes nothing (it may be stopped at any moment, and it leaves git's
    folder as it was for a watch armed over it)."""
    argv = [
        "git",
        *(() if locks else ("--no-optional-locks",)),
        "-C",
        str(root),
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        "--untracked-files=all" if untracked else "--untracked-files=no",
        "--no-renames",
    ]
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _finish(proc: subprocess.Popen[bytes] | None) -> bytes | None:
    """A started ``git status``'s output; None when it failed or took over a minute."""
    if proc is None:
        return None
    try:
        out = proc.communicate(timeout=60)[0]
    except (OSError, subprocess.SubprocessError):
        proc.kill()
        proc.wait()
        return None
    return out if proc.returncode == 0 else None


@dataclass(slots=True)
class _Primed:
    """A quick ``git status`` started for the next call, and the watch armed before it.

    While the watch stays quiet, nothing git or the signature looks at changed since
    that status started, so its answer (with the untracked files the full call listed,
    re-read) is the signature a full call would give now."""

    watch: QuietWatch
    untracked: tuple[str, ...]
    proc: subprocess.Popen[bytes]

    def collect(self, root: Path) -> tuple[tuple[Any, ...], str | None, bool] | None:
        """The signature, HEAD and clean flag; None when the watch saw a change (then
        it is closed) or git failed."""
        if not self.watch.quiet():
            self.stop()
            return None
        out = _finish(self.proc)
        if out is None:
            self.watch.close()
            return None
        head, entries, clean, _ = _parse_status(root, out)
        entries += [_stat_entry(root, rel) for rel in self.untracked]
        if not self.watch.quiet():  # a change while the files were read
            return None
        return (head, tuple(sorted(entries))), head, clean

    def stop(self) -> None:
        """End the watch and the status (it takes no lock: ``--no-optional-locks``)."""
        self.watch.close()
        self._reap()

    def _reap(self) -> None:
        if self.proc.returncode is None:
            if self.proc.poll() is None:
                self.proc.kill()
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                self.proc.communicate(timeout=10)

    def __del__(self) -> None:
        # dropped: the status is no longer wanted (the watch may live on in the session)
        self._reap()


def _git_status(
    root: Path, *, untracked: bool
) -> tuple[str | None, list[tuple[str, int, int]], bool, tuple[str, ...]] | None:
    """One ``git status``: HEAD, each listed path with its size and mtime, whether no
    tracked file is staged or modified, and the untracked paths (all of them, or none
    when ``untracked`` is false)."""
    out = _finish(_start_status(root, untracked=untracked))
    return None if out is None else _parse_status(root, out)


def _parse_status(
    root: Path, out: bytes
) -> tuple[str | None, list[tuple[str, int, int]], bool, tuple[str, ...]]:
    """What :func:`_git_status` returns, from the output of ``git status --porcelain=v2
    --branch -z``."""
    head: str | None = None
    entries: list[tuple[str, int, int]] = []
    others: list[str] = []
    tracked_clean = True
    for item in out.split(b"\0"):
        text = item.decode("utf-8", "surrogateescape")
        if text.startswith("# branch.oid "):
            oid = text.split(" ", 2)[2].strip()
            head = oid if oid != "(initial)" else None
            continue
        if text.startswith("1 "):
            rel = text.split(" ", 8)[8]
        elif text.startswith("u "):
            rel = text.split(" ", 10)[10]
        elif text.startswith("2 "):
            rel = text.split(" ", 9)[9]
        elif text.startswith("? "):
            rel = text[2:]
            others.append(rel)
        else:
            continue
        if not text.startswith("? "):
            tracked_clean = False
        entries.append(_stat_entry(root, rel))
    return head, entries, tracked_clean, tuple(others)
