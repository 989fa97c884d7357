"""Handoff packages: what one agent passes to the next inside a run.

A package (``runs/<id>/handoff/<From>→<To>.json``) carries references, not
content: the diff refs of the current change (path, status, the changed line
spans, the file's content hash), the evidence the sender lists (URIs, test
runs, ...), risks (the sender's plus its pack's risk notes), notes, the open
questions of the sender's pack and the sender's ``context_pack_uri`` so the
receiver can reuse that pack without reassembling it. The model is validated
on every write and read, like the pack; its schema is ``schemas/handoff.schema.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import NotFound, UsageError
from ..workspace.files import content_hash
from ..workspace.git import FileDiff
from .lcp import AgentName, LocalContextPack, dump_model, parse_model

__all__ = [
    "HANDOFF_SCHEMA",
    "DiffRef",
    "HandoffPackage",
    "build_handoff",
    "diff_refs",
    "dump_handoff",
    "parse_handoff",
    "read_handoff",
]

HANDOFF_SCHEMA = "codelibrarian.handoff/1"
_TEXT = Annotated[str, Field(min_length=1, max_length=2000)]


class DiffRef(BaseModel):
    """One changed file of the current change, by reference."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    path: str = Field(min_length=1)
    old_path: str | None
    status: Literal["added", "modified", "deleted", "renamed"]
    hunks: list[Annotated[str, Field(pattern=r"^[0-9]+-[0-9]+$")]]
    added: int = Field(ge=0)
    removed: int = Field(ge=0)
    rev: str | None = Field(pattern=r"^[0-9a-f]{32}$", description="hash of the file now")


class HandoffPackage(BaseModel):
    """A handoff from one agent to another (seed 003's "handoff package")."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        title="HandoffPackage",
        json_schema_extra={"$id": "https://codelibrarian.dev/schemas/handoff.schema.json"},
    )

    schema_: Literal["codelibrarian.handoff/1"] = Field(alias="schema")
    run_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    from_agent: AgentName
    to_agent: AgentName
    task_id: str | None
    as_of: int = Field(ge=0)
    base_commit: str | None
    context_pack_uri: str | None
    diff_refs: list[DiffRef]
    evidence: list[_TEXT]
    risks: list[_TEXT]
    notes: list[_TEXT]
    open_questions: list[_TEXT]

    def to_json(self) -> str:
        return dump_model(self)


def parse_handoff(text: str, source: str) -> HandoffPackage:
    return parse_model(HandoffPackage, text, source, "handoff package")


def dump_handoff(pkg: HandoffPackage, source: str = "<handoff>") -> str:
    text = dump_model(pkg)
    parse_handoff(text, source)
    return text


def read_handoff(path: Path) -> HandoffPackage:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"no handoff package at {path}") from None
    return parse_handoff(text, str(path))


def diff_refs(root: Path, changes: Sequence[FileDiff]) -> list[DiffRef]:
    """References to the changed files: new-side hunk spans, counts and current hash."""
    out: list[DiffRef] = []
    for d in sorted(changes, key=lambda d: d.path):
        spans = [
            f"{h.new_start}-{h.new_start + max(h.new_lines, 1) - 1}"
            for h in d.hunks
            if d.status != "deleted"
        ]
        rev: str | None = None
        if d.status != "deleted":
            try:
                rev = content_hash((root / d.path).read_bytes())
            except OSError:
                rev = None
        out.append(
            DiffRef(
                path=d.path,
                old_path=d.old_path,
                status=d.status,
                hunks=spans,
                added=sum(1 for h in d.hunks for ln in h.lines if ln.startswith("+")),
                removed=sum(1 for h in d.hunks for ln in h.lines if ln.startswith("-")),
                rev=rev,
            )
        )
    return out


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(" ".join(i.split()) for i in items if i and i.strip()))


def build_handoff(
    *,
    run_id: str,
    source: str,
    target: str,
    as_of: int,
    base_commit: str | None,
    refs: Sequence[DiffRef],
    pack: LocalContextPack | None,
    pack_uri: str | None,
    notes: Sequence[str] = (),
    risks: Sequence[str] = (),
    evidence: Sequence[str] = (),
) -> HandoffPackage:
    """A validated handoff package (``pack`` is the sender's pack, when it has one)."""
    if source == target:
        raise UsageError("a handoff needs two different agents", hint="Pass --from A --to B.")
    return HandoffPackage(
        schema="codelibrarian.handoff/1",
        run_id=run_id,
        from_agent=source,  # type: ignore[arg-type]
        to_agent=target,  # type: ignore[arg-type]
        task_id=pack.task_id if pack else None,
        as_of=as_of,
        base_commit=base_commit,
        context_pack_uri=pack_uri,
        diff_refs=list(refs),
        evidence=_unique(evidence),
        risks=_unique([*risks, *(pack.risk_notes if pack else [])]),
        notes=_unique(notes),
        open_questions=_unique(pack.open_questions if pack else []),
    )
