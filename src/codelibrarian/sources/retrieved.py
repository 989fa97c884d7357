"""Retrieved lane: the code most likely to matter, by text and graph signals.

Files come from :mod:`.ranking` (BM25 + path + personalized PageRank + recency).
Each candidate's header carries the file's relative path and line range.

- ``semantic_match``: for the top ``clamp(budget // 250, 6, 40)`` files, the
  whole file when it fits the per-file cap ``clamp(budget // 8, 150, 1200)``
  tokens, else up to three of its best-matching chunks, each cut to the cap.
  relevance = the file's ranking score for its first piece, 7/10 of it for the
  second, 1/2 for the third; specificity 600 for a whole file, 700 for a
  definition chunk, 400 for a module-level chunk; risk 300; recency from git.
- ``test_context`` (budgets of 4,000 tokens and more): tests related to the
  changed files and the top five files,
  by import edges (the test imports the file) or by naming (``test_foo.py``,
  ``foo_test.go``, ``foo.test.ts`` for ``foo``): the test's best chunk (or its
  start) cut to half the cap. relevance 200 + a fifth of the related file's
  score (changed files count 1000); specificity 500; risk 300.

Sensitive files that match the task (or were asked for) appear as placeholder
candidates so the policy engine's exclusion is recorded; their content is never read.

When the query pipeline is present and configured it can replace the text
signal; until then BM25 from the index is the text signal (see docs/compose.md).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

from ..composer.types import Candidate
from ..index.records import ChunkHit
from ..tokens import fit_prefix
from .base import PLACEHOLDER, SourceContext, clamp
from .ranking import FileRank, is_test_path, rank_files

__all__ = ["RetrievedSource", "per_file_cap"]

_DEFINITION_KINDS = frozenset(
    {"function", "method", "class", "interface", "struct", "enum", "trait", "type", "macro"}
)


#: below this budget the lane offers no test_context (code of the files comes first)
_TESTS_FROM_BUDGET = 4000


def per_file_cap(budget: int) -> int:
    """Largest body (tokens) one file may bring into the retrieved lane."""
    return clamp(budget // 8, 150, 1200)


def _lines(rows: list[str], a: int, b: int) -> str:
    return "\n".join(rows[a - 1 : b]) + "\n"


def _language(path: str) -> str | None:
    ext = posixpath.splitext(path)[1].lower().lstrip(".")
    return ext or None


def _stem(path: str) -> str:
    return posixpath.basename(path).split(".")[0].lower()


def _test_stems(path: str) -> str:
    stem = _stem(path)
    for prefix in ("test_", "tests_"):
        if stem.startswith(prefix):
            return stem[len(prefix) :]
    for suffix in ("_test", "_tests", "_spec"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


class RetrievedSource:
    """Best code of the top-ranked files (``semantic_match``) and their tests."""

    name = "retrieved"

    def gather(self, ctx: SourceContext) -> list[Candidate]:
        ranking = rank_files(ctx)
        cap = per_file_cap(ctx.budget)
        top_n = clamp(ctx.budget // 250, 6, 40)
        out: list[Candidate] = []
        for path in ranking.sensitive:
            # stands for a matching sensitive file; the policy engine excludes it unread
            out.append(
                ctx.candidate(
                    kind="semantic_match",
                    lane="retrieved",
                    path=path,
                    content=PLACEHOLDER,
                    title=path,
                    relevance=500,
                    specificity=400,
                    risk=1000,
                )
            )
        for rank in ranking.top(top_n):
            out.extend(self._file_pieces(ctx, rank, cap))
        if ctx.budget >= _TESTS_FROM_BUDGET:
            out.extend(self._tests(ctx, ranking.tests, ranking.top(5), cap // 2))
        return out

    def _file_pieces(self, ctx: SourceContext, rank: FileRank, cap: int) -> list[Candidate]:
        text = ctx.read(rank.path)
        if not text or not text.strip():
            return []
        recency = ctx.recency.get(rank.path, 0)
        lang = _language(rank.path)
        rows = ctx.lines(rank.path)
        n_lines = max(1, len(rows))
        if ctx.file_tokens(rank.path) <= cap:
            return [
                ctx.candidate(
                    kind="semantic_match",
                    lane="retrieved",
                    path=rank.path,
                    content=text,
                    title=rank.path,
                    relevance=rank.score,
                    specificity=600,
                    risk=300,
                    recency_bucket=recency,
                    lines=(1, n_lines),
                    language=lang,
                )
            ]
        out: list[Candidate] = []
        hits = self._distinct(rank.hits)[:3]
        for index, hit in enumerate(hits):
            body = _lines(rows, hit.start_line, hit.end_line)
            # measure the lines we render, not the chunk: a class chunk's indexed text is
            # its header and method signatures, far shorter than the class's line range
            if ctx.tokenizer.count(body) > cap:
                body = fit_prefix(ctx.tokenizer, body, cap)
            if not body.strip():
                continue
            end = hit.start_line + max(0, body.count("\n") - 1)
            relevance = rank.score * (10, 7, 5)[index] // 10
            out.append(
                ctx.candidate(
                    kind="semantic_match",
                    lane="retrieved",
                    path=rank.path,
                    content=body,
                    title=rank.path,
                    chunk_index=index,
                    discriminator=f"{hit.start_line}-{hit.end_line}",
                    relevance=relevance,
                    specificity=700 if hit.kind in _DEFINITION_KINDS else 400,
                    risk=300,
                    recency_bucket=recency,
                    lines=(hit.start_line, min(max(hit.start_line, end), n_lines)),
                    language=lang,
                )
            )
        return out

    @staticmethod
    def _distinct(hits: tuple[ChunkHit, ...]) -> list[ChunkHit]:
        """Hits best first, dropping those nested in or overlapping an earlier one."""
        kept: list[ChunkHit] = []
        for h in hits:
            if any(h.start_line <= k.end_line and k.start_line <= h.end_line for k in kept):
                continue
            kept.append(h)
        return kept

    def _tests(
        self,
        ctx: SourceContext,
        tests: tuple[FileRank, ...],
        top: tuple[FileRank, ...],
        cap: int,
    ) -> list[Candidate]:
        targets: dict[str, int] = dict.fromkeys(ctx.changed_paths, 1000)
        for rank in top:
            targets.setdefault(rank.path, rank.score)
        if not targets:
            return []
        by_stem: dict[str, list[str]] = defaultdict(list)
        for path in targets:
            by_stem[_stem(path)].append(path)
        shared = ctx.memo.setdefault("shared", {})
        test_files = shared.get("retrieved.tests")
        if test_files is None:
            import_edges = ctx.store.edges("import") if ctx.store is not None else []
            test_files = (
                tuple((p, _test_stems(p)) for p in ctx.files if is_test_path(p)),
                tuple((a, b) for a, b, _ in import_edges if is_test_path(a)),
            )
            shared["retrieved.tests"] = test_files
        imports: dict[str, set[str]] = defaultdict(set)
        for src, dst in test_files[1]:
            if dst in targets:
                imports[src].add(dst)
        ranked = {t.path: t for t in tests}
        related: dict[str, int] = {}
        for path, stem in test_files[0]:
            if ctx.sensitive(path):
                continue
            linked = set(imports.get(path, ())) | set(by_stem.get(stem, ()))
            if linked:
                related[path] = max(targets[p] for p in linked)
        out: list[Candidate] = []
        for path in sorted(related, key=lambda p: (-related[p], p))[:5]:
            text = ctx.read(path)
            if not text or not text.strip():
                continue
            found = ranked.get(path)
            hit = self._distinct(found.hits)[0] if found and found.hits else None
            rows = ctx.lines(path)
            # no matching chunk: the start of the file (a bounded slice, then cut to cap)
            a, b = (hit.start_line, hit.end_line) if hit else (1, min(len(rows), cap * 2))
            body = fit_prefix(ctx.tokenizer, _lines(rows, a, b), cap)
            if not body.strip():
                continue
            end = a + max(0, body.count("\n") - 1)
            out.append(
                ctx.candidate(
                    kind="test_context",
                    lane="retrieved",
                    path=path,
                    content=body,
                    title=path,
                    relevance=200 + related[path] // 5,
                    specificity=500,
                    risk=300,
                    recency_bucket=ctx.recency.get(path, 0),
                    lines=(a, max(a, end)),
                    language=_language(path),
                )
            )
        return out
