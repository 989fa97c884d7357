"""The run store: packs, per-run memory, handoffs and the journal of one run.

Layout under ``.librarian/runs/<id>/``::

    memory.json                      context_pack_uri per agent (+ the pack's hash)
    .lock                            serializes memory and journal updates (flock)
    context/<Agent>.lcp.json         one Local Context Pack per agent
    handoff/<From>→<To>.json         handoff packages (the arrow is U+2192)
    journal.md                       "# Run <id>", the goal, "### Team Panel" entries

Every file is addressable as ``resources://runs/<id>/<relative path>``;
:func:`resolve_resource` maps such a URI back to the file (the MCP server uses
it) and refuses anything outside the run folder. Packs, handoffs and the
memory are validated against their models on every write and every read.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..composer.determinism import digest
from ..errors import NotFound, UsageError
from ..workspace.files import content_hash
from ..workspace.private import private_dir, private_write
from ..workspace.state import State
from .budgets import check_agent
from .lcp import LocalContextPack, dump_model, dump_pack, parse_model, parse_pack

__all__ = [
    "RESOURCE_SCHEME",
    "RunMemory",
    "RunStore",
    "RunSummary",
    "new_run_id",
    "resolve_resource",
    "stamp",
]

RESOURCE_SCHEME = "resources://runs/"
ARROW = "→"
TEAM_PANEL = "### Team Panel"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def stamp(as_of: int) -> str:
    """``as_of`` as an ISO-8601 UTC timestamp."""
    return dt.datetime.fromtimestamp(as_of, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        raise UsageError(
            f"invalid run id {run_id!r}",
            hint="Run ids are 1-64 letters, digits, '.', '_' or '-', starting with a letter/digit.",
        )
    return run_id


def new_run_id(as_of: int, seed: str) -> str:
    """A fresh run id: the UTC time of ``as_of`` and 6 hex digits of ``seed``'s digest."""
    when = dt.datetime.fromtimestamp(as_of, dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{when}-{digest(seed)[:6]}"


class RunMemory(BaseModel):
    """Run-ephemeral memory: which pack each agent received (``memory.json``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    schema_: str = Field("codelibrarian.run-memory/1", alias="schema")
    run_id: str
    context_pack_uri: dict[str, str] = Field(default_factory=dict)
    pack_rev: dict[str, str] = Field(default_factory=dict)


class RunSummary(BaseModel):
    """One run as ``runs list`` shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    agents: list[str]
    handoffs: list[str]
    context_pack_uri: dict[str, str]
    journal_uri: str


def _atomic_write(path: Path, text: str) -> None:
    private_write(path, text)


class RunStore:
    """Reads and writes the files of runs under ``State(root).runs_dir``."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.root = state.root

    # ---------------------------------------------------------------- paths

    def run_dir(self, run_id: str) -> Path:
        return self.state.runs_dir / check_run_id(run_id)

    def pack_path(self, run_id: str, agent: str) -> Path:
        return self.run_dir(run_id) / "context" / f"{check_agent(agent)}.lcp.json"

    def handoff_path(self, run_id: str, source: str, target: str) -> Path:
        name = f"{check_agent(source)}{ARROW}{check_agent(target)}.json"
        return self.run_dir(run_id) / "handoff" / name

    def journal_path(self, run_id: str) -> Path:
        return self.run_dir(run_id) / "journal.md"

    def memory_path(self, run_id: str) -> Path:
        return self.run_dir(run_id) / "memory.json"

    def uri(self, path: Path) -> str:
        """``resources://runs/<id>/...`` of a file inside a run folder."""
        rel = path.relative_to(self.state.runs_dir).as_posix()
        return RESOURCE_SCHEME + rel

    def rel(self, path: Path) -> str:
        """Repository-relative POSIX path of a run file."""
        return path.relative_to(self.root).as_posix()

    def exists(self, run_id: str) -> bool:
        return self.run_dir(run_id).is_dir()

    # ---------------------------------------------------------------- packs

    def write_pack(self, pack: LocalContextPack) -> Path:
        """Validate and write ``pack``; remember its URI for its agent."""
        path = self.pack_path(pack.run_id, pack.agent)
        text = dump_pack(pack, str(path))
        self.state.ensure()
        with self.locked(pack.run_id):
            _atomic_write(path, text)
            memory = self.memory(pack.run_id)
            memory.context_pack_uri[pack.agent] = self.uri(path)
            memory.pack_rev[pack.agent] = content_hash(text.encode("utf-8"))
            self._write_memory(memory)
        return path

    @contextlib.contextmanager
    def locked(self, run_id: str) -> Iterator[None]:
        """Serialize read-modify-write of a run's memory and journal across processes."""
        folder = self.run_dir(run_id)
        private_dir(folder)
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def read_pack(self, run_id: str, agent: str) -> LocalContextPack:
        """The validated pack of ``agent`` in ``run_id`` (NotFound when there is none)."""
        path = self.pack_path(run_id, agent)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFound(
                f"run {run_id} has no context pack for {agent}",
                hint=f"Create it with `librarian pack --run {run_id} --agent {agent} --task ...`.",
            ) from None
        return parse_pack(text, str(path))

    def has_pack(self, run_id: str, agent: str) -> bool:
        return self.pack_path(run_id, agent).is_file()

    # --------------------------------------------------------------- memory

    def memory(self, run_id: str) -> RunMemory:
        path = self.memory_path(run_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return RunMemory(schema="codelibrarian.run-memory/1", run_id=run_id)
        return parse_model(RunMemory, text, str(path), "run memory")

    def _write_memory(self, memory: RunMemory) -> None:
        memory.context_pack_uri = dict(sorted(memory.context_pack_uri.items()))
        memory.pack_rev = dict(sorted(memory.pack_rev.items()))
        _atomic_write(self.memory_path(memory.run_id), dump_model(memory))

    def context_pack_uri(self, run_id: str, agent: str) -> str | None:
        """The remembered pack URI of ``agent``, or None."""
        return self.memory(run_id).context_pack_uri.get(check_agent(agent))

    # -------------------------------------------------------------- journal

    def journal_append(self, run_id: str, entry: str, *, goal: str = "") -> Path:
        """Append one line to the ``### Team Panel`` section (creating the journal)."""
        with self.locked(run_id):
            return self._journal_append(run_id, entry, goal=goal)

    def _journal_append(self, run_id: str, entry: str, *, goal: str) -> Path:
        path = self.journal_path(run_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            lines = [f"# Run {run_id}", ""]
            if goal:
                lines += [f"Goal: {' '.join(goal.split())}", ""]
            text = "\n".join([*lines, TEAM_PANEL]) + "\n"
        line = "- " + " ".join(entry.split()) + "\n"
        rows = text.splitlines(keepends=True)
        try:
            at = next(i for i, r in enumerate(rows) if r.rstrip() == TEAM_PANEL)
        except StopIteration:
            if rows and not rows[-1].endswith("\n"):
                rows[-1] += "\n"
            rows += ["\n", f"{TEAM_PANEL}\n"]
            at = len(rows) - 1
        end = next(
            (i for i in range(at + 1, len(rows)) if rows[i].startswith(("# ", "## ", "### "))),
            len(rows),
        )
        while end > at + 1 and not rows[end - 1].strip():
            end -= 1
        if end == at + 1:
            rows.insert(end, "\n")
            end += 1
        rows.insert(end, line)
        _atomic_write(path, "".join(rows))
        return path

    # ----------------------------------------------------------------- list

    def run_ids(self) -> tuple[str, ...]:
        base = self.state.runs_dir
        if not base.is_dir():
            return ()
        return tuple(sorted(p.name for p in base.iterdir() if p.is_dir() and _RUN_ID.match(p.name)))

    def summary(self, run_id: str) -> RunSummary:
        if not self.exists(run_id):
            raise NotFound(f"no run {run_id!r}", hint="List runs with `librarian runs list`.")
        folder = self.run_dir(run_id)
        agents = sorted(p.name.removesuffix(".lcp.json") for p in folder.glob("context/*.lcp.json"))
        handoffs = sorted(p.name.removesuffix(".json") for p in folder.glob("handoff/*.json"))
        return RunSummary(
            run_id=run_id,
            agents=agents,
            handoffs=handoffs,
            context_pack_uri=self.memory(run_id).context_pack_uri,
            journal_uri=self.uri(self.journal_path(run_id)),
        )


def resolve_resource(root: Path, uri: str) -> Path:
    """The file behind ``resources://runs/<id>/...`` inside ``root/.librarian/runs``.

    Raises :class:`UsageError` for another scheme or a path leaving the run
    folder, :class:`NotFound` when the file does not exist.
    """
    if not uri.startswith(RESOURCE_SCHEME):
        raise UsageError(
            f"not a run resource: {uri!r}", hint=f"Run resources start with {RESOURCE_SCHEME}."
        )
    rest = uri[len(RESOURCE_SCHEME) :]
    parts = rest.split("/")
    if len(parts) < 2 or any(p in ("", ".", "..") for p in parts) or "\\" in rest:
        raise UsageError(f"invalid run resource {uri!r}", hint="Use resources://runs/<id>/<file>.")
    check_run_id(parts[0])
    base = State(root).runs_dir.resolve()
    path = base.joinpath(*parts).resolve()
    if base not in path.parents:
        raise UsageError(f"run resource {uri!r} leaves the run folder")
    if not path.is_file():
        raise NotFound(f"no run resource {uri}", hint="List runs with `librarian runs show ID`.")
    return path
