"""The Local Context Pack (LCP): a pydantic model, its JSON Schema and validation.

A pack is what one agent of a run receives: the goal, the acceptance criteria,
*pointers* (anchors) to the code, tests, knowledge-base sections, decisions and
artifacts that matter, a deterministic micro-summary per anchor, risks, open
questions, next actions, the exact token count of the pack and computed bloat
checks. The seed's schema (``003``) is kept field for field; this model adds
``schema``, ``budget_tokens``, ``model``, ``run_id``, ``as_of`` and ``ladder``
(the record of which rung of the context ladder ran and why it stopped).

Every write and every read goes through :func:`parse_pack` /
:func:`dump_pack`: a malformed or hand-edited file raises
:class:`~codelibrarian.errors.PackValidationError` naming the file and the
field. The exported JSON Schema lives in ``schemas/lcp.schema.json`` at the
repository root; :func:`write_schemas` regenerates it, and a test fails when
the checked-in file drifts from the model.

Some rules are stronger in the model than in the exported schema, because JSON
Schema cannot express them: anchors unique by ``(path, ref)``, ``lines`` with
start <= end, micro-summaries referring to an existing anchor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import PackValidationError
from ..techniques.vocabulary import AGENT_ROLES, SCOPES

__all__ = [
    "AGENTS",
    "ANCHOR_KINDS",
    "CAPABILITIES",
    "LCP_SCHEMA",
    "MAX_ANCHORS",
    "MAX_SUMMARY_LINES",
    "SCOPE_CLASSES",
    "AgentName",
    "Anchor",
    "BloatChecks",
    "LadderRecord",
    "LocalContextPack",
    "MicroSummary",
    "RungRecord",
    "dump_pack",
    "parse_model",
    "parse_pack",
    "schema_text",
    "write_schemas",
]

M = TypeVar("M", bound=BaseModel)

LCP_SCHEMA = "codelibrarian.lcp/1"
MAX_ANCHORS = 24
MAX_SUMMARY_LINES = 3

AgentName = Literal[
    "Planner", "Thinker", "Implementer", "Verifier", "Reviewer", "Critical", "Supervisor"
]
ScopeClass = Literal["Tiny", "Small", "Medium", "Large"]
Capability = Literal[
    "fast_code", "reasoning_high", "reasoning_ultra", "long_context", "cheap_batch"
]
AnchorKind = Literal["code", "test", "kb", "decision", "artifact"]
RungName = Literal[
    "nearby_code",
    "module_view",
    "repo_view",
    "project_kb",
    "decision_snapshots",
    "external_stubs",
]

#: the agent roles and scope classes are the technique vocabulary's: one list each
AGENTS: tuple[str, ...] = AGENT_ROLES
SCOPE_CLASSES: tuple[str, ...] = SCOPES
CAPABILITIES: tuple[str, ...] = (
    "fast_code",
    "reasoning_high",
    "reasoning_ultra",
    "long_context",
    "cheap_batch",
)
#: the stable anchor order: code -> tests -> kb -> decisions -> artifacts
ANCHOR_KINDS: tuple[str, ...] = ("code", "test", "kb", "decision", "artifact")

_LINES = r"^[1-9][0-9]*-[1-9][0-9]*$"
_SUMMARY = r"^[^\n]*(\n[^\n]*){0,2}$"  # at most three lines
_REV = r"^[0-9a-f]{32}$"
_TEXT = Annotated[str, Field(min_length=1, max_length=2000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Anchor(_Strict):
    """A pointer to a span of a file: no content, only where and which revision."""

    kind: AnchorKind
    path: str = Field(min_length=1, max_length=500, description="repository-relative POSIX path")
    lines: str = Field(
        pattern=_LINES, description="inclusive 1-based span 'start-end', at most 60 lines"
    )
    rev: str = Field(pattern=_REV, description="content hash (blake2b-128) of the whole file")
    ref: str = Field(
        min_length=1, max_length=600, description="stable name: path#symbol, path#§section, ..."
    )

    @model_validator(mode="after")
    def _span(self) -> Anchor:
        start, end = (int(p) for p in self.lines.split("-"))
        if start > end:
            raise ValueError(f"lines {self.lines!r}: start is after end")
        return self

    @property
    def span(self) -> tuple[int, int]:
        start, end = (int(p) for p in self.lines.split("-"))
        return start, end


class MicroSummary(_Strict):
    """A deterministic insight of at most three lines about one anchor (by its ref)."""

    ref: str = Field(min_length=1, max_length=600)
    summary: str = Field(min_length=1, max_length=600, pattern=_SUMMARY)


class RungRecord(_Strict):
    """What one rung of the context ladder did, and why it ran or not."""

    rung: int = Field(ge=1, le=6)
    name: RungName
    ran: bool
    reason: str = Field(min_length=1, max_length=40)
    anchors_added: int = Field(ge=0)
    skipped_over_budget: int = Field(ge=0)
    criteria_covered: int = Field(ge=0)


class LadderRecord(_Strict):
    """The ladder's run: every rung, where it stopped and by which rule."""

    rungs: list[RungRecord] = Field(min_length=6, max_length=6)
    stopped_after: int = Field(ge=1, le=6)
    stop_reason: Literal["criteria_covered", "budget_spent", "anchor_limit", "ladder_exhausted"]
    criteria_total: int = Field(ge=0)
    criteria_covered: int = Field(ge=0)
    dropped_over_budget: int = Field(ge=0)
    removed_on_refresh: int = Field(ge=0, description="anchors whose file vanished")


