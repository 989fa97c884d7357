"""The history-mined context benchmark (``benchmarks/ctxbench.md``), in process.

Its harness (a copy of ``../shared/bench``, ``SCRATCH/ctxbench/run.py``) scores packs;
:func:`load_harness` loads that file as a module so in-process runners score with the
very same functions (:class:`Harness` names the ones used here). Beside it: the task
files, a cached copy of each snapshot's index (keyed by the indexer's code), the
adapter's ``as_of`` rule, and a dumped pack read back block by block.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from codelibrarian.api import Librarian

__all__ = [
    "DOC",
    "TEST",
    "TUNING",
    "Harness",
    "Task",
    "as_of",
    "blocks",
    "checkout",
    "dump_arguments",
    "edit_lines",
    "index_key",
    "keep_state",
    "load_harness",
    "load_tasks",
    "locus_lines",
    "norm_line",
    "prepare",
    "read_tasks",
]

#: one task of a task file: ``id``, ``query``, ``parent``, ``commit``, ``gold``, ``modes``
Task = dict[str, Any]
#: the tuning split's repositories (every other development repository is dev2's)
TUNING = ("click", "httpx", "logrus", "express")
#: a test file's path, and a documentation file's
TEST = re.compile(r"(^|/)(tests?|testsuite|spec)/|(^|/)test_|_test\.|\.test\.|_spec\.")
DOC = re.compile(r"\.(md|rst|txt|html|adoc)$|(^|/)docs?/", re.IGNORECASE)
_SRC = Path(__file__).resolve().parents[2] / "src"
_DAY = 86_400
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_HEAD = re.compile(r"^### (.*) \[([^\]]+)\]")
_PATH = re.compile(r"^(\S+?)(?::([0-9,\-]+))?$")


class Harness(Protocol):
    """The functions of the harness's ``run.py`` (and its ``common.py``) used here."""

    def pick(self, tasks: list[Task], n: int | None) -> list[Task]: ...
    def checkout(self, work_dir: str, commit: str) -> None: ...
    def tracked_files(self, work_dir: str) -> list[str]: ...
    def read_text_file(self, path: str) -> str | None: ...
    def git(self, repo: str, *args: str) -> str: ...
    def count_tokens(self, text: str) -> int: ...
    def unique_lines(self, gold: str, contents: dict[str, str]) -> set[str]: ...
    def edit_locus(self, src: str, parent: str, commit: str, path: str) -> list[str]: ...
    def locus_data(
        self, src: str, task: Task, contents: dict[str, str]
    ) -> dict[str, tuple[set[str], set[str]]]: ...
    def path_present(self, text: str, path: str) -> bool: ...
    def norm_lines(self, text: str) -> set[str]: ...
    def _norm(self, line: str) -> str: ...
    def edit_scores(
        self,
        gold_eval: list[str],
        locus: dict[str, tuple[set[str], set[str]]],
        text: str,
        plines: set[str],
    ) -> list[float]: ...
    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]: ...
    def table(
        self,
        summary: dict[str, dict[str, Any]],
        index_times: dict[str, float],
        warmups: dict[str, float],
        title: str,
    ) -> str: ...


