"""Stage 4, reranking: deterministic by default, an LLM only when one is configured.

The deterministic reranker spreads the results over files. Walking candidates
in score order, the ``n``-th chunk of a file already seen loses
``n x SAME_FILE_PENALTY`` points; at most ``max_per_file`` chunks of a file are
kept, and the set is cut to the chunks of the best ``files_factor x limit``
files. The result is re-sorted by (score, path, lines, chunk id).

With an LLM completer (a callable ``prompt -> text``, from a configured
provider), the top ``llm_window`` files are shown to the model by number and it
answers with the numbers in its preferred order; files it omits keep their
deterministic order after the ones it named, and an unusable answer leaves the
deterministic order untouched (with a warning). Without a provider the stage
records ``unverified_by_trace(provider_unavailable)`` and keeps the
deterministic order: nothing pretends an LLM looked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import LibrarianError, UnverifiedByTrace
from .base import MiddleStage, Stopwatch
from .types import (
    Candidate,
    CandidateSet,
    PipelineContext,
    StageEstimate,
    StageEvidence,
    StageResult,
    sorted_candidates,
)

__all__ = ["SAME_FILE_PENALTY", "Completer", "RerankingStage", "diversify"]

SAME_FILE_PENALTY = 150
Completer = Callable[[str], str]


def diversify(
    candidates: tuple[Candidate, ...], *, limit: int, max_per_file: int, files_factor: int
) -> tuple[Candidate, ...]:
    """Penalise repeated files, cap chunks per file, keep the best files only."""
    seen: dict[str, int] = {}
    kept: list[Candidate] = []
    for c in sorted_candidates(candidates):
        n = seen.get(c.path, 0)
        if n >= max_per_file:
            continue
        seen[c.path] = n + 1
        kept.append(replace(c, score=c.score - n * SAME_FILE_PENALTY))
    ordered = sorted_candidates(kept)
    files: list[str] = []
    for c in ordered:
        if c.path not in files:
            files.append(c.path)
    keep = set(files[: max(1, limit * files_factor)])
    return tuple(c for c in ordered if c.path in keep)


_NUMBERS = re.compile(r"\d+")


def _llm_order(files: list[str], intent: str, llm: Completer) -> list[str] | None:
    listing = "\n".join(f"{i}. {path}" for i, path in enumerate(files, start=1))
    prompt = (
        "Rank these repository files by how useful they are for the task.\n"
        f"Task: {intent}\n\nFiles:\n{listing}\n\n"
        "Answer with the file numbers only, most useful first, separated by commas."
    )
    answer = llm(prompt)
    picked: list[str] = []
    for token in _NUMBERS.findall(answer):
        i = int(token)
        if 1 <= i <= len(files) and files[i - 1] not in picked:
            picked.append(files[i - 1])
    return picked or None


@dataclass(slots=True)
class RerankingStage(MiddleStage):
    """Deterministic diversity reranking, plus an LLM pass when a provider exists."""

    llm: Completer | None = None
    max_per_file: int = 3
    files_factor: int = 2
    llm_window: int = 20

    name: str = "reranking"
    description: str = "Rerank for file diversity (LLM reranking when a provider is set)"
    cacheable: bool = False

    def estimate(self, input: CandidateSet) -> StageEstimate:
        if self.llm is None:
            return StageEstimate(1, 0, False)
        return StageEstimate(3000, 40 * min(self.llm_window, len(input.candidates)) + 100, False)

    def execute(self, input: CandidateSet, context: PipelineContext) -> StageResult[CandidateSet]:
        watch = Stopwatch()
        ordered = diversify(
            input.candidates,
            limit=input.query.limit,
            max_per_file=self.max_per_file,
            files_factor=self.files_factor,
        )
        evidence = [
            StageEvidence.of(
                "computation",
                f"diversity rerank kept {len(ordered)} of {len(input.candidates)} chunks",
                penalty=SAME_FILE_PENALTY,
                max_per_file=self.max_per_file,
            )
        ]
        warnings: list[str] = []
        traces: list[UnverifiedByTrace] = []
        resources: list[tuple[str, int]] = [("items", len(ordered))]
        if self.llm is None:
            traces.append(
                UnverifiedByTrace(
                    "provider_unavailable", "no LLM provider configured: deterministic rerank only"
                )
            )
        else:
            context.cancel.raise_if_cancelled(self.name)
            files: list[str] = []
            for c in ordered:
                if c.path not in files:
                    files.append(c.path)
            window = files[: self.llm_window]
            resources.append(("api_calls", 1))
            try:
                picked = _llm_order(window, input.query.intent, self.llm)
            except LibrarianError as exc:  # a provider failure degrades, it does not fail
                picked = None
                traces.append(UnverifiedByTrace("provider_error", exc.message))
                warnings.append(f"LLM rerank failed ({exc.code}); deterministic order kept")
            if picked is None:
                if not traces:
                    warnings.append("the LLM answer named no listed file; deterministic order kept")
            else:
                order = picked + [p for p in files if p not in picked]
                pos = {p: i for i, p in enumerate(order)}
                ordered = tuple(sorted(ordered, key=lambda c: (pos[c.path], *c.sort_key())))
                evidence.append(
                    StageEvidence.of(
                        "llm",
                        f"LLM reordered {len(picked)} of {len(window)} files",
                        named=len(picked),
                        shown=len(window),
                    )
                )
        return StageResult(
            CandidateSet(input.query, ordered),
            watch.ms(),
            tuple(evidence),
            tuple(warnings),
            tuple(traces),
            tuple(resources),
        )
