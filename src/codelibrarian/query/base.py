"""The stage contract (P17 §B) and the small helpers every stage shares.

A stage is an object with a ``name``, a ``description``, JSON schemas for its
input and output, ``execute(input, context) -> StageResult`` and
``estimate(input) -> StageEstimate``. Two extras make partial results possible:
``cacheable`` says whether the executor may serve the stage from the stage
cache, and ``passthrough(input)`` gives the output to hand on when the stage is
skipped or fails (an empty candidate set for retrieval, the input unchanged for
the middle stages, a plain response for synthesis); it gets the context so
synthesis can still gather the evidence recorded so far.

The built-in stages publish their schemas through :class:`StageSchemas` (each
names its pydantic input and output models); the middle stages, candidates in
and candidates out, get that and their passthrough from :class:`MiddleStage`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel

from .schemas import CandidateSetModel, schema_of
from .types import CandidateSet, PipelineContext, StageEstimate, StageResult

__all__ = ["MiddleStage", "PipelineStage", "StageSchemas", "Stopwatch"]


@runtime_checkable
class PipelineStage(Protocol):
    """One observable step of the query pipeline."""

    name: str
    description: str
    cacheable: bool

    @property
    def input_schema(self) -> dict[str, Any]: ...

    @property
    def output_schema(self) -> dict[str, Any]: ...

    def execute(self, input: Any, context: PipelineContext) -> StageResult[Any]: ...

    def estimate(self, input: Any) -> StageEstimate: ...

    def passthrough(self, input: Any, context: PipelineContext) -> Any: ...


class Stopwatch:
    """Whole milliseconds since construction, from an injectable nanosecond clock."""

    __slots__ = ("_clock", "_start")

    def __init__(self, clock_ns: Callable[[], int] = time.perf_counter_ns) -> None:
        self._clock = clock_ns
        self._start = clock_ns()

    def ms(self) -> int:
        return max(0, (self._clock() - self._start) // 1_000_000)


class StageSchemas:
    """``input_schema``/``output_schema`` published from the models a stage names."""

    __slots__ = ()
    input_model: ClassVar[type[BaseModel]]
    output_model: ClassVar[type[BaseModel]]

    @property
    def input_schema(self) -> dict[str, Any]:
        return schema_of(self.input_model)

    @property
    def output_schema(self) -> dict[str, Any]:
        return schema_of(self.output_model)


class MiddleStage(StageSchemas):
    """A stage from candidates to candidates; skipped or failed, it hands its input on."""

    __slots__ = ()
    input_model = CandidateSetModel
    output_model = CandidateSetModel

    def passthrough(self, input: CandidateSet, context: PipelineContext) -> CandidateSet:
        return input
