"""``librarian serve``: the MCP server, built with the official ``mcp`` SDK.

One server serves one repository through one :class:`~codelibrarian.api.Librarian`.
Tools (``tools.py``) run in a worker thread, one at a time, so a long
composition never blocks the protocol loop and the facade is never used from
two threads at once. Before a tool that reads the index runs, the index is
refreshed incrementally (changed files only), so a long-lived server never
answers from a stale index.

Errors: arguments are checked before a tool runs, against a model of the tool's
parameters that refuses unknown names: a misnamed argument is an error that
names the valid ones, and a bad value an error that names the argument and the
rule (never pydantic's raw text, never the value). A
:class:`~codelibrarian.errors.LibrarianError` becomes a tool error with the
library's message and hint; anything else a tool error naming the exception
type. Every error text is short (at most 600 characters), has the repository's
path replaced by ``.`` and other absolute paths by ``<path>``, and passes the
secret gate. In every case the server keeps serving.

Output discipline: over stdio, stdout carries protocol messages only (the SDK
diverts file descriptor 1 while it serves; the library never prints). Logs go
to stderr and carry tool names, error codes, counts and durations — never
paths, arguments or content.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import logging
import re
import sys
import threading
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .. import __version__
from ..config import Config
from ..errors import LibrarianError, NotFound, UsageError
from . import resources as res
from .planning_tools import PLANNING_TOOLS
from .run_tools import RUN_TOOLS
from .tools import TOOLS

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from pydantic import BaseModel

    from ..api import Librarian
    from ..gate import SecretGate

__all__ = ["LOOPBACK_HOSTS", "Transport", "build_server", "serve"]

Transport = Literal["stdio", "http"]
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
#: tools that read the index and so refresh it first
_READS_INDEX = frozenset({"compose_context", "query_codebase", "build_context_pack"})
#: tools that only read (MCP annotation hint)
_READ_ONLY = frozenset({"query_codebase", "explain_decision", "run_status", "plan", "advise"})

#: longest error text returned to the client
_MAX_ERROR_CHARS = 600
#: an absolute path in an error text (POSIX or Windows)
_ABS_PATH = re.compile(r"(?<![\w.:/])(?:/|[A-Za-z]:\\)[^\s'\"()<>:;,]+")

logger = logging.getLogger("codelibrarian.mcp")

_INSTRUCTIONS = (
    "codelibrarian gives you the right context for a coding task under a hard token budget. "
    "Start with compose_context(task) for a ready-made context pack; use query_codebase(intent) "
    "to find code; build_context_pack(goal, agent) writes a Local Context Pack you can read as "
    "resources://runs/{id}/context/{agent}.lcp.json; explain_decision(decision_id) says why "
    "each artifact was chosen or left out; index_status() reports the index; plan(intent) says "
    "which technique workflow fits a task, step by step, with costs and alternatives; advise() "
    "says which workflows fit this codebase. To work a task through a technique workflow (e.g. "
    "tc_root_cause_recovery), run_start(composition, task) hands you its first step with its own "
    "context pack; run_submit(run_id, step, output) records your output and hands you the next; "
    "run_status(run_id) says where it stands. Every tool takes max_tokens and never returns more."
)


def _configure_logging(level: int) -> None:
    """Our own stderr handler; the SDK's loggers stay at WARNING (they may quote messages)."""
    if not any(getattr(h, "_codelibrarian", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        handler._codelibrarian = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)


class _Runner:
    """Runs tool functions against one Librarian: serialized, off the event loop."""

    def __init__(self, lib: Librarian) -> None:
        self.lib = lib
        self._lock: Any = None

    def public(self, text: str) -> str:
        """An error text as the client sees it (see the module docstring)."""
        return public_message(text, self.lib.root, self.lib.gate)

    async def call(self, name: str, fn: Callable[..., str], kwargs: dict[str, Any]) -> str:
        import anyio
        import anyio.to_thread
        from mcp.server.mcpserver.exceptions import ToolError

        if self._lock is None:
            self._lock = anyio.Lock()
        started = time.monotonic()
        async with self._lock:
            try:
                text = await anyio.to_thread.run_sync(
                    functools.partial(self._run, name, fn, kwargs)
                )
            except LibrarianError as exc:
                logger.info("tool=%s error=%s ms=%d", name, exc.code, _ms(started))
                raise ToolError(self.public(str(exc))) from None
            except Exception as exc:
                logger.error("tool=%s crash=%s ms=%d", name, type(exc).__name__, _ms(started))
                raise ToolError(
                    self.public(f"{name} failed: {type(exc).__name__}: {exc}")
                ) from None
        logger.info("tool=%s ok chars=%d ms=%d", name, len(text), _ms(started))
        return text

    def _run(self, name: str, fn: Callable[..., str], kwargs: dict[str, Any]) -> str:
        if name in _READS_INDEX:
            self.lib.index()
        return fn(self.lib, **kwargs)


def public_message(text: str, root: Path, gate: SecretGate) -> str:
    """``text`` short, path-free and through the secret gate (an error leaves the server)."""
    for form in {str(root), root.as_posix()}:
        text = text.replace(form + "/", "").replace(form, ".")
    home = str(Path.home())
    if len(home) > 1:
        text = text.replace(home, "~")
    text = _ABS_PATH.sub("<path>", text)
    text = gate.clean(text, surface="mcp", kind="error")
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + " [...]"


def argument_model(name: str, fn: Callable[..., str]) -> type[BaseModel]:
    """A model of the tool's arguments that refuses names it does not know."""
    from pydantic import ConfigDict, create_model

    fields: dict[str, Any] = {}
    for p in _tool_signature(fn).parameters.values():
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (p.annotation, default)
    model: type[BaseModel] = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def check_arguments(name: str, model: type[BaseModel], arguments: dict[str, Any]) -> str | None:
    """None when ``arguments`` are valid, else a short message naming what is wrong."""
    from pydantic import ValidationError

    try:
        model.model_validate(arguments)
    except ValidationError as exc:
        valid = list(model.model_fields)
        problems: list[str] = []
        for err in exc.errors()[:3]:
            where = ".".join(str(p) for p in err["loc"])
            top = str(err["loc"][0]) if err["loc"] else ""
            if err["type"] == "extra_forbidden":
                close = difflib.get_close_matches(top, valid, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(f"unknown argument {top!r}{hint}")
            elif err["type"] == "missing":
                problems.append(f"missing required argument {where!r}")
            else:
                problems.append(f"argument {where!r}: {err['msg']}")
        return f"{name}: {'; '.join(problems)}. Valid arguments: {', '.join(valid)}."
    return None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _tool_signature(fn: Callable[..., str]) -> inspect.Signature:
    """``fn``'s signature without its first (``lib``) parameter, annotations resolved."""
    hints = typing.get_type_hints(fn, localns={"Librarian": object}, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())[1:]
    return inspect.Signature(
        [p.replace(annotation=hints[p.name]) for p in params], return_annotation=str
    )


def _server_class() -> type[MCPServer[Any]]:
    """``MCPServer`` that checks a tool's arguments before the SDK does (see above)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    class LibrarianServer(MCPServer[Any]):
        validators: dict[str, type[BaseModel]]

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            model = self.validators.get(name)
            if model is not None:
                problem = check_arguments(name, model, dict(arguments or {}))
                if problem is not None:
                    logger.info("tool=%s error=invalid_arguments", name)
                    raise ToolError(problem)
            return await super().call_tool(name, arguments, context)

    return LibrarianServer


def _register_tool(srv: MCPServer[Any], runner: _Runner, name: str, fn: Callable[..., str]) -> None:
    from mcp.types import ToolAnnotations

    async def tool(**kwargs: Any) -> str:
        return await runner.call(name, fn, kwargs)

    tool.__signature__ = _tool_signature(fn)  # type: ignore[attr-defined]
    tool.__name__ = name
    tool.__doc__ = fn.__doc__
    srv.add_tool(
        tool,
        name=name,
        description=inspect.cleandoc(fn.__doc__ or name),
        annotations=ToolAnnotations(
            read_only_hint=name in _READ_ONLY or None,
            destructive_hint=False,
            open_world_hint=False,
        ),
        structured_output=False,
    )


def _register_resources(srv: MCPServer[Any], lib: Librarian) -> None:
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    def read(run_id: str, kind: str, name: str) -> str:
        try:
            text = res.read_artifact(lib, run_id, kind, name)
        except NotFound as exc:
            logger.info("resource=%s error=%s", kind, exc.code)
            raise ResourceNotFoundError(public_message(str(exc), lib.root, lib.gate)) from None
        except LibrarianError as exc:
            logger.info("resource=%s error=%s", kind, exc.code)
            raise ResourceError(public_message(str(exc), lib.root, lib.gate)) from None
        except (OSError, ValueError) as exc:  # unreadable or undecodable: no path in the log
            logger.error("resource=%s crash=%s", kind, type(exc).__name__)
            raise ResourceError(f"cannot read the {kind} artifact: {type(exc).__name__}") from None
        logger.info("resource=%s ok chars=%d", kind, len(text))
        return text

    @srv.resource(
        res.CONTEXT_TEMPLATE,
        name="run_context_pack",
        title="Local Context Pack of one agent of a run",
        description="The LCP JSON that build_context_pack wrote for {agent} in run {id}.",
        mime_type="application/json",
    )
    def context_pack(id: str, agent: str) -> str:
        return read(id, "context", agent)

    @srv.resource(
        res.HANDOFF_TEMPLATE,
        name="run_handoff",
        title="Handoff document of a run",
        description="The handoff JSON {name} of run {id}.",
        mime_type="application/json",
    )
    def handoff(id: str, name: str) -> str:
        return read(id, "handoff", name)

    @srv.resource(
        res.LEDGER_TEMPLATE,
        name="run_ledger",
        title="Evidence ledger of a workflow run",
        description="The hash-chained ledger (JSON Lines: ids, kinds, counts) of run {id}.",
        mime_type="application/jsonl",
    )
    def ledger(id: str) -> str:
        return read(id, "ledger", "ledger")

    @srv.resource(
        res.STEP_CONTEXT_TEMPLATE,
        name="run_step_context",
        title="Context pack of one step of a workflow run",
        description="The context pack composed for dispatch {dispatch} of run {id}.",
        mime_type="text/markdown",
    )
    def step_context(id: str, dispatch: str) -> str:
        return read(id, "steps", dispatch)

    @srv.resource(
        res.RUNS_INDEX_URI,
        name="runs",
        title="Runs of this workspace",
        description="Every run with the resource URIs of its context packs and handoffs.",
        mime_type="application/json",
    )
    def runs_index() -> str:
        return res.runs_index_text(lib)


def _warm_up() -> None:
    """Load the tokenizers and the heavy modules while the client connects.

    Imports and tokenizer tables only: no Librarian state is touched, so this
    cannot race a tool call (which simply waits on Python's import locks).
    """
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # bpe-openai's first load
            from ..tokens import get_tokenizer

            get_tokenizer("gpt-4o").count("warm up")
        import importlib

        for name in ("sources", "index.indexer", "index.parse", "query.pipeline"):
            importlib.import_module(f"codelibrarian.{name}")
    except Exception as exc:  # warming is an optimisation; the tools report real failures
        logger.info("warm-up skipped: %s", type(exc).__name__)


def build_server(
    repo: str | Path, *, config: Config | None = None, log_level: int = logging.INFO
) -> MCPServer[Any]:
    """An ``MCPServer`` with the context and workflow-run tools and the run resources.

    Returns the SDK's ``mcp.server.mcpserver.MCPServer`` (imported lazily, so
    importing this module stays cheap); run it with :func:`serve`, or connect an
    in-process ``mcp.Client(server)`` in tests.
    """

    from ..api import Librarian

    _configure_logging(log_level)
    lib = Librarian(repo, config=config)
    srv = _server_class()(
        "codelibrarian",
        title="codelibrarian",
        instructions=_INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )
    runner = _Runner(lib)
    srv.validators = {}  # type: ignore[attr-defined]
    tools = {**TOOLS, **RUN_TOOLS, **PLANNING_TOOLS}
    for name, fn in tools.items():
        _register_tool(srv, runner, name, fn)
        srv.validators[name] = argument_model(name, fn)  # type: ignore[attr-defined]
    _register_resources(srv, lib)
    logger.info("server ready tools=%d", len(tools))
    return srv


def serve(
    repo: str | Path,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    config: Config | None = None,
) -> None:
    """Serve ``repo`` until the client disconnects (stdio) or the process is stopped (http).

    Streamable HTTP listens on a loopback address only, at ``http://host:port/mcp``.
    """
    if transport not in ("stdio", "http"):
        raise UsageError(f"unknown transport {transport!r}", hint="Use stdio or http.")
    if transport == "http":
        if host not in LOOPBACK_HOSTS:
            raise UsageError(
                f"refusing to listen on {host}: the server binds to loopback only",
                hint="Use --host 127.0.0.1 (or ::1).",
            )
        if not 0 < port < 65536:
            raise UsageError(f"invalid port {port}", hint="Use a port between 1 and 65535.")
    srv = build_server(repo, config=config)
    threading.Thread(target=_warm_up, name="codelibrarian-warm-up", daemon=True).start()
    if transport == "stdio":
        logger.info("serving transport=stdio")
        srv.run("stdio")
    else:
        logger.info("serving transport=http port=%d", port)
        srv.run("streamable-http", host=host, port=port)
