"""The MCP tools: typed arguments in, one budgeted JSON document out.

Each tool is a plain function ``tool(lib, **arguments) -> str``. Its keyword
parameters, annotated with pydantic ``Field`` constraints and descriptions, are
the tool's JSON Schema (the server strips ``lib`` and registers the rest). The
function calls the :class:`~codelibrarian.api.Librarian` facade, shapes the
answer as a JSON document and fits it under ``max_tokens`` with
:func:`~codelibrarian.mcp.budget.fit_document` — a tool result never floods the
agent's context.

Every document passes the workspace's secret gate (``lib.gate``) before it is
fitted and returned. Library errors propagate; the server turns them into short,
path-free MCP tool errors.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from ..errors import BudgetInfeasible, UsageError
from ..requests import COMPOSE_OPTIONS, QUERY_OPTIONS, ComposeRequest, QueryRequest
from ..tokens import Tokenizer, get_tokenizer
from .args import arg
from .budget import (
    MIN_MAX_TOKENS,
    Reduction,
    drop_field,
    fit_document,
    render,
    trim_list,
    trim_nested_lists,
    trim_text,
)

if TYPE_CHECKING:
    from ..api import Librarian

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "TOOLS",
    "build_context_pack",
    "compose_context",
    "explain_decision",
    "index_status",
    "query_codebase",
]

#: the largest result a tool will produce, whatever the caller asks
MAX_RESULT_TOKENS = 100_000
#: defaults per tool (tokens of the whole serialized result)
DEFAULT_MAX_TOKENS = {
    "compose_context": 6000,
    "query_codebase": 3000,
    "build_context_pack": 4000,
    "explain_decision": 2000,
    "index_status": 600,
}
#: tokens kept aside for the result's metadata around a composed pack (at most)
_COMPOSE_RESERVE = 400
#: the pack formats a tool offers (its answer is a JSON document already)
_PACK_FORMATS = ("markdown", "xml", "plain")
_FORMAT = replace(COMPOSE_OPTIONS["fmt"], choices=_PACK_FORMATS)
_MODEL = COMPOSE_OPTIONS["model"]
_AS_OF = COMPOSE_OPTIONS["as_of"]
#: the model whose tokenizer counts a tool's result (every tool takes it)
ModelArg = Annotated[str | None, arg(_MODEL, max_length=100)]


def _max_tokens(tool: str) -> Any:
    return Field(
        ge=MIN_MAX_TOKENS,
        le=MAX_RESULT_TOKENS,
        description="Hard cap on the tokens of this tool's whole result (counted with the "
        "model's tokenizer); the result is shrunk deterministically to fit and says what "
        "was cut in `truncated`.",
    )


def _tokenizer(lib: Librarian, model: str | None) -> Tokenizer:
    return get_tokenizer(model or lib.config.compose.model)


def _finish(
    lib: Librarian,
    tool: str,
    doc: dict[str, Any],
    *,
    tokenizer: Tokenizer,
    max_tokens: int,
    reductions: list[Reduction],
    essentials: tuple[str, ...],
) -> str:
    """``doc`` through the secret gate, then fitted under ``max_tokens``."""
    clean = lib.gate.clean_value(doc, surface="mcp", kind=tool)
    return fit_document(clean, tokenizer, max_tokens, reductions, essentials=essentials)


# --------------------------------------------------------------------------- compose


def compose_context(
    lib: Librarian,
    *,
    task: Annotated[str, arg(COMPOSE_OPTIONS["task"], max_length=4000)],
    max_tokens: Annotated[int, _max_tokens("compose_context")] = DEFAULT_MAX_TOKENS[
        "compose_context"
    ],
    model: ModelArg = None,
    base: Annotated[str | None, arg(COMPOSE_OPTIONS["base"], max_length=200)] = None,
    files: Annotated[
        tuple[Annotated[str, Field(min_length=1, max_length=500)], ...],
        arg(COMPOSE_OPTIONS["files"], max_length=50),
    ] = (),
    format: Annotated[str, arg(_FORMAT)] = "markdown",
    agent_role: Annotated[str | None, arg(COMPOSE_OPTIONS["agent_role"], max_length=50)] = None,
    as_of: Annotated[int | None, arg(_AS_OF)] = None,
) -> str:
    """Compose a context pack for a task: the change in progress, rules, structure and the
    most relevant code, selected and rendered under the token budget, with a decision id
    that explain_decision can explain."""
    _FORMAT.check(format)
    budget = max_tokens - min(_COMPOSE_RESERVE, max(96, max_tokens // 4))
    request = ComposeRequest(
        task,
        budget=budget,
        model=model,
        base=base,
        files=files,
        fmt=format,
        agent_role=agent_role,
        as_of=as_of,
        event="agent_request",
    )
    tok = _tokenizer(lib, model)

    def run(pack_budget: int) -> dict[str, Any]:
        result = lib.run_compose(replace(request, budget=pack_budget))
        reasons = Counter(r.reason for r in result.rejected)
        return {
            "decision_id": result.decision_id,
            "model": result.model,
            "tokenizer": result.tokenizer,
            "pack_budget": result.budget,
            "pack_tokens": result.tokens,
            "cache_hit": result.cache_hit,
            "artifacts": [
                {
                    "id": a.id,
                    "kind": a.kind,
                    "lane": a.lane,
                    "path": a.path,
                    "lines": list(a.lines) if a.lines else None,
                    "tokens": a.tokens,
                    **({"shrunk": a.strategy or True} if a.shrunk else {}),
                }
                for a in result.artifacts
            ],
            "rejected": dict(sorted(reasons.items())),
            **({"warnings": list(result.warnings)} if result.warnings else {}),
            "text": result.text,
        }

    doc = run(budget)
    over = tok.count(render(doc)) - max_tokens
    if over > 0:
        # JSON escaping and the artifact list cost more than the reserve: compose
        # once more with that much less, so the pack stays whole rather than cut
        # (a budget too small for the pinned change, or for any pack, keeps the
        # first pack, cut below)
        smaller = budget - over - 16
        if smaller >= 16:
            with contextlib.suppress(BudgetInfeasible, UsageError):
                doc = run(smaller)
    return _finish(
        lib,
        "compose_context",
        doc,
        tokenizer=tok,
        max_tokens=max_tokens,
        reductions=[drop_field("rejected"), trim_list("artifacts"), trim_text("text")],
        essentials=("decision_id", "warnings", "pack_tokens"),
    )


# ----------------------------------------------------------------------------- query


def query_codebase(
    lib: Librarian,
    *,
    intent: Annotated[str, arg(QUERY_OPTIONS["intent"], max_length=2000)],
    max_tokens: Annotated[int, _max_tokens("query_codebase")] = DEFAULT_MAX_TOKENS[
        "query_codebase"
    ],
    limit: Annotated[int, arg(QUERY_OPTIONS["limit"])] = QUERY_OPTIONS["limit"].default,
    depth: Annotated[str, arg(QUERY_OPTIONS["depth"])] = QUERY_OPTIONS["depth"].default,
    include_code: Annotated[bool, arg(QUERY_OPTIONS["with_code"])] = True,
    semantic: Annotated[bool, arg(QUERY_OPTIONS["semantic"])] = QUERY_OPTIONS["semantic"].default,
    model: ModelArg = None,
    as_of: Annotated[int | None, arg(_AS_OF)] = None,
) -> str:
    """Search the codebase: ranked files with the line ranges (and code) that matched, from
    the six-stage query pipeline (retrieval, graph expansion, scoring, reranking, defeater
    check, synthesis)."""
    request = QueryRequest(
        intent,
        depth=depth,
        limit=limit,
        budget=max_tokens,
        semantic=semantic,
        with_code=include_code,
        as_of=as_of,
    )
    tok = _tokenizer(lib, model)
    result = lib.run_query(request)
    code = {s.chunk_id: s.text for s in result.snippets}
    response = result.pipeline.response
    results: list[dict[str, Any]] = []
    if response is not None:
        for pack in response.packs:
            cites: list[dict[str, Any]] = []
            for c in pack.citations:
                cite: dict[str, Any] = {"lines": f"{c.start_line}-{c.end_line}"}
                if c.symbol:
                    cite["symbol"] = c.symbol
                cites.append(cite)
            entry: dict[str, Any] = {
                "rank": pack.rank,
                "path": pack.path,
                "score": pack.score,
                "citations": cites,
                "why": list(pack.reasons),
            }
            texts = [code[c.chunk_id] for c in pack.citations if c.chunk_id in code]
            if texts:
                entry["code"] = texts
            results.append(entry)
    doc: dict[str, Any] = {
        "query_id": result.pipeline.query_id,
        "status": result.status,
        "confidence": result.confidence,
        "results": results,
    }
    if response is not None and response.summary:
        doc["summary"] = response.summary
    doc["degraded"] = [t.code for t in result.pipeline.traces]
    return _finish(
        lib,
        "query_codebase",
        doc,
        tokenizer=tok,
        max_tokens=max_tokens,
        reductions=[
            drop_field("degraded"),
            trim_nested_lists("results", "why"),
            trim_nested_lists("results", "code"),
            trim_list("results"),
            trim_text("summary"),
        ],
        essentials=("query_id", "status"),
    )


# ----------------------------------------------------------------------------- packs


def build_context_pack(
    lib: Librarian,
    *,
    goal: Annotated[
        str,
        Field(min_length=1, max_length=4000, description="The goal the agent works towards."),
    ],
    agent: Annotated[
        Literal[
            "Planner", "Thinker", "Implementer", "Verifier", "Reviewer", "Critical", "Supervisor"
        ],
        Field(description="The agent role the pack is for."),
    ] = "Implementer",
    run_id: Annotated[
        str | None,
        Field(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
            description="Run the pack belongs to (default: start a new run).",
        ),
    ] = None,
    acceptance: Annotated[
        tuple[Annotated[str, Field(min_length=1, max_length=2000)], ...],
        Field(max_length=32, description="Acceptance criteria, one per item."),
    ] = (),
    constraints: Annotated[
        tuple[Annotated[str, Field(min_length=1, max_length=2000)], ...],
        Field(max_length=32, description="Constraints the agent must respect."),
    ] = (),
    scope: Annotated[
        Literal["Tiny", "Small", "Medium", "Large"] | None,
        Field(description="Size of the change (default: classified from the change)."),
    ] = None,
    capability: Annotated[
        Literal["fast_code", "reasoning_high", "reasoning_ultra", "long_context", "cheap_batch"]
        | None,
        Field(description="The target model's capability tier (default: reasoning_high)."),
    ] = None,
    refresh: Annotated[
        bool, Field(description="Rebuild the pack even when the run already has one.")
    ] = False,
    max_tokens: Annotated[int, _max_tokens("build_context_pack")] = DEFAULT_MAX_TOKENS[
        "build_context_pack"
    ],
    model: ModelArg = None,
) -> str:
    """Build a Local Context Pack (LCP) for one agent of a run: goal, acceptance criteria,
    anchors into the code and tests, micro-summaries, risks and next actions, written under
    the run. The result carries the pack (when it fits max_tokens) and its resource URI
    resources://runs/{id}/context/{agent}.lcp.json, which always returns the whole pack."""
    tok = _tokenizer(lib, model)
    built = lib.pack(
        agent,
        goal,
        acceptance=acceptance,
        constraints=constraints,
        scope=scope,
        capability=capability,
        run_id=run_id,
        refresh=refresh,
        model=model,
    )
    pack = built.pack
    doc: dict[str, Any] = {
        "run_id": built.run_id,
        "agent": pack.agent,
        "uri": built.uri,
        "reused": built.reused,
        "scope_class": pack.scope_class,
        "model_capability": pack.model_capability,
        "budget_tokens": pack.budget_tokens,
        "token_estimate": pack.token_estimate,
        "anchors": len(pack.anchors),
    }
    if built.refreshed:
        doc["refreshed"] = list(built.refreshed)
    if built.missing:
        doc["missing"] = list(built.missing)
    doc["pack"] = pack.model_dump(mode="json", by_alias=True)
    return _finish(
        lib,
        "build_context_pack",
        doc,
        tokenizer=tok,
        max_tokens=max_tokens,
        reductions=[
            drop_field("pack", "pack: left out (too large for max_tokens); read the uri"),
            trim_list("missing"),
            trim_list("refreshed"),
        ],
        essentials=("run_id", "agent", "uri"),
    )


