"""The query pipeline: six observable stages from an intent to cited, ranked files.

retrieval -> graph_expansion -> scoring -> reranking -> defeater_check -> synthesis

Entry points: ``QuerySession`` (an open index with a wired pipeline),
``run_query`` (ranked paths, for adapters and benchmarks), ``build_pipeline`` and
``QueryPipeline`` (the executor) for custom stage lists. See ``docs/query.md``.
"""

from __future__ import annotations

from .base import PipelineStage
from .capabilities import (
    DEFAULT_FEATURES,
    FEATURES,
    Adaptation,
    CapabilityEvent,
    StorageCapabilities,
    adapt,
    detect_capabilities,
)
from .defeaters import DefeaterCheckStage
from .embed import Embedder, HashingEmbedder, StaticModelEmbedder, VectorIndex, load_embedder
from .expansion import GraphExpansionStage
from .pipeline import (
    MemoryStageCache,
    PipelineResult,
    QueryPipeline,
    QuerySession,
    StageRun,
    build_pipeline,
    run_query,
)
from .report import (
    ErrorLocalizer,
    LocalizedError,
    PipelineDiagnosticReport,
    ProgressReporter,
    RecoveryOption,
    StageDiagnostic,
)
from .rerank import RerankingStage
from .retrieval import RetrievalStage
from .scoring import ScoringStage
from .synthesis import SynthesisStage
from .types import (
    STAGE_NAMES,
    CancellationToken,
    Candidate,
    CandidateSet,
    CheckedSet,
    Citation,
    LibrarianQuery,
    LibrarianResponse,
    PipelineContext,
    QueryCancelled,
    ResultPack,
    StageEstimate,
    StageEvidence,
    StageResult,
)

__all__ = [
    "DEFAULT_FEATURES",
    "FEATURES",
    "STAGE_NAMES",
    "Adaptation",
    "CancellationToken",
    "Candidate",
    "CandidateSet",
    "CapabilityEvent",
    "CheckedSet",
    "Citation",
    "DefeaterCheckStage",
    "Embedder",
    "ErrorLocalizer",
    "GraphExpansionStage",
    "HashingEmbedder",
    "LibrarianQuery",
    "LibrarianResponse",
    "LocalizedError",
    "MemoryStageCache",
    "PipelineContext",
    "PipelineDiagnosticReport",
    "PipelineResult",
    "PipelineStage",
    "ProgressReporter",
    "QueryCancelled",
    "QueryPipeline",
    "QuerySession",
    "RecoveryOption",
    "RerankingStage",
    "ResultPack",
    "RetrievalStage",
    "ScoringStage",
    "StageDiagnostic",
    "StageEstimate",
    "StageEvidence",
    "StageResult",
    "StageRun",
    "StaticModelEmbedder",
    "StorageCapabilities",
    "SynthesisStage",
    "VectorIndex",
    "adapt",
    "build_pipeline",
    "detect_capabilities",
    "load_embedder",
    "run_query",
]
