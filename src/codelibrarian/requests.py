"""The compose and query requests: typed values every shell builds once.

:class:`ComposeRequest` and :class:`QueryRequest` are frozen values holding what a
caller asked for, checked when they are made. Each field carries its option
(``codelibrarian.options``): the typer commands and the compose quick parser
(``cli/``), the MCP tools' argument schemas (``mcp/``) and the facade's keywords
(``api.py``) are derived from them or compared with them by a test
(``tests/service/test_requests.py``), so an option is spelled once and a mistake
gives the same message on every shell.

The use cases run in ``service/`` (``compose.py``, ``query.py``); what can only be
checked against the workspace (its configured defaults, the smallest pack for the
model's tokenizer, the ranking engine's signal names, paths inside the repository)
is checked there once, before any work (``service/resolve.py``). The requests live
here, below every layer, because the shells build them without going behind the
facade and a workflow step's context (``execution/``) builds one too.

Importing this module loads no composer, index or pydantic: the CLI reads it at
start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import UsageError
from .options import AS_OF, OptionTable, check_fields, option, options_of
from .trigger import EVENTS

__all__ = [
    "COMPOSE_OPTIONS",
    "DEPTHS",
    "FORMATS",
    "MAX_BUDGET",
    "QUERY_OPTIONS",
    "ComposeRequest",
    "QueryRequest",
]

#: pack formats (``json``: the markdown pack and its metadata as one document)
FORMATS: tuple[str, ...] = ("markdown", "xml", "json", "plain")
#: the largest budget accepted (no model reads more than this in one context)
MAX_BUDGET = 10_000_000
#: query depths: text retrieval only, then one to three graph hops (``query/types.py``)
DEPTHS: tuple[str, ...] = ("L0", "L1", "L2", "L3")


def _budget_option(help: str, **details: object) -> dict[str, object]:
    return option(
        "int",
        help,
        label="the budget",
        unit="tokens",
        minimum=1,
        maximum=MAX_BUDGET,
        hint="A budget counts tokens, e.g. 8000 (the default); no model reads more "
        f"than {MAX_BUDGET:,}.",
        **details,
    )


@dataclass(frozen=True, slots=True)
class ComposeRequest:
    """A context pack asked for (see :meth:`codelibrarian.api.Librarian.compose`).

    ``None`` means "the workspace's default" (``[budget]``, ``[compose]``, the
    clock). ``signals_off`` switches ranking signals off, for ablation studies.
    ``lanes`` keeps only those lanes' candidates (a workflow step's recipe names
    them; the policy lane's exclusions apply regardless).
    """

    task: str = field(
        metadata=option(
            "text",
            "What the agent is about to do, in words "
            "(e.g. 'add retry with backoff to the HTTP client').",
            label="the task",
            argument=True,
            mcp="task",
        )
    )
    budget: int | None = field(
        default=None,
        metadata=_budget_option(
            "Token budget: a hard cap on the whole rendered pack "
            "(default: the config's budget.total_tokens, 8000).",
            flags=("--budget", "-b"),
        ),
    )
    model: str | None = field(
        default=None,
        metadata=option(
            "text",
            "Target model; picks the tokenizer that counts the budget "
            "(default: the config's compose.model, gpt-4o).",
            label="the model",
            hint="Name a model such as gpt-4o, or leave it out for the workspace's model.",
            flags=("--model", "-m"),
            mcp="model",
        ),
    )
    base: str | None = field(
        default=None,
        metadata=option(
            "text",
            "Git revision the current change is measured against "
            "(default: staged + unstaged changes against HEAD).",
            label="the base revision",
            hint="Name a revision such as main or HEAD~1, or leave it out.",
            flags=("--base",),
            mcp="base",
        ),
    )
    diff_text: str | None = field(
        default=None,
        metadata=option(
            "text", "The current change as a unified diff.", label="the diff", blank=True
        ),
    )
    files: tuple[str, ...] = field(
        default=(),
        metadata=option(
            "texts",
            "Repository-relative paths the task is about (ranked first).",
            label="files",
            flags=("--files", "-f"),
            mcp="files",
        ),
    )
    fmt: str | None = field(
        default=None,
        metadata=option(
            "text",
            "How the pack is rendered (default: the config's compose.format, markdown).",
            label="format",
            choices=FORMATS,
            flags=("--format",),
            mcp="format",
        ),
    )
    as_of: int | None = field(default=None, metadata=AS_OF.spec())
    agent_role: str | None = field(
        default=None,
        metadata=option(
            "text",
            "The asking agent's role, if any (the history lane favours its entries).",
            label="the agent role",
            hint="Name the role, e.g. Implementer, or leave it out.",
            flags=("--role",),
            mcp="agent_role",
        ),
    )
    use_cache: bool = field(
        default=True, metadata=option("flag", "Read and write the composition cache.")
    )
    event: str = field(
        default="manual",
        metadata=option(
            "text",
            "What asked for the pack.",
            label="trigger event",
            choices=EVENTS,
            flags=("--event",),
        ),
    )
    refresh: bool = field(
        default=True, metadata=option("flag", "Refresh the index (changed files) first.")
    )
    record: bool = field(
        default=True,
        metadata=option("flag", "Record the decision (False: a dry run, no cache either)."),
    )
    reveal: bool = field(
        default=False,
        metadata=option(
            "flag",
            "Show paths in --verbose / --explain output and JSON rejections "
            "(never of sensitive files).",
            flags=("--reveal",),
        ),
    )
    signals_off: frozenset[str] = field(
        default=frozenset(),
        metadata=option(
            "texts",
            "Ranking signals to switch off, for ablation studies (names: query/locate.py "
            "SIGNALS; docs/compose.md).",
            label="signals_off",
            rule=frozenset,
        ),
    )
    lanes: tuple[str, ...] | None = field(
        default=None,
        metadata=option("texts", "Only these lanes' candidates.", label="lanes", api=False),
    )

    def __post_init__(self) -> None:
        check_fields(self, COMPOSE_OPTIONS)
        if self.base is not None and self.diff_text is not None:
            raise UsageError(
                "a base revision and a diff exclude each other",
                hint="Give one of them: the change is measured against the base, or is the diff.",
            )


@dataclass(frozen=True, slots=True)
class QueryRequest:
    """A query asked for (see :meth:`codelibrarian.api.Librarian.query`)."""

    intent: str = field(
        metadata=option(
            "text",
            "What you are looking for, in words (e.g. 'where are HTTP retries configured').",
            label="the intent",
            argument=True,
            mcp="intent",
        )
    )
    depth: str = field(
        default="L1",
        metadata=option(
            "text",
            "L0: text retrieval only; L1-L3: that many hops of import/reference graph expansion.",
            label="depth",
            choices=DEPTHS,
            flags=("--depth",),
            mcp="depth",
        ),
    )
    limit: int = field(
        default=10,
        metadata=option(
            "int",
            "Most files to return.",
            label="limit",
            unit="files",
            minimum=1,
            maximum=200,
            hint="Ask for 10 files, say.",
            flags=("--limit", "-n"),
            mcp="limit",
        ),
    )
    budget: int | None = field(
        default=None,
        metadata=_budget_option(
            "Cap on the summed tokens of the cited chunks.", flags=("--budget",)
        ),
    )
    as_of: int | None = field(default=None, metadata=AS_OF.spec())
    semantic: bool = field(
        default=False,
        metadata=option(
            "flag",
            "Add dense vectors (needs the embedding model, installed on Linux x86-64; "
            "off by default: no consistent recall gain was measured).",
            flags=("--semantic/--no-semantic",),
            mcp="semantic",
        ),
    )
    llm: bool = field(
        default=False,
        metadata=option(
            "flag",
            "Discover an LLM provider for reranking (default: only when "
            "LIBRARIAN_LLM_PROVIDER is set).",
            flags=("--llm",),
        ),
    )
    summarize: bool = field(
        default=False,
        metadata=option("flag", "Ask the LLM provider for a short summary.", flags=("--summary",)),
    )
    with_code: bool = field(
        default=False,
        metadata=option(
            "flag",
            "Include the text of the cited code (secrets redacted), best-ranked first, "
            "as far as the budget allows.",
            mcp="include_code",
        ),
    )
    refresh: bool = field(
        default=True, metadata=option("flag", "Refresh the index (changed files) first.")
    )
    build: bool = field(
        default=True,
        metadata=option("flag", "Build the index when there is none (False: read-only)."),
    )

    def __post_init__(self) -> None:
        check_fields(self, QUERY_OPTIONS)


COMPOSE_OPTIONS: OptionTable = options_of(ComposeRequest)
QUERY_OPTIONS: OptionTable = options_of(QueryRequest)
