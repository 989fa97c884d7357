"""Fit a tool result under its token budget, deterministically.

Every MCP tool returns one text block: a compact JSON document. Before it is
sent, :func:`fit_document` counts the serialized document with the target
model's tokenizer and, while it is over ``max_tokens``, applies the tool's
reductions in order — each the smallest cut that makes the document fit, found
by binary search — and records every cut in the document's ``truncated`` list,
so the agent knows what it is not seeing and how to get it (raise
``max_tokens``, or ask a narrower question). When every reduction has run and
the document still does not fit, it is replaced by a minimal document that
says so. ``MIN_MAX_TOKENS`` is chosen so that the minimal document always fits.

Same document, same budget, same tokenizer: same bytes out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..tokens import Tokenizer

__all__ = [
    "MIN_MAX_TOKENS",
    "Reduction",
    "drop_field",
    "fit_document",
    "render",
    "trim_list",
    "trim_nested_lists",
    "trim_text",
]

#: the smallest ``max_tokens`` a tool accepts (the minimal document fits it)
MIN_MAX_TOKENS = 128

Doc = dict[str, Any]
#: a reduction: (document, fits) -> the reduced document (or the same one when it cannot help)
Reduction = Callable[[Doc, Callable[[Doc], bool]], Doc]


def render(doc: Doc) -> str:
    """The wire form: compact JSON, keys in insertion order, non-ASCII kept."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def _note(doc: Doc, note: str) -> Doc:
    out = dict(doc)
    out["truncated"] = [*doc.get("truncated", []), note]
    return out


def fit_document(
    doc: Doc,
    tokenizer: Tokenizer,
    max_tokens: int,
    reductions: Sequence[Reduction],
    *,
    essentials: Sequence[str] = (),
) -> str:
    """``doc`` serialized in at most ``max_tokens`` tokens (see the module docstring).

    ``essentials`` names the keys kept in the minimal fallback document (ids,
    status), each dropped in turn from the end if even that does not fit.
    """

    def fits(candidate: Doc) -> bool:
        return tokenizer.count(render(candidate)) <= max_tokens

    if fits(doc):
        return render(doc)
    for reduce in reductions:
        doc = reduce(doc, fits)
        if fits(doc):
            return render(doc)
    keys = [k for k in essentials if k in doc]
    while True:
        minimal: Doc = {k: doc[k] for k in keys}
        minimal["truncated"] = [
            f"everything but {', '.join(keys) or 'this note'}: the result needs more than "
            f"{max_tokens} tokens; raise max_tokens or narrow the request"
        ]
        if fits(minimal) or not keys:
            return render(minimal)
        keys.pop()


def drop_field(key: str, note: str | None = None) -> Reduction:
    """Remove ``key`` entirely."""

    def reduce(doc: Doc, fits: Callable[[Doc], bool]) -> Doc:
        if key not in doc:
            return doc
        out = {k: v for k, v in doc.items() if k != key}
        return _note(out, note or f"{key}: left out")

    return reduce


def _largest(n: int, ok: Callable[[int], bool]) -> int:
    """Largest ``k`` in ``0..n`` with ``ok(k)`` (assumed monotone), or 0."""
    lo, hi, best = 0, n, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(mid):
            best = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def trim_list(key: str) -> Reduction:
    """Keep the longest prefix of the list ``doc[key]`` that fits (order is rank order)."""

    def reduce(doc: Doc, fits: Callable[[Doc], bool]) -> Doc:
        items = doc.get(key)
        if not isinstance(items, list) or not items:
            return doc

        def build(k: int) -> Doc:
            out = dict(doc)
            out[key] = items[:k]
            return _note(out, f"{key}: {len(items) - k} of {len(items)} left out")

        return build(_largest(len(items), lambda k: fits(build(k))))

    return reduce


def trim_nested_lists(key: str, inner: str) -> Reduction:
    """Empty ``doc[key][i][inner]`` from the last item upwards until the document fits.

    Used to drop the code of the lowest-ranked results first while keeping their
    place (path, score, lines) in the ranking.
    """

    def reduce(doc: Doc, fits: Callable[[Doc], bool]) -> Doc:
        items = doc.get(key)
        if not isinstance(items, list) or not items:
            return doc
        cleared = [
            {k: v for k, v in item.items() if k != inner} if isinstance(item, dict) else item
            for item in items
        ]
        n = len(items)

        def build(keep: int) -> Doc:
            out = dict(doc)
            out[key] = items[:keep] + cleared[keep:]
            if keep == n:
                return out
            return _note(out, f"{key}[{keep}:].{inner}: left out")

        keep = _largest(n, lambda k: fits(build(k)))
        best = build(keep)
        if keep == n or not fits(best):
            return best
        # the first item that lost its value may still show a prefix of it
        partial = _cut_prefix(items[keep], inner)
        if partial is None:
            return best
        cuts, make = partial

        def build_partial(j: int) -> Doc:
            out = dict(doc)
            out[key] = [*items[:keep], make(cuts[j - 1]), *cleared[keep + 1 :]]
            out = _note(out, f"{key}[{keep}].{inner}: cut")
            return _note(out, f"{key}[{keep + 1}:].{inner}: left out") if keep + 1 < n else out

        j = _largest(len(cuts), lambda j: j > 0 and fits(build_partial(j)))
        return build_partial(j) if j > 0 else best

    return reduce


def _cut_prefix(
    item: Any, inner: str
) -> tuple[list[tuple[int, int]], Callable[[tuple[int, int]], Any]] | None:
    """Line-boundary cut points through ``item[inner]`` (a string or a list of strings)."""
    if not isinstance(item, dict):
        return None
    value = item.get(inner)
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return None
    cuts = [(i, pos + 1) for i, t in enumerate(texts) for pos, ch in enumerate(t) if ch == "\n"]
    cuts = [(i, c) for i, c in cuts if c < len(texts[i])] + [
        (i, len(t)) for i, t in enumerate(texts)
    ]
    cuts.sort()
    if not cuts:
        return None

    def make(cut: tuple[int, int]) -> Any:
        i, c = cut
        kept = [*texts[:i], texts[i][:c]]
        out = dict(item)
        out[inner] = kept if isinstance(value, list) else kept[0]
        return out

    return cuts, make


def trim_text(key: str) -> Reduction:
    """Cut the string ``doc[key]`` to its longest fitting prefix (line, then word bounds)."""

    def reduce(doc: Doc, fits: Callable[[Doc], bool]) -> Doc:
        text = doc.get(key)
        if not isinstance(text, str) or not text:
            return doc
        cuts = [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        if len(cuts) < 8:
            cuts = sorted({*cuts, *(i for i, ch in enumerate(text) if ch == " ")})
        cuts = [c for c in cuts if 0 < c < len(text)]

        def build(k: int) -> Doc:
            out = dict(doc)
            out[key] = text[: cuts[k - 1]] if k else ""
            return _note(out, f"{key}: cut to {len(out[key])} of {len(text)} characters")

        return build(_largest(len(cuts), lambda k: fits(build(k))))

    return reduce
