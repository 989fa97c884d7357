"""``librarian window``: compose a goal / map / recent-past window (WindowComposer).

The map comes from ``--map-file`` (for example the saved output of
``librarian map``) or, without it, is rendered from the repository's existing
index exactly as ``librarian map --budget N`` would (``--map-budget N``, default
the map slot's budget). Envelopes come from a JSONL file, one
``{"id": ..., "content": ..., "timestamp_ms": ...}`` object per line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from ..errors import UsageError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    err_console,
    json_mode,
    print_json,
    resolve_repo,
)

if TYPE_CHECKING:  # the facade pulls in the index and the composer: import it on use
    from ..api import ComposedWindow, SaopEnvelope, WindowBudget


class _EnvelopeRow(BaseModel):
    """One JSONL line, validated at the boundary."""

    model_config = ConfigDict(extra="ignore")

    id: StrictStr
    content: StrictStr
    timestamp_ms: StrictInt


def read_envelopes(path: Path) -> tuple[SaopEnvelope, ...]:
    """Parse a JSONL envelope file; errors name the line and the field."""
    from ..api import SaopEnvelope

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot read envelopes file {path}: {exc.strerror or exc}",
            hint="Pass an existing JSONL file to --envelopes.",
        ) from None
    except UnicodeDecodeError:
        raise UsageError(
            f"envelopes file {path} is not UTF-8 text",
            hint="Pass a JSONL file of {id, content, timestamp_ms} records.",
        ) from None
    out: list[SaopEnvelope] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = _EnvelopeRow.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"{path}: line {lineno}: not valid JSON ({exc.msg})",
                hint='Each line must be {"id": "...", "content": "...", "timestamp_ms": 123}.',
            ) from None
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "line"
            raise UsageError(
                f"{path}: line {lineno}: field {field}: {first['msg']}",
                hint='Each line must be {"id": "...", "content": "...", "timestamp_ms": 123}.',
            ) from None
        out.append(SaopEnvelope(row.id, row.content, row.timestamp_ms))
    return tuple(out)


def _read_map(map_file: Path) -> str:
    try:
        return map_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot read map file {map_file}: {exc.strerror or exc}",
            hint="Pass an existing text file to --map-file.",
        ) from None


def _build_map(repo: Path, budget: int, model: str | None) -> str:
    """The ranked repository map from the existing index, as ``librarian map`` prints it."""
    from ..api import Librarian

    with Librarian(resolve_repo(repo)) as lib:
        return lib.repo_map(budget, model=model).text


def window_to_dict(
    window: ComposedWindow, budget: WindowBudget, tokenizer: str
) -> dict[str, object]:
    """The JSON shape of a composed window."""
    return {
        "ok": True,
        "tokenizer": tokenizer,
        "budget": {
            "total": budget.total_budget,
            "goal": budget.goal_budget,
            "map": budget.map_budget,
            "recent_past": budget.recent_past_budget,
        },
        "total_tokens_used": window.total_tokens_used,
        "budget_exceeded": window.budget_exceeded,
        "dropped_envelope_ids": list(window.dropped_envelope_ids),
        "slots": [
            {
                "kind": s.kind,
                "id": s.id,
                "token_count": s.token_count,
                "truncated": s.truncated,
                "content": s.content,
            }
            for s in window.slots
        ],
    }


def register(app: typer.Typer) -> None:
    """Register ``librarian window`` on ``app``."""

    @app.command("window")
    def window_cmd(
        *,
        goal: str = typer.Option(..., "--goal", help="What the agent is working towards."),
        map_file: Path | None = typer.Option(
            None, "--map-file", help="Repository map text (e.g. saved `librarian map` output)."
        ),
        map_budget: int | None = typer.Option(
            None,
            "--map-budget",
            min=1,
            help="Without --map-file: render the index's map in N tokens (default: the map slot).",
        ),
        repo: Path = REPO_OPTION,
        envelopes: Path | None = typer.Option(
            None, "--envelopes", help="JSONL file of {id, content, timestamp_ms} envelopes."
        ),
        total: int = typer.Option(8000, "--total", min=0, help="Hard cap on the whole window."),
        goal_budget: int = typer.Option(1000, "--goal-budget", min=0, help="Goal allowance."),
        map_budget_tokens: int = typer.Option(
            4000, "--map-budget-tokens", min=0, help="Map slot allowance."
        ),
        recent_budget: int = typer.Option(
            3000, "--recent-budget", min=0, help="Recent-past allowance."
        ),
        max_recent: int = typer.Option(
            10, "--max-recent", help="Most recent envelopes considered (clamped to 1..10)."
        ),
        model: str | None = typer.Option(None, "--model", help="Target model (tokenizer)."),
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Compose a sliding window: goal, then map, then recent past (newest first)."""
        as_json = json_mode(as_json, fmt)
        from ..api import WindowBudget, compose_window, tokenizer_name

        budget = WindowBudget(
            total_budget=total,
            goal_budget=goal_budget,
            map_budget=map_budget_tokens,
            recent_past_budget=recent_budget,
        )
        if map_file is not None:
            if map_budget is not None:
                raise UsageError("--map-file and --map-budget exclude each other")
            repo_map = _read_map(map_file)
        else:
            size = map_budget if map_budget is not None else map_budget_tokens
            repo_map = _build_map(repo, size, model) if size > 0 else ""
        rows = read_envelopes(envelopes) if envelopes is not None else ()
        window = compose_window(
            goal, repo_map, rows, budget=budget, max_recent=max_recent, model=model
        )
        tokenizer = tokenizer_name(model)
        if as_json:
            print_json(window_to_dict(window, budget, tokenizer))
            return
        out = typer.get_text_stream("stdout")
        for slot in window.slots:
            label = slot.kind if slot.kind != "recent_past" else f"recent_past {slot.id}"
            cut = ", truncated" if slot.truncated else ""
            out.write(f"## {label} ({slot.token_count} tokens{cut})\n\n{slot.content}\n\n")
        note = "; the goal alone did not fit the total" if window.budget_exceeded else ""
        err_console().print(
            f"{window.total_tokens_used}/{total} tokens in {len(window.slots)} slots"
            f" ({tokenizer}); {len(window.dropped_envelope_ids)} envelopes left out{note}",
            markup=False,
            highlight=False,
        )
