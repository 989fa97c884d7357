"""Each stage's output, as JSON, validates against the schema the stage publishes."""

from __future__ import annotations

import jsonschema

from codelibrarian.query.defeaters import DefeaterCheckStage
from codelibrarian.query.expansion import GraphExpansionStage
from codelibrarian.query.rerank import RerankingStage
from codelibrarian.query.retrieval import RetrievalStage
from codelibrarian.query.scoring import ScoringStage
from codelibrarian.query.synthesis import SynthesisStage
from codelibrarian.query.types import PipelineContext

from .fakes import FakeStore, query

STORE = FakeStore(
    {"a.py": ["parse config", "other"], "b.py": ["config loader"]},
    graphs={"import": [("a.py", "b.py", 1)]},
)


def test_chain_outputs_match_published_schemas() -> None:
    ctx = PipelineContext("q")
    value: object = query("parse config", depth="L1", limit=5)
    stages = [
        RetrievalStage(STORE),
        GraphExpansionStage(STORE),
        ScoringStage(),
        RerankingStage(),
        DefeaterCheckStage(STORE),
        SynthesisStage(),
    ]
    for stage in stages:
        jsonschema.validate(value.to_dict(), stage.input_schema)  # type: ignore[attr-defined]
        result = stage.execute(value, ctx)  # type: ignore[arg-type]
        out = result.output
        jsonschema.validate(out.to_dict(), stage.output_schema)
        assert isinstance(result.duration_ms, int)
        value = out
    assert value.packs  # type: ignore[attr-defined]


def test_schema_rejects_a_float_score() -> None:
    stage = ScoringStage()
    bad = {"query": query().to_dict(), "candidates": [{"chunk_id": 1, "score": 0.5}]}
    try:
        jsonschema.validate(bad, stage.output_schema)
    except jsonschema.ValidationError:
        return
    raise AssertionError("a malformed candidate set passed the schema")
