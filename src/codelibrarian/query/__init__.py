"""The query pipeline: six observable stages from an intent to cited, ranked files.

retrieval -> graph_expansion -> scoring -> reranking -> defeater_check -> synthesis

Entry points: ``QuerySession`` (an open index with a wired pipeline),
``run_query`` (ranked paths, for adapters and benchmarks), ``build_pipeline`` and
``QueryPipeline`` (the executor) for custom stage lists. See ``docs/query.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_getattr

if TYPE_CHECKING:
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

#: where each public name lives: the package loads a submodule when one of its names is
#: first used, so ``import codelibrarian.query.locate`` (every compose) does not load the
#: pipeline, its embedders and numpy
_HOME: dict[str, str] = {
    "Adaptation": "capabilities",
    "CancellationToken": "types",
    "Candidate": "types",
    "CandidateSet": "types",
    "CapabilityEvent": "capabilities",
    "CheckedSet": "types",
    "Citation": "types",
    "DEFAULT_FEATURES": "capabilities",
    "DefeaterCheckStage": "defeaters",
    "Embedder": "embed",
    "ErrorLocalizer": "report",
    "FEATURES": "capabilities",
    "GraphExpansionStage": "expansion",
    "HashingEmbedder": "embed",
    "LibrarianQuery": "types",
    "LibrarianResponse": "types",
    "LocalizedError": "report",
    "MemoryStageCache": "pipeline",
    "PipelineContext": "types",
    "PipelineDiagnosticReport": "report",
    "PipelineResult": "pipeline",
    "PipelineStage": "base",
    "ProgressReporter": "report",
    "QueryCancelled": "types",
    "QueryPipeline": "pipeline",
    "QuerySession": "pipeline",
    "RecoveryOption": "report",
    "RerankingStage": "rerank",
    "ResultPack": "types",
    "RetrievalStage": "retrieval",
    "STAGE_NAMES": "types",
    "ScoringStage": "scoring",
    "StageDiagnostic": "report",
    "StageEstimate": "types",
    "StageEvidence": "types",
    "StageResult": "types",
    "StageRun": "pipeline",
    "StaticModelEmbedder": "embed",
    "StorageCapabilities": "capabilities",
    "SynthesisStage": "synthesis",
    "VectorIndex": "embed",
    "adapt": "capabilities",
    "build_pipeline": "pipeline",
    "detect_capabilities": "capabilities",
    "load_embedder": "embed",
    "run_query": "pipeline",
}


__getattr__ = lazy_getattr(__name__, _HOME)
