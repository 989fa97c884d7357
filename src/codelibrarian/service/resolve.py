"""A compose request resolved against its workspace, and what only then can be checked.

A :class:`~codelibrarian.requests.ComposeRequest` is checked when it is made, by every
shell alike. What depends on the workspace is checked here, once, before any work:
the configured defaults fill what the caller left out, the budget must hold the
smallest pack the format can render (counted with the model's tokenizer), and the
ranking signals to switch off must be the ranking engine's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config
from ..errors import UsageError
from ..requests import ComposeRequest
from ..tokens import Tokenizer, get_tokenizer

__all__ = ["Resolved", "check_pack_budget", "check_signals", "resolve", "smallest_pack"]

#: below this budget a compose checks that the smallest pack fits (every format's
#: smallest pack takes fewer tokens than this with every tokenizer)
_FRAME_CHECK_BELOW = 64


@dataclass(frozen=True, slots=True)
class Resolved:
    """The budget, pack format and model a request composes with, and the tokenizer."""

    total: int
    fmt: str
    model: str
    tokenizer: Tokenizer


def resolve(request: ComposeRequest, config: Config) -> Resolved:
    """``request``'s budget, format and model (the config's where it gave none),
    checked against each other (:func:`check_pack_budget`) and its signals checked."""
    fmt = request.fmt or config.compose.format
    total = config.budget.total_tokens if request.budget is None else request.budget
    model = request.model or config.compose.model
    tokenizer = get_tokenizer(model)
    check_pack_budget(total, fmt, tokenizer)
    check_signals(request.signals_off)
    return Resolved(total, fmt, model, tokenizer)


def smallest_pack(fmt: str, tokenizer: Tokenizer) -> int:
    """Tokens of the smallest pack ``fmt`` can render: one artifact of one line under
    the shortest header (a one-letter title, the shortest kind), counted with
    ``tokenizer``. No pack with anything in it takes fewer."""
    from ..composer.render import render_block
    from ..composer.types import KINDS, Candidate, Format

    block_fmt: Format = "markdown" if fmt == "json" else fmt  # type: ignore[assignment]
    return min(
        tokenizer.count(
            render_block(
                Candidate(id="a", kind=kind, lane="rules", token_estimate=1, title="a"),
                "x",
                block_fmt,
            )
        )
        for kind in KINDS
    )


def check_pack_budget(total: int, fmt: str, tokenizer: Tokenizer) -> None:
    """Refuse a budget too small for any pack of ``fmt`` (its frame alone: one
    artifact's header, fences and one line), naming the smallest that could work."""
    if total >= _FRAME_CHECK_BELOW:
        return
    floor = smallest_pack(fmt, tokenizer)
    if total < floor:
        shown = "markdown" if fmt == "json" else fmt  # a json pack's text is markdown
        tokens = f"{total:,} token{'' if total == 1 else 's'}"
        raise UsageError(
            f"a budget of {tokens} is too small for any pack: the smallest {shown} pack "
            f"(one artifact of one line) takes {floor} tokens counted with {tokenizer.name}",
            hint=f"Give a budget of at least {floor} tokens; useful packs start at a few hundred.",
        )


def check_signals(names: frozenset[str]) -> None:
    """Refuse a ranking signal to switch off that the ranking engine does not have."""
    if not names:
        return  # the usual case: no import of the ranking engine for it
    from ..query.locate import SIGNALS

    unknown = sorted(names - set(SIGNALS))
    if unknown:
        raise UsageError(
            f"unknown ranking signal(s) to switch off: {', '.join(unknown)}",
            hint=f"Signals are: {', '.join(SIGNALS)}.",
        )
