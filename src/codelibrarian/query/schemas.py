"""JSON schemas of the stage inputs and outputs (pydantic, at the boundary only).

The stages exchange frozen dataclasses; these models describe the same values
as they appear in ``to_dict()`` / ``--json`` output, so each stage can publish
``input_schema`` / ``output_schema`` (Draft 2020-12) and tests can validate real
outputs against them.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CandidateSetModel",
    "CheckedSetModel",
    "QueryModel",
    "ResponseModel",
    "schema_of",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QueryModel(_Model):
    intent: str
    depth: Literal["L0", "L1", "L2", "L3"]
    limit: int = Field(ge=1, le=200)
    as_of: int
    budget: int | None = Field(default=None, ge=1)


class CandidateModel(_Model):
    chunk_id: int
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    symbol: str | None
    kind: str
    tokens: int = Field(ge=0)
    origin: str
    score: int
    bm25: int
    dense: int = Field(ge=-1000, le=1000)
    fused: int = Field(ge=0)
    graph_rank: int = Field(ge=0)
    hops: int = Field(ge=0)
    via: str | None
    signals: dict[str, int]


class CandidateSetModel(_Model):
    query: QueryModel
    candidates: list[CandidateModel]


class DefeatModel(_Model):
    chunk_id: int
    path: str
    reason: str
    detail: str


class CheckedSetModel(_Model):
    query: QueryModel
    candidates: list[CandidateModel]
    defeated: list[DefeatModel]


class CitationModel(_Model):
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    symbol: str | None
    chunk_id: int


class PackModel(_Model):
    rank: int = Field(ge=1)
    path: str
    score: int
    tokens: int = Field(ge=0)
    citations: list[CitationModel]
    reasons: list[str]


class EvidenceModel(_Model):
    stage: str
    type: str
    description: str
    metadata: dict[str, Any]


class TraceModel(_Model):
    code: str
    reason: str
    detail: str


class ResponseModel(_Model):
    query_id: str
    query: QueryModel
    packs: list[PackModel]
    confidence: int = Field(ge=0, le=1000)
    stages: list[str]
    evidence: list[EvidenceModel]
    traces: list[TraceModel]
    defeated: list[DefeatModel]
    summary: str | None


@cache
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema (a fresh copy; computed once per model)."""
    import copy

    return copy.deepcopy(_schema(model))
