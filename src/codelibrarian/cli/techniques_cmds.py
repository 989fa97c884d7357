"""``librarian techniques list | show`` and ``librarian patterns list | show``.

Both read the installed technique library (built-ins plus plugins registered in
the ``codelibrarian.primitives`` / ``codelibrarian.operators`` entry-point
groups); they need no repository. ``show`` accepts any id of the kind
(primitive, operator, composition, template; pattern) and suggests the closest
ids when it does not know one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from ._common import FORMAT_OPTION, JSON_OPTION, err_console, json_mode, out_console, print_json

if TYPE_CHECKING:
    from ..techniques.registry import Library

KINDS = ("primitives", "operators", "compositions", "templates")


def _library() -> Library:
    from ..techniques.registry import default_library

    return default_library()


def _not_found(kind: str, key: str, pool: list[str]) -> Exception:
    from ..errors import NotFound
    from ..techniques.diagnostics import closest

    near = closest(key, pool)
    hint = f"Did you mean {' or '.join(near)}? " if near else ""
    return NotFound(f"unknown {kind} {key!r}", hint=f"{hint}`librarian {kind}s list` shows them.")


def _summaries(lib: Library, kind: str) -> list[dict[str, Any]]:
    from ..techniques.templates import TEMPLATES

    if kind == "primitives":
        return [
            {"id": p.id, "name": p.name, "executor": p.executor, "category": p.category,
             "origin": p.origin, "description": p.description}
            for p in lib.primitives.values()
        ]  # fmt: skip
    if kind == "operators":
        return [
            {"id": o.id, "params": [p.name for p in o.params], "children": o.children,
             "origin": o.origin, "description": o.description}
            for o in lib.operators.values()
        ]  # fmt: skip
    if kind == "compositions":
        from ..techniques.lcl import compile_composition

        return [
            {"id": c.id, "name": c.name, "stratum": compile_composition(c, library=lib).stratum,
             "primitives": list(c.primitives), **c.metadata.to_dict(), "description": c.description}
            for c in lib.compositions.values()
        ]  # fmt: skip
    return [t.to_dict() for t in TEMPLATES.values()]


def _show_primitive(lib: Library, pid: str) -> None:
    p = lib.primitives[pid]
    c = out_console()
    c.print(f"{p.id} — {p.name} ({p.executor}, {p.category or 'uncategorized'})", markup=False)
    c.print(p.description, markup=False)
    c.print("", markup=False)
    c.print("instructions:", markup=False)
    for line in p.instructions.splitlines():
        c.print(f"  {line}", markup=False)
    caps = p.capabilities
    if caps.required or caps.preferred:
        c.print(
            f"capabilities: required {', '.join(caps.required) or '-'}; "
            f"preferred {', '.join(caps.preferred) or '-'}",
            markup=False,
        )
    r = p.context
    c.print(
        f"context: role {r.role}, budget {r.budget}, lanes {', '.join(r.all_lanes)}",
        markup=False,
    )
    c.print(f"  query: {r.query}", markup=False)
    for f in r.files:
        c.print(f"  pins: {f}", markup=False)
    for label, schema in (("input", p.input_schema), ("output", p.output_schema)):
        required = set(schema.get("required", ()))
        fields = [
            f"{k}{'' if k in required else '?'}: {v.get('type', 'any')}"
            for k, v in schema.get("properties", {}).items()
        ]
        c.print(f"{label}: {', '.join(fields)}", markup=False)
    for cond in p.contract.conditions():
        c.print(f"{cond.phase} {cond.id}: {cond.predicate.text}", markup=False)


def register(app: typer.Typer) -> None:
    """Register ``techniques`` and ``patterns`` on ``app``."""
    tech = typer.Typer(
        name="techniques",
        help="Browse the technique library: primitives, operators, compositions, templates.",
        no_args_is_help=True,
    )
    app.add_typer(tech, name="techniques")

    @tech.command("list")
    def list_cmd(
        *,
        kind: str = typer.Option(
            "primitives", "--kind", "-k", help="primitives, operators, compositions or templates."
        ),
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """List the library's primitives (or operators, compositions, templates)."""
        as_json = json_mode(as_json, fmt)
        from ..errors import UsageError

        if kind not in KINDS:
            raise UsageError(f"unknown kind {kind!r}", hint=f"Use one of: {', '.join(KINDS)}.")
        lib = _library()
        rows = _summaries(lib, kind)
        if as_json:
            print_json({"ok": True, "kind": kind, "items": rows})
            return
        c = out_console()
        for row in rows:
            extra = row.get("executor") or row.get("stratum") or ""
            c.print(f"{row['id']:<28} {extra:<9} {row['description']}", markup=False)
        for e in lib.plugin_errors:
            err_console().print(f"plugin {e.name} ({e.value}) failed: {e.error}", markup=False)

    @tech.command("show")
    def show_cmd(
        item_id: str = typer.Argument(
            ..., metavar="ID", help="A primitive, operator, composition or template id."
        ),
        *,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Show one primitive, operator, composition or template in full."""
        as_json = json_mode(as_json, fmt)
        from ..techniques.lcl import compile_composition
        from ..techniques.render import render_tree
        from ..techniques.templates import TEMPLATES

        lib = _library()
        compiled = None
        if item_id in lib.primitives:
            kind, item = "primitive", lib.primitives[item_id].to_dict()
        elif item_id in lib.operators:
            kind, item = "operator", lib.operators[item_id].to_dict()
        elif item_id in lib.compositions:
            compiled = compile_composition(lib.compositions[item_id], library=lib)
            kind, item = "composition", compiled.to_dict()
        elif item_id in TEMPLATES:
            kind, item = "template", TEMPLATES[item_id].to_dict()
        else:
            pool = [*lib.primitives, *lib.operators, *lib.compositions, *TEMPLATES]
            raise _not_found("technique", item_id, pool)
        if as_json:
            print_json({"ok": True, "kind": kind, "item": item})
            return
        c = out_console()
        if kind == "primitive":
            _show_primitive(lib, item_id)
        elif kind == "composition":
            c.print(f"{item['id']} — {item['name']} (stratum {item['stratum']})", markup=False)
            c.print(item["description"], markup=False)
            assert compiled is not None
            c.print(render_tree(compiled.root), markup=False)
        else:
            c.print(f"{item['id']} — {item['description']}", markup=False)
            for p in item["params"]:
                default = "" if p["default"] is None else f" (default {p['default']})"
                c.print(f"  {p['name']}: {p['kind']}{default} — {p['description']}", markup=False)

    pat = typer.Typer(
        name="patterns",
        help="Browse the pattern catalog: when to use which techniques, and how.",
        no_args_is_help=True,
    )
    app.add_typer(pat, name="patterns")

    @pat.command("list")
    def patterns_list(*, as_json: bool = JSON_OPTION, fmt: str | None = FORMAT_OPTION) -> None:
        """List the patterns with their archetype and core primitives."""
        as_json = json_mode(as_json, fmt)
        lib = _library()
        rows = [
            {"id": p.id, "name": p.name, "archetype": p.archetype, "core_primitives": list(p.core),
             **p.metadata.to_dict(), "description": p.description}
            for p in lib.patterns.values()
        ]  # fmt: skip
        if as_json:
            print_json({"ok": True, "items": rows})
            return
        c = out_console()
        for row in rows:
            c.print(f"{row['id']:<36} {row['archetype']:<15} {row['name']}", markup=False)

    @pat.command("show")
    def patterns_show(
        pattern_id: str = typer.Argument(..., metavar="ID", help="A pattern id."),
        *,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
    ) -> None:
        """Show one pattern: situations, primitives and their conditions, operators, signals."""
        as_json = json_mode(as_json, fmt)
        lib = _library()
        if pattern_id not in lib.patterns:
            raise _not_found("pattern", pattern_id, list(lib.patterns))
        p = lib.patterns[pattern_id]
        if as_json:
            print_json({"ok": True, "item": p.to_dict()})
            return
        c = out_console()
        c.print(f"{p.id} — {p.name} ({p.archetype})", markup=False)
        c.print(p.description, markup=False)
        c.print(f"core: {', '.join(p.core)}  (structure: {p.template})", markup=False)
        for o in p.optional:
            cond = o.condition.text
            c.print(f"optional {o.primitive} when {cond} — {o.rationale}", markup=False)
        for s in p.situations:
            c.print(f"situation: {s.trigger}", markup=False)
            for ex in s.examples:
                c.print(f"  e.g. {ex}", markup=False)
        for r in p.operators:
            c.print(f"operator {r.operator}: {r.purpose} ({r.placement})", markup=False)
        for a in p.anti_patterns:
            c.print(
                f"avoid: {a.description} — {a.why_bad}; instead {a.better_alternative}",
                markup=False,
            )
        c.print(f"success: {'; '.join(p.success_signals)}", markup=False)
        c.print(f"failure: {'; '.join(p.failure_signals)}", markup=False)
        c.print(f"compositions: {', '.join(p.examples)}", markup=False)
