"""``librarian plan``, ``librarian advise`` and ``librarian evolve [approve | reject]``.

* ``plan INTENT``   which workflow fits, decided on this codebase: steps with their
  context measured, estimates, providers, rationale and alternatives (``--markdown``
  for a document, ``--json`` for the data);
* ``advise``        the codebase's features with evidence, and 3–5 workflows for it;
* ``evolve``        proposals, mutations and deprecations learned from finished runs;
  ``evolve approve ID`` writes a preset, ``evolve reject ID`` records the refusal.

Every document passes the secret scanner before it is printed or written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ._common import JSON_OPTION, REPO_OPTION, out_console, print_json, resolve_repo

if TYPE_CHECKING:
    from ..api import Librarian

AS_OF_OPTION = typer.Option(
    None, "--as-of", min=0, help="Epoch seconds to measure against (default: now)."
)


def _librarian(repo: Path) -> Librarian:
    from ..api import Librarian

    return Librarian(resolve_repo(repo))


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")


def _start_planned(lib: Any, plan: Any, intent: str, doc: Any, *, as_json: bool) -> None:
    """``plan --run``: start the chosen composition for the calling agent to work."""
    from ..planning.render import plan_text
    from .workflow_cmds import print_view

    chosen = plan.selection.intent
    domains = chosen.domains
    view = lib.run_start(
        plan.chosen.id,
        intent,
        pattern_id=plan.selection.pattern.id,
        intent_action=chosen.action,
        intent_domain=domains[0].word if domains else None,
    )
    if as_json:
        print_json({"plan": doc, "run": view.to_dict()})
        return
    sys.stdout.write(plan_text(doc))
    print_view(view, as_json=False)


def register(app: typer.Typer) -> None:
    """Register ``plan``, ``advise`` and ``evolve`` on ``app``."""

    @app.command("plan")
    def plan_cmd(
        intent: str = typer.Argument(..., help="What you want done, in words."),
        *,
        markdown: bool = typer.Option(False, "--markdown", help="Print a Markdown document."),
        output: Path | None = typer.Option(None, "--output", "-o", help="Write to this file."),
        llm: bool = typer.Option(
            False, "--llm", help="Let an available LLM provider decompose the intent."
        ),
        keywords: bool = typer.Option(
            False, "--keywords", help="Match by keywords only (skips loading the embedding model)."
        ),
        base: str | None = typer.Option(
            None, "--base", help="Change = diff from this revision to the work tree."
        ),
        diff: Path | None = typer.Option(None, "--diff", help="Change = this unified diff file."),
        model: str | None = typer.Option(None, "--model", help="Model whose tokenizer counts."),
        as_of: int | None = AS_OF_OPTION,
        run: bool = typer.Option(False, "--run", help="Start the planned workflow."),
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Plan the workflow for INTENT on this repository, and say why."""
        from ..errors import UsageError
        from ..planning.outgoing import outgoing
        from ..planning.render import plan_markdown, plan_text

        if run and (markdown or output is not None):
            raise UsageError(
                "plan --run prints the run it started; it cannot also write a document",
                hint="Drop --markdown/--output, or start it later with `librarian runs start`.",
            )
        lib = _librarian(repo)
        diff_text = diff.read_text(encoding="utf-8") if diff is not None else None
        plan = lib.plan(
            intent, base=base, diff_text=diff_text, llm=llm, embeddings=not keywords,
            model=model, as_of=as_of,
        )  # fmt: skip
        doc: Any = outgoing(plan.to_dict())
        if run:
            _start_planned(lib, plan, intent, doc, as_json=as_json)
            return
        if as_json:
            if output is not None:
                import json

                _write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", output)
            else:
                print_json(doc)
            return
        _write(plan_markdown(doc) if markdown else plan_text(doc), output)

    @app.command("advise")
    def advise_cmd(*, repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION) -> None:
        """Find the codebase's features (auth, api, database ...) and suggest workflows."""
        from ..planning.outgoing import outgoing
        from ..planning.render import advice_text

        doc: Any = outgoing(_librarian(repo).advise().to_dict())
        if as_json:
            print_json(doc)
        else:
            sys.stdout.write(advice_text(doc))

    evolve = typer.Typer(
        name="evolve",
        help="Learn workflows from finished runs; nothing changes without approval.",
        invoke_without_command=True,
    )
    app.add_typer(evolve, name="evolve")

    @evolve.callback()
    def evolve_cmd(
        ctx: typer.Context,
        *,
        as_of: int | None = AS_OF_OPTION,
        traces: Path | None = typer.Option(
            None, "--traces", help="Learn from these run traces (JSON lines) instead."
        ),
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Show proposals, mutations and deprecation candidates (approve or reject by id)."""
        if ctx.invoked_subcommand is not None:
            return
        from ..planning.history import traces_from_jsonl
        from ..planning.outgoing import outgoing
        from ..planning.render import evolution_text

        given = None
        if traces is not None:
            given = traces_from_jsonl(traces.read_text(encoding="utf-8"), source=str(traces))
        doc: Any = outgoing(_librarian(repo).evolve(as_of=as_of, traces=given).to_dict())
        if as_json:
            print_json(doc)
        else:
            sys.stdout.write(evolution_text(doc))

    def _decide(item: str, *, approve: bool, name: str | None, force: bool, repo: Path,
                as_json: bool) -> None:  # fmt: skip
        from ..planning.outgoing import outgoing

        d = _librarian(repo).evolve_decide(item, approve=approve, name=name, force=force)
        doc: Any = outgoing(d.to_dict())
        if as_json:
            print_json({"ok": True, **doc})
            return
        what = f"; preset {d.preset} written" if d.preset else ""
        out_console().print(f"{d.kind} {d.id} {d.decision}{what}", markup=False)

    @evolve.command("approve")
    def approve_cmd(
        item: str = typer.Argument(..., help="An id from the last `librarian evolve`."),
        *,
        name: str | None = typer.Option(None, "--name", help="Preset name (default: the id)."),
        force: bool = typer.Option(False, "--force", help="Replace a preset of that name."),
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Approve ITEM: a proposal or mutation becomes a preset; a deprecation is recorded."""
        _decide(item, approve=True, name=name, force=force, repo=repo, as_json=as_json)

    @evolve.command("reject")
    def reject_cmd(
        item: str = typer.Argument(..., help="An id from the last `librarian evolve`."),
        *,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Reject ITEM: recorded, so it is shown as rejected from now on."""
        _decide(item, approve=False, name=None, force=False, repo=repo, as_json=as_json)
