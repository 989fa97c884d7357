"""The workflow-run tools: ``run_start``, ``run_next``, ``run_submit``, ``run_status``.

The calling agent is the worker: it starts a run, is handed each step with the
step's instructions, input, output schema and its own context pack, submits the
step's output, and is handed the next step in the same answer. Each result is
one JSON document under ``max_tokens``; when a step's context pack does not fit,
the text is cut at a line boundary (the note in ``truncated`` says so) and the
whole pack stays readable as the step's ``context_uri`` resource. Every string
in a result has passed the engine's outgoing-text gate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from .budget import drop_field, fit_document, trim_list, trim_nested_lists
from .tools import _max_tokens, _tokenizer

if TYPE_CHECKING:
    from ..api import Librarian
    from ..execution.report import RunView

__all__ = ["RUN_TOOLS", "run_next", "run_start", "run_status", "run_submit"]

DEFAULTS = {"run_start": 10000, "run_next": 10000, "run_submit": 10000, "run_status": 3000}

RunIdArg = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="The run id run_start returned.",
    ),
]


def _step(doc: Mapping[str, Any]) -> dict[str, Any]:
    ctx = doc.get("context", {})
    return {
        "step": doc["step"],
        "dispatch": doc["dispatch"],
        "name": doc["name"],
        "role": doc["role"],
        "attempt": doc["attempt"],
        "instructions": doc["instructions"],
        "input": doc["input"],
        "output_schema": doc["output_schema"],
        "postconditions": doc.get("postconditions", []),
        "previous_violations": doc.get("previous_violations", []),
        "degraded": doc.get("degraded"),
        "context_uri": ctx.get("uri"),
        "context_tokens": ctx.get("tokens"),
        "context_budget": ctx.get("budget"),
        "lcp_uri": doc.get("lcp_uri"),
        "context_text": ctx.get("text", ""),
    }


def _doc(view: RunView, docs: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    data = view.to_dict(outputs=view.status in ("succeeded", "failed", "terminated"))
    data.pop("pending", None)
    data["steps"] = [_step(d) for d in docs]
    if docs:
        data["how"] = (
            "Work each step with its context, then call run_submit(run_id, step, output) "
            "with one JSON object matching output_schema."
        )
    return data


def _fit(lib: Librarian, doc: dict[str, Any], max_tokens: int) -> str:
    return fit_document(
        doc,
        _tokenizer(lib, None),
        max_tokens,
        [
            trim_nested_lists("steps", "context_text"),
            drop_field("outputs", "outputs: left out (read them with run_status)"),
            trim_list("steps"),
        ],
        essentials=("run_id", "status", "next"),
    )


def _with_steps(lib: Librarian, view: RunView) -> tuple[RunView, list[dict[str, Any]]]:
    if not view.pending:
        return view, []
    return lib.run_next(view.run_id)


def run_start(
    lib: Librarian,
    *,
    composition: Annotated[
        str,
        Field(
            min_length=1,
            max_length=500,
            description="A composition id (e.g. tc_root_cause_recovery), a preset name, or "
            "the path of an LCL program file.",
        ),
    ],
    task: Annotated[
        str, Field(min_length=1, max_length=4000, description="What the run is for, in words.")
    ],
    provider: Annotated[
        str | None,
        Field(
            max_length=100,
            description="Let this provider's model work the agent steps (unattended); "
            "default: you work them.",
        ),
    ] = None,
    approve: Annotated[
        bool,
        Field(description="Approve a productive or unrestricted composition (may not end)."),
    ] = False,
    max_tokens: Annotated[int, _max_tokens("run_start")] = DEFAULTS["run_start"],
) -> str:
    """Start a technique workflow run (e.g. tc_root_cause_recovery) for a task. Built-in
    steps run at once over the index; the result hands you the first step(s) to work:
    instructions, input, output_schema and the step's own context pack."""
    view = lib.run_start(composition, task, provider=provider, approve=approve)
    view, docs = _with_steps(lib, view)
    return _fit(lib, _doc(view, docs), max_tokens)


def run_next(
    lib: Librarian,
    *,
    run_id: RunIdArg,
    max_tokens: Annotated[int, _max_tokens("run_next")] = DEFAULTS["run_next"],
) -> str:
    """The steps of a run waiting for you (instructions, input, output_schema, context pack),
    after working anything the engine can work itself."""
    view, docs = lib.run_next(run_id)
    return _fit(lib, _doc(view, docs), max_tokens)


def run_submit(
    lib: Librarian,
    *,
    run_id: RunIdArg,
    step: Annotated[
        str,
        Field(min_length=1, max_length=200, description="The step id you were handed."),
    ],
    output: Annotated[
        dict[str, Any],
        Field(description="Your output: one JSON object that matches the step's output_schema."),
    ],
    max_tokens: Annotated[int, _max_tokens("run_submit")] = DEFAULTS["run_submit"],
) -> str:
    """Submit your output for a step. Its contract (schema, postconditions) is checked; a
    violation is recorded and the run's operators decide (a retry hands the step back with
    the reasons). The result hands you the next step(s)."""
    view = lib.run_submit(run_id, step, output)
    view, docs = _with_steps(lib, view)
    return _fit(lib, _doc(view, docs), max_tokens)


def run_status(
    lib: Librarian,
    *,
    run_id: RunIdArg,
    max_tokens: Annotated[int, _max_tokens("run_status")] = DEFAULTS["run_status"],
) -> str:
    """Where a run stands: status, steps waiting, what it awaits, and (when finished) the
    outputs by step id."""
    view = lib.run_status(run_id)
    doc = view.to_dict(outputs=True)
    return fit_document(
        doc,
        _tokenizer(lib, None),
        max_tokens,
        [drop_field("outputs", "outputs: left out; raise max_tokens"), trim_list("pending")],
        essentials=("run_id", "status", "next"),
    )


RUN_TOOLS: dict[str, Callable[..., str]] = {
    "run_start": run_start,
    "run_next": run_next,
    "run_submit": run_submit,
    "run_status": run_status,
}