class BloatChecks(_Strict):
    """Computed from the finished pack (see ``packs.bloat``); never asserted."""

    dedup_ok: bool
    within_budget: bool
    no_large_blobs: bool
    no_binaries: bool
    no_long_logs: bool
    stable_order: bool
    anchors_within_limit: bool


class LocalContextPack(_Strict):
    """One agent's Local Context Pack (seed 003's schema plus run bookkeeping)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        title="LocalContextPack",
        json_schema_extra={"$id": "https://codelibrarian.dev/schemas/lcp.schema.json"},
    )

    schema_: Literal["codelibrarian.lcp/1"] = Field(alias="schema")
    agent: AgentName
    task_id: str = Field(min_length=1, max_length=120)
    goal: str = Field(min_length=1, max_length=4000)
    acceptance_criteria: list[_TEXT] = Field(max_length=32)
    constraints: list[_TEXT] = Field(max_length=32)
    scope_class: ScopeClass
    model_capability: Capability
    budget_tokens: int = Field(ge=1)
    model: str = Field(min_length=1, max_length=120)
    run_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    as_of: int = Field(ge=0, description="assembly time, epoch seconds")
    anchors: list[Anchor] = Field(max_length=MAX_ANCHORS)
    micro_summaries: list[MicroSummary] = Field(max_length=MAX_ANCHORS)
    risk_notes: list[_TEXT] = Field(max_length=32)
    open_questions: list[_TEXT] = Field(max_length=32)
    next_actions: list[_TEXT] = Field(max_length=32)
    ladder: LadderRecord
    token_estimate: int = Field(
        ge=0, description="exact token count of this file with the model's tokenizer"
    )
    bloat_checks: BloatChecks

    @model_validator(mode="after")
    def _consistent(self) -> LocalContextPack:
        seen: set[tuple[str, str]] = set()
        for i, a in enumerate(self.anchors):
            key = (a.path, a.ref)
            if key in seen:
                raise ValueError(f"anchors.{i}: duplicate anchor path/ref {a.path!r} {a.ref!r}")
            seen.add(key)
        refs = {a.ref for a in self.anchors}
        for i, s in enumerate(self.micro_summaries):
            if s.ref not in refs:
                raise ValueError(f"micro_summaries.{i}.ref: {s.ref!r} names no anchor")
        return self

    def to_json(self) -> str:
        """The file text: compact JSON (every token counts against the budget)."""
        return dump_model(self, compact=True)


def dump_model(model: BaseModel, *, compact: bool = False) -> str:
    """Serialize a boundary model exactly as it is written to disk.

    Field order is the declared order. Packs are written compact (no spaces,
    one line: about 30% fewer tokens than indented JSON); handoffs and run
    memory are indented for people.
    """
    data = model.model_dump(mode="json", by_alias=True)
    if compact:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _field_path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(document)"


def parse_model(model: type[M], text: str, source: str, what: str) -> M:
    """Parse and validate ``text`` as ``model``; errors name ``source`` and the field."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PackValidationError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno})",
            hint=f"Restore the {what} or rebuild it (`librarian pack ... --refresh`).",
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = _field_path(tuple(first["loc"]))
        if first["type"] == "value_error" and loc == "(document)":
            # model-level checks put the field in the message ("anchors.3: ...")
            msg = str(first["msg"]).removeprefix("Value error, ")
            field, _, rest = msg.partition(": ")
            loc, detail = field, rest or msg
        else:
            detail = str(first["msg"]).removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise PackValidationError(
            f"{source}: invalid {what}: field {loc}: {detail}{more}",
            hint=f"Fix the field by hand or rebuild the {what}; the schema is in schemas/.",
        ) from None


def parse_pack(text: str, source: str) -> LocalContextPack:
    """A validated pack from file text (``source`` names the file in errors)."""
    return parse_model(LocalContextPack, text, source, "context pack")


def dump_pack(pack: LocalContextPack, source: str = "<pack>") -> str:
    """The file text of ``pack``, validated again on the way out (write == read)."""
    text = dump_model(pack, compact=True)
    parse_pack(text, source)
    return text


def schema_text(model: type[BaseModel]) -> str:
    """The JSON Schema of ``model`` as checked in under ``schemas/`` (sorted keys)."""
    schema: dict[str, Any] = model.model_json_schema(by_alias=True, mode="validation")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> tuple[Path, Path]:
    """Write ``lcp.schema.json`` and ``handoff.schema.json`` into ``directory``."""
    from .handoff import HandoffPackage

    directory.mkdir(parents=True, exist_ok=True)
    lcp = directory / "lcp.schema.json"
    handoff = directory / "handoff.schema.json"
    lcp.write_text(schema_text(LocalContextPack), encoding="utf-8")
    handoff.write_text(schema_text(HandoffPackage), encoding="utf-8")
    return lcp, handoff
