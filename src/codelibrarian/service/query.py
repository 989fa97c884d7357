"""``query``: the six-stage query pipeline over the open index, with cited code."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from ..errors import LibrarianError, UnverifiedByTrace
from ..gate import RedactionLog
from ..requests import QueryRequest
from ..workspace.files import read_text
from .workspace import WorkspaceSession, now_or

if TYPE_CHECKING:
    from ..query.pipeline import PipelineResult
    from ..query.report import ProgressReporter
    from ..query.types import CancellationToken, QueryDepth

__all__ = ["CodeSnippet", "QueryResult", "run_query"]


@dataclass(frozen=True, slots=True)
class CodeSnippet:
    """The text of one cited chunk (secrets redacted; ``redacted_spans`` counts them)."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    text: str
    redacted_spans: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol": self.symbol,
            "text": self.text,
            "redacted_spans": self.redacted_spans,
        }


@dataclass(frozen=True, slots=True)
class QueryResult:
    """Outcome of :meth:`Librarian.query`: the pipeline's result and, if asked, the code."""

    pipeline: PipelineResult
    snippets: tuple[CodeSnippet, ...] = ()
    #: what the secret gate redacted (intent, snippets, summary): counts only
    redactions: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``completed``, ``partial`` (a stage failed; see ``pipeline.traces``) or ``cancelled``."""
        return self.pipeline.status

    @property
    def paths(self) -> tuple[str, ...]:
        """Ranked repository-relative paths (empty when there was no response)."""
        response = self.pipeline.response
        return () if response is None else response.paths

    @property
    def confidence(self) -> int:
        """The response's confidence, 0..1000 (0 without a response)."""
        response = self.pipeline.response
        return 0 if response is None else response.confidence

    def snippet(self, chunk_id: int) -> CodeSnippet | None:
        """The code of one cited chunk, when ``with_code`` was asked for."""
        for s in self.snippets:
            if s.chunk_id == chunk_id:
                return s
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.pipeline.to_dict(),
            "snippets": [s.to_dict() for s in self.snippets],
            "redactions": dict(self.redactions),
        }


def run_query(
    ws: WorkspaceSession,
    request: QueryRequest,
    *,
    reporter: ProgressReporter | None = None,
    cancel: CancellationToken | None = None,
) -> QueryResult:
    """Run the pipeline for ``request`` (see :meth:`codelibrarian.api.Librarian.query`)."""
    from ..query.capabilities import DEFAULT_FEATURES, FEATURES
    from ..query.pipeline import QuerySession, resolve_llm

    depth = cast("QueryDepth", request.depth)  # one of DEPTHS: the request checked it
    when = now_or(request.as_of)
    log = RedactionLog()
    # the intent is echoed (query id, terms, reasons) and may go to an LLM provider
    intent = ws.gate.clean(request.intent, surface="query", kind="intent", log=log)
    store = None
    degraded: tuple[UnverifiedByTrace, ...] = ()
    if request.build:
        degraded = ws.ensure_index(refresh=request.refresh, task=intent).degradations()
        store = ws.open_store()
    features = FEATURES if request.semantic else DEFAULT_FEATURES
    completer, _why = resolve_llm(ws.root, discover=request.llm)
    with QuerySession(
        ws.root,
        features=features,
        llm=completer,
        summarize_with_llm=request.summarize,
        store=store,
    ) as session:
        result = session.run(
            intent,
            depth=depth,
            limit=request.limit,
            budget=request.budget,
            as_of=when,
            reporter=reporter,
            cancel=cancel,
        )
    if result.response is not None and result.response.summary:
        summary = ws.gate.clean(result.response.summary, surface="query", kind="summary", log=log)
        result = replace(result, response=replace(result.response, summary=summary))
    if degraded:  # recorded with the pipeline's own degradations (P23)
        result = replace(result, traces=result.traces + degraded)
    snippets = _snippets(ws, result, log) if request.with_code else ()
    ws.save_scans()
    return QueryResult(result, snippets, log.summary())


def _snippets(
    ws: WorkspaceSession, result: PipelineResult, log: RedactionLog
) -> tuple[CodeSnippet, ...]:
    """The text of every cited chunk through the secret gate (checked against its whole
    file, so a chunk boundary cannot cut a key in two), sensitive files left out."""
    if result.response is None:
        return ()
    store = ws.open_store()
    out: list[CodeSnippet] = []
    seen: set[int] = set()
    for pack in result.response.packs:
        if not ws.gate.admit(pack.path, log=log, surface="query", kind="snippet"):
            continue
        try:
            source: str | None = read_text(ws.root, pack.path)[0]
        except LibrarianError:
            source = None
        for cite in pack.citations:
            if cite.chunk_id in seen:
                continue
            seen.add(cite.chunk_id)
            try:
                text = store.chunk(cite.chunk_id).text
            except (KeyError, LookupError):
                continue
            local = RedactionLog()
            clean = ws.gate.clean(
                text,
                surface="query",
                kind="snippet",
                id=str(cite.chunk_id),
                source=source,
                log=local,
            )
            log.decisions.extend(local.decisions)
            out.append(
                CodeSnippet(
                    chunk_id=cite.chunk_id,
                    path=cite.path,
                    start_line=cite.start_line,
                    end_line=cite.end_line,
                    symbol=cite.symbol,
                    text=clean,
                    redacted_spans=local.spans,
                )
            )
    return tuple(out)
