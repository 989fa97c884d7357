"""``librarian lcl check | compile | facts`` and ``librarian presets list | show | save``.

* ``lcl check FILE``   every program in a TOML or (seed-form) JSON file, every error
  with its ``file:line:column``; exit 2 when any error is found.
* ``lcl compile X``    a file, a preset, a composition or a pattern, compiled: the
  tree with step ids, the stratum, its execution policy, the decisions taken on
  conditionals and the warnings. With ``--facts`` the conditionals are decided on
  this repository's facts (``--task``/``--base``/``--diff`` as for compose), with
  ``--facts-file`` on facts read from a JSON file; otherwise they stay in the tree.
* ``lcl facts``        the codebase, change and intent facts, with evidence.
* ``presets list | show | save``  built-in, config and workspace presets; ``save``
  checks a file and stores it as ``.librarian/presets/<name>.toml``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import UsageError
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    err_console,
    json_mode,
    out_console,
    print_json,
    read_input,
    resolve_repo,
)

if TYPE_CHECKING:
    from ..api import Librarian
    from ..techniques.diagnostics import Diagnostic
    from ..techniques.lcl import CompiledComposition, Program

TASK_OPTION = typer.Option("", "--task", "-t", help="The task, for intent facts.")
BASE_OPTION = typer.Option(
    None, "--base", help="Change = diff from this revision to the work tree."
)
DIFF_OPTION = typer.Option(None, "--diff", help="Change = this unified diff file ('-' for stdin).")


def _librarian(repo: Path) -> Librarian:
    from ..api import Librarian

    return Librarian(resolve_repo(repo))


def _diff_text(diff: Path | None) -> str | None:
    if diff is None:
        return None
    return read_input(diff, "diff", lenient=True)


def _print_diagnostics(diags: tuple[Diagnostic, ...] | list[Diagnostic]) -> None:
    console = err_console()
    for d in diags:
        style = "red" if d.severity == "error" else "yellow"
        console.print(f"[{style}]{d.severity}[/]", end=" ")
        console.print(
            d.render().replace(f": {d.severity}: ", ": ", 1), markup=False, highlight=False
        )


def _compiled_text(compiled: CompiledComposition) -> None:
    from ..techniques.render import render_tree

    c = out_console()
    comp = compiled.composition
    c.print(f"{comp.id} — stratum {compiled.stratum}", markup=False)
    if comp.description:
        c.print(comp.description, markup=False)
    c.print(render_tree(comp.root), markup=False)
    p = compiled.policy
    limit = "no limit" if p.max_duration_ms is None else f"{p.max_duration_ms // 1000} s"
    tokens = "no limit" if p.max_tokens is None else f"{p.max_tokens} tokens"
    approval = "needs human approval" if p.human_approval_required else "may run autonomously"
    c.print(f"policy: {limit}, {tokens}, {approval}", markup=False)
    for node, stratum, why in compiled.stratum_reasons:
        c.print(f"stratum: {node} -> {stratum} ({why})", markup=False)
    for d in compiled.decisions:
        verdict = "undecided" if d.value is None else ("true" if d.value else "false")
        c.print(f"decision [{d.source}] {d.predicate} = {verdict}: {d.effect}", markup=False)


def _resolve(lib: Librarian | None, target: str, name: str | None) -> Program:
    """A file path, a preset, a composition or a pattern id, as a program."""
    from ..api import load_program
    from ..techniques.lcl import compose
    from ..techniques.registry import default_library

    path = Path(target)
    if path.suffix in (".toml", ".json") or path.is_file():
        if not path.is_file():
            from ..errors import NotFound

            raise NotFound(f"no file {target}", hint="Check the path.")
        return load_program(path, name=name)
    if lib is not None:
        entries = {e.name: e for e in lib.presets().entries()}
        if target in entries:
            return entries[target].program
    library = default_library()
    if target in library.compositions or target in library.patterns:
        return compose(target).use(target).done()
    from ..errors import NotFound
    from ..techniques.diagnostics import closest

    pool = [
        *library.compositions,
        *library.patterns,
        *(e.name for e in (lib.presets().entries() if lib is not None else ())),
    ]
    near = closest(target, pool)
    hint = f"Did you mean {' or '.join(near)}? " if near else ""
    raise NotFound(
        f"{target!r} is not a file, a preset, a composition or a pattern",
        hint=f"{hint}`librarian presets list` and `librarian techniques list --kind compositions`.",
    )


def register(app: typer.Typer) -> None:
    """Register ``lcl`` and ``presets`` on ``app``."""
    lcl = typer.Typer(
        name="lcl",
        help="Check and compile LCL programs (the Librarian Configuration Language).",
        no_args_is_help=True,
    )
    app.add_typer(lcl, name="lcl")

    @lcl.command("check")
    def check_cmd(
        file: Path = typer.Argument(..., help="A .toml program file or the seed's .json presets."),
        *,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Check every program in FILE; list every error with file:line:column."""
        as_json = json_mode(as_json, fmt)
        from ..techniques.lcl import check, programs_from_text

        if not file.is_file():
            from ..errors import NotFound

            raise NotFound(f"no file {file}", hint="Check the path.")
        programs, diags = programs_from_text(read_input(file, "program file"), str(file))
        all_diags = list(diags)
        results = []
        for program in programs:
            found = check(program)
            all_diags += found
            ok = not any(d.severity == "error" for d in found)
            results.append({"name": program.name, "ok": ok})
        errors = [d for d in all_diags if d.severity == "error"]
        if as_json:
            print_json(
                {
                    "ok": not errors,
                    "file": str(file),
                    "programs": results,
                    "diagnostics": [d.to_dict() for d in all_diags],
                }
            )
        else:
            _print_diagnostics(all_diags)
            for r in results:
                out_console().print(f"{r['name']}: {'ok' if r['ok'] else 'errors'}", markup=False)
            if not programs and not errors:
                out_console().print("no programs found", markup=False)
        if errors:
            raise typer.Exit(2)

    @lcl.command("compile")
    def compile_cmd(
        target: str = typer.Argument(
            ..., help="A program file, a preset, a composition or a pattern."
        ),
        *,
        name: str | None = typer.Option(
            None, "--name", help="Which program of a file with several."
        ),
        facts: bool = typer.Option(
            False, "--facts", help="Decide conditionals on this repository's facts."
        ),
        facts_file: Path | None = typer.Option(
            None, "--facts-file", help="Decide conditionals on facts from a JSON file."
        ),
        task: str = TASK_OPTION,
        base: str | None = BASE_OPTION,
        diff: Path | None = DIFF_OPTION,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Compile to a composition tree with its stratum and execution policy."""
        as_json = json_mode(as_json, fmt)
        from ..techniques.facts import facts_from_mapping

        root = resolve_repo(repo)
        lib = _librarian(root)
        program = _resolve(lib, target, name)
        env: Any = None
        if facts_file is not None:
            try:
                raw_facts = json.loads(read_input(facts_file, "facts file"))
            except ValueError as exc:
                raise UsageError(
                    f"the facts file {facts_file} is not JSON: {exc}", hint="Pass a JSON object."
                ) from None
            env = facts_from_mapping(raw_facts, source=str(facts_file))
            if task:
                env = env.with_intent(task)
        elif facts:
            env = lib.facts(task, base=base, diff_text=_diff_text(diff))
        compiled = program.compile(facts=env)
        if as_json:
            print_json({"ok": True, **compiled.to_dict()})
            return
        _compiled_text(compiled)
        _print_diagnostics(compiled.warnings)

    @lcl.command("facts")
    def facts_cmd(
        *,
        task: str = TASK_OPTION,
        base: str | None = BASE_OPTION,
        diff: Path | None = DIFF_OPTION,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Show the codebase, change and intent facts conditions are decided on."""
        as_json = json_mode(as_json, fmt)
        got = _librarian(repo).facts(task, base=base, diff_text=_diff_text(diff))
        if as_json:
            print_json({"ok": True, **got.to_dict()})
            return
        c = out_console()
        for group, values in got.env().items():
            for key, value in values.items():
                shown = json.dumps(value, ensure_ascii=False)
                c.print(f"{group}.{key} = {shown}", markup=False)
                for path in got.evidence.get(f"{group}.{key}", ()):
                    c.print(f"    {path}", markup=False)
        for key, paths in sorted(got.evidence.items()):
            if key.startswith("codebase.frameworks."):
                c.print(f"{key}: {', '.join(paths)}", markup=False)

    presets = typer.Typer(
        name="presets",
        help="Named LCL programs: built in, in librarian.toml, or saved in .librarian/presets/.",
        no_args_is_help=True,
    )
    app.add_typer(presets, name="presets")

    @presets.command("list")
    def presets_list(
        *, repo: Path = REPO_OPTION, as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION
    ) -> None:
        """List the presets this workspace sees (workspace, then config, then built-in)."""
        as_json = json_mode(as_json, fmt)
        entries = _librarian(repo).presets().entries()
        if as_json:
            print_json({"ok": True, "presets": [e.to_dict() for e in entries]})
            return
        c = out_console()
        for e in entries:
            hides = f" (hides {', '.join(e.shadows)})" if e.shadows else ""
            c.print(f"{e.name:<36} {e.kind:<9} {e.description}{hides}", markup=False)

    @presets.command("show")
    def presets_show(
        name: str = typer.Argument(..., help="The preset name."),
        *,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Show a preset: where it comes from and what it compiles to."""
        as_json = json_mode(as_json, fmt)
        entry = _librarian(repo).presets().get(name)
        compiled = entry.program.compile()
        if as_json:
            print_json({"ok": True, "preset": entry.to_dict(), "compiled": compiled.to_dict()})
            return
        out_console().print(f"{entry.name} ({entry.kind}, {entry.source})", markup=False)
        _compiled_text(compiled)

    @presets.command("save")
    def presets_save(
        name: str = typer.Argument(..., help="Name to save the preset under."),
        file: Path = typer.Argument(..., help="The program file (.toml, or the seed's .json)."),
        *,
        program: str | None = typer.Option(
            None, "--name", help="Which program of a file with several."
        ),
        force: bool = typer.Option(False, "--force", help="Replace a saved preset of that name."),
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Check FILE and save it as .librarian/presets/NAME.toml (canonical TOML)."""
        as_json = json_mode(as_json, fmt)
        lib = _librarian(repo)
        path = lib.presets().save(name, file, force=force, program_name=program)
        rel = path.relative_to(lib.root).as_posix()
        if as_json:
            print_json({"ok": True, "name": name, "path": rel})
            return
        out_console().print(f"saved {name} to {rel}", markup=False)