# ---------------------------------------------------------------------------- explain


def explain_decision(
    lib: Librarian,
    *,
    decision_id: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            pattern=r"^[A-Za-z0-9]+$",
            description="A decision id returned by compose_context.",
        ),
    ],
    max_tokens: Annotated[int, _max_tokens("explain_decision")] = DEFAULT_MAX_TOKENS[
        "explain_decision"
    ],
    model: ModelArg = None,
) -> str:
    """Explain a recorded composition: budget and lane use, every selected and rejected
    artifact with its reason (ids, kinds, lanes; no paths or content), redactions and
    vitals."""
    tok = _tokenizer(lib, model)
    doc = dict(lib.explain(decision_id))
    return _finish(
        lib,
        "explain_decision",
        doc,
        tokenizer=tok,
        max_tokens=max_tokens,
        reductions=[
            drop_field("vitals"),
            trim_list("rejected"),
            trim_list("excluded_by_policy"),
            trim_list("redactions"),
            trim_list("selected"),
        ],
        essentials=("decision_id", "tokens", "budget", "counts"),
    )


# ------------------------------------------------------------------------------ index


def index_status(
    lib: Librarian,
    *,
    refresh: Annotated[
        bool,
        Field(
            description="Bring the index up to date first (changed files only).",
        ),
    ] = False,
    max_tokens: Annotated[int, _max_tokens("index_status")] = DEFAULT_MAX_TOKENS["index_status"],
) -> str:
    """Report the index: files and languages, symbols, chunks, parse errors, and how many
    files changed since it was built (stale); optionally refresh it first."""
    doc: dict[str, Any] = {}
    if refresh:
        stats = lib.index()
        doc["refreshed"] = {
            "parsed": stats.parsed,
            "unchanged": stats.unchanged,
            "deleted": stats.deleted,
            "milliseconds": stats.milliseconds,
        }
    doc = {**lib.index_status().to_dict(), **doc}
    return _finish(
        lib,
        "index_status",
        doc,
        tokenizer=_tokenizer(lib, None),
        max_tokens=max_tokens,
        reductions=[drop_field("languages")],
        essentials=("indexed", "stale", "files"),
    )


#: tool name -> implementation, in the order the server lists them
TOOLS: dict[str, Callable[..., str]] = {
    "compose_context": compose_context,
    "query_codebase": query_codebase,
    "build_context_pack": build_context_pack,
    "explain_decision": explain_decision,
    "index_status": index_status,
}