def load_harness(bench: Path) -> Harness:
    """The harness's ``run.py`` as a module (its scoring functions), without the
    re-execution with its own venv that running it does."""
    sys.modules.setdefault("rank_bm25", types.ModuleType("rank_bm25"))  # unused here
    spec = importlib.util.spec_from_file_location("ctxbench_run", bench / "run.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no harness at {bench / 'run.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return cast("Harness", module)


def norm_line(run: Harness, line: str) -> str:
    """One line as the harness compares lines for edit recall (whitespace and gutter
    characters stripped): the harness's own ``_norm``, the one place it is called."""
    return run._norm(line)


def read_tasks(bench: Path, repo: str, tasks_dir: Path | None = None) -> list[Task]:
    """The tasks of one repository's task file, in file order (oldest first)."""
    path = (tasks_dir or bench / "tasks") / f"{repo}.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def load_tasks(bench: Path) -> dict[str, Task]:
    """Every task of the harness copy's task files, by id."""
    tasks: dict[str, Task] = {}
    for path in sorted((bench / "tasks").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                task = json.loads(line)
                tasks[task["id"]] = task
    return tasks


def as_of(repo: Path) -> int:
    """One day after the HEAD commit's time: no file gets a git-recency boost, and the
    pack does not depend on the day it is composed."""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return int(out) + _DAY
    except (subprocess.CalledProcessError, ValueError):
        return 2_000_000_000


def keep_state(repo: Path, name: str = ".bench-cache-librarian") -> None:
    """Keep the index across the harness's checkouts.

    The harness runs ``git clean -ffdx`` at every checkout, sparing only names that
    start with ``.bench-cache``. The state lives in ``.bench-cache-librarian`` and
    ``.librarian`` is a symlink to it, so each commit's prepare step updates the
    index incrementally, as it would for a user moving between commits. Two
    builds compared in one run each keep their own folder (``--state``); the
    link is re-pointed on every call.
    """
    kept = repo / name
    link = repo / ".librarian"
    kept.mkdir(exist_ok=True)
    if link.is_symlink() or not link.exists():
        if link.is_symlink() and link.resolve() == kept.resolve():
            return
        if link.is_symlink():
            link.unlink()
        link.symlink_to(kept.name)


# ------------------------------------------------------------------ snapshots


def index_key(src: Path = _SRC) -> str:
    """Changes whenever the indexer's code does: cached index copies are keyed by it."""
    h = hashlib.sha256()
    for path in sorted((src / "codelibrarian" / "index").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".scm"):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


def checkout(run: Harness, work: Path, commit: str) -> None:
    """The harness's checkout, tried again after a pause when ``git clean`` fails (it
    exits 1 when a folder it removes is not empty yet, e.g. while the file system
    settles after the previous task's index was closed)."""
    for attempt in range(3):
        try:
            run.checkout(str(work), commit)
            return
        except subprocess.CalledProcessError:
            if attempt == 2:
                raise
            print(f"checkout of {commit[:10]} failed; trying again", file=sys.stderr)
            time.sleep(2.0)


def prepare(lib: Librarian, work: Path, cache: Path, parent: str) -> float:
    """Index the snapshot, from a cached copy when there is one (and keep a copy when
    there was none); closes ``lib``. Seconds spent."""
    state = work / ".librarian"
    db = state / "index.db"
    saved = cache / f"{parent}.db"
    started = time.perf_counter()
    if saved.is_file():
        state.mkdir(exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        shutil.copyfile(saved, db)
    lib.index()
    lib.close()
    if not saved.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(db)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        shutil.copyfile(db, saved)
    return time.perf_counter() - started


# ------------------------------------------------------------------ edit loci and packs


def _git_text(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return out.stdout.decode("utf-8", "replace")


def locus_lines(repo: Path, parent: str, commit: str, path: str) -> list[int]:
    """Pre-image line numbers of ``commit``'s edit locus in ``path`` (the harness's
    rule): the lines it removes, or for a pure insertion the two non-blank lines
    either side."""
    diff = _git_text(repo, "diff", "-U0", "--no-color", "--no-renames", parent, commit, "--", path)
    pre: list[str] | None = None
    out: list[int] = []
    for line in diff.split("\n"):
        found = _HUNK.match(line)
        if not found:
            continue
        start = int(found.group(1))
        count = 1 if found.group(2) is None else int(found.group(2))
        if count:
            out.extend(range(start, start + count))
            continue
        if pre is None:
            pre = _git_text(repo, "show", f"{parent}:{path}").split("\n")
        before = [i for i in range(min(start, len(pre)), 0, -1) if pre[i - 1].strip()][:2]
        after = [i for i in range(start + 1, len(pre) + 1) if pre[i - 1].strip()][:2]
        out.extend(sorted(before + after))
    return out


def edit_lines(repo: Path, parent: str, commit: str, path: str) -> list[int]:
    """:func:`locus_lines` kept as the harness keeps them: lines of 10+ characters."""
    pre = _git_text(repo, "show", f"{parent}:{path}").split("\n")
    return [
        n
        for n in locus_lines(repo, parent, commit, path)
        if 1 <= n <= len(pre) and len(pre[n - 1].strip()) >= 10
    ]


def blocks(text: str) -> list[dict[str, Any]]:
    """A Markdown pack's blocks: path, shown line numbers, kind and body lines."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            where = _PATH.match(head.group(1))
            shown: set[int] = set()
            for part in ((where.group(2) or "") if where else "").split(","):
                if "-" in part:
                    a, b = part.split("-")
                    shown.update(range(int(a), int(b) + 1))
            path = where.group(1) if where else head.group(1)
            out.append({"path": path, "shown": shown, "kind": head.group(2), "lines": []})
        elif out:
            out[-1]["lines"].append(line)
    return out


def dump_arguments(description: str | None) -> argparse.ArgumentParser:
    """The options of every reader of an in-process run's dumped packs
    (``ctxbench_fast.py --tag TAG --dump DIR``)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bench", required=True, type=Path, help="the harness copy (ctxbench/)")
    ap.add_argument("--tag", required=True, help="the run's tag")
    ap.add_argument("--dump", required=True, type=Path, help="the run's --dump folder")
    ap.add_argument("--cells", default="intent.2000,intent.8000", help="mode.budget, ...")
    return ap
