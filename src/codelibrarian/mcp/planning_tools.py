"""MCP tools for planning: ``plan`` (which workflow, why, at what cost) and ``advise``.

Like every tool, each returns one JSON document that passes the secret scanner and
is fitted under ``max_tokens`` (``budget.fit_document``): the least needed parts
go first (per-step reasons, operator notes, alternatives' trade-offs), and
``truncated`` says what was cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ..tokens import get_tokenizer
from .budget import MIN_MAX_TOKENS, drop_field, fit_document, trim_list, trim_nested_lists

if TYPE_CHECKING:
    from ..api import Librarian

__all__ = ["PLANNING_TOOLS", "advise_workflows", "plan_workflow"]

MAX_RESULT_TOKENS = 100_000
DEFAULT_MAX_TOKENS = {"plan": 4000, "advise": 2500}


def _max_tokens() -> Any:
    return Field(
        ge=MIN_MAX_TOKENS,
        le=MAX_RESULT_TOKENS,
        description="Hard cap on the tokens of this tool's whole result; the result is "
        "shrunk deterministically to fit and says what was cut in `truncated`.",
    )


def _compact(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan document with its sections at the top level, essentials first."""
    r = plan["rationale"]
    steps = [
        {k: s[k] for k in ("step", "primitive", "executor", "role", "query", "budget_tokens",
                           "context_tokens", "expected_runs", "time_ms")}
        | ({"model": s["model"]} if "model" in s else {})
        for s in plan["plan"]["steps"]
    ]  # fmt: skip
    return {
        "workflow": {
            "id": plan["plan"]["id"],
            "name": plan["plan"]["name"],
            "pattern": plan["selection"]["pattern"],
            "stratum": plan["plan"]["stratum"],
            "score_per_mille": plan["selection"]["score_per_mille"],
            "confidence_per_mille": plan["selection"]["confidence_per_mille"],
            "needs_approval": plan["plan"]["policy"]["human_approval_required"],
        },
        "intent": {k: plan["intent"][k] for k in ("action", "urgency", "scope", "constraints")}
        | {"domains": [d["word"] for d in plan["intent"]["domains"]]},
        "steps": steps,
        "estimates": plan["estimates"],
        "decisions": plan["decisions"],
        "why": r["selection"],
        "assumptions": r["assumptions"],
        "limitations": r["limitations"],
        "alternatives": plan["alternatives"],
        "context": plan["context"],
        "degradations": [d["code"] for d in plan["degradations"]],
        "step_reasons": r["primitives"],
        "operators": r["operators"],
        "tree": plan["plan"]["tree"],
    }


def plan_workflow(
    lib: Librarian,
    *,
    intent: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2000,
            description="What you are about to do, in words (e.g. 'why does checkout fail "
            "since the deploy').",
        ),
    ],
    base: Annotated[
        str | None,
        Field(max_length=200, description="Git revision the current change is measured against."),
    ] = None,
    llm: Annotated[
        bool, Field(description="Let an available LLM provider decompose the intent.")
    ] = False,
    max_tokens: Annotated[int, _max_tokens()] = DEFAULT_MAX_TOKENS["plan"],
    as_of: Annotated[
        int | None, Field(ge=0, description="Epoch seconds recency is measured against.")
    ] = None,
) -> str:
    """Plan the technique workflow for an intent on this repository: the chosen
    composition decided on the codebase and the current change, each step with its
    context budget and measured tokens, time estimates, providers, why it was chosen
    and the alternatives considered."""
    from ..planning.outgoing import outgoing

    plan = lib.plan(intent, base=base, llm=llm, as_of=as_of)
    doc = _compact(outgoing(plan.to_dict()))
    return fit_document(
        doc,
        get_tokenizer(lib.config.compose.model),
        max_tokens,
        [
            drop_field("tree"),
            drop_field("operators"),
            drop_field("step_reasons"),
            trim_nested_lists("alternatives", "tradeoffs"),
            drop_field("context"),
            trim_list("alternatives"),
            trim_list("assumptions"),
            trim_list("decisions"),
        ],
        essentials=("workflow", "steps"),
    )


def advise_workflows(
    lib: Librarian,
    *,
    max_tokens: Annotated[int, _max_tokens()] = DEFAULT_MAX_TOKENS["advise"],
) -> str:
    """Which of the ten codebase features (auth, api, database, ui, testing, config,
    observability, integrations, performance, async) this repository has, with
    evidence files and confidence, and 3-5 workflows suggested for it."""
    from ..planning.outgoing import outgoing

    doc: dict[str, Any] = outgoing(lib.advise().to_dict())
    return fit_document(
        doc,
        get_tokenizer(lib.config.compose.model),
        max_tokens,
        [
            trim_nested_lists("features", "signals"),
            trim_nested_lists("features", "evidence"),
            trim_nested_lists("suggestions", "primitives"),
            trim_list("features"),
        ],
        essentials=("suggestions",),
    )


PLANNING_TOOLS: dict[str, Callable[..., str]] = {
    "plan": plan_workflow,
    "advise": advise_workflows,
}
