"""Context recipes: what a step's own context pack is composed from.

Each primitive declares how the execution engine should build the budgeted context
for one of its steps, in the terms the composer already takes
(``Librarian.compose(task, budget=..., files=..., agent_role=...)``):

* ``lanes`` — the composer lanes (``config.LANES``) the pack draws from; the
  ``policy`` lane (exclusions, constraints, secret redaction) is always included;
* ``query`` — a template for the pack's task text. ``{task}`` is the task being
  worked; ``{intent.*}``, ``{codebase.*}``, ``{change.*}`` are facts;
  ``{steps.<primitive>.output.<field>}`` reads the latest earlier step of that
  primitive, and a path through a list projects every item
  (``{steps.tp_hypothesis.output.hypotheses.statement}``). Missing values render
  as nothing; lists are joined with spaces; ``{{``/``}}`` are literal braces;
* ``files`` — paths (same syntax, without braces) whose values are repository
  paths to pin in the pack, e.g. ``steps.tp_change_impact.output.paths``;
* ``budget`` — the default token budget of the pack;
* ``role`` — the Local Context Pack role (``Planner`` ... ``Supervisor``).

Rendering is pure and deterministic: the same environment gives the same text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..config import LANES
from .diagnostics import Diagnostic, Loc, closest
from .predicates import PType
from .predicates.ast import format_number

__all__ = [
    "MAX_QUERY_CHARS",
    "ContextRecipe",
    "check_recipe_path",
    "parse_template",
    "render_template",
    "resolve",
]

MAX_QUERY_CHARS = 2000
TemplatePart = str | tuple[str, ...]


def parse_template(text: str) -> tuple[tuple[TemplatePart, ...], tuple[tuple[int, str], ...]]:
    """``(parts, problems)``: literal text and path tuples; problems are ``(offset, message)``."""
    parts: list[TemplatePart] = []
    problems: list[tuple[int, str]] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if text.startswith("{{", i) or text.startswith("}}", i):
            buf.append(c)
            i += 2
            continue
        if c == "}":
            problems.append((i, "'}' without '{' (write '}}' for a literal brace)"))
            i += 1
            continue
        if c != "{":
            buf.append(c)
            i += 1
            continue
        end = text.find("}", i)
        if end < 0:
            problems.append((i, "'{' is never closed"))
            break
        body = text[i + 1 : end].strip()
        segs = tuple(body.split("."))
        if not body or not all(s.isidentifier() for s in segs):
            problems.append(
                (i, f"{{{body}}} is not a path such as {{task}} or {{change.files_changed}}")
            )
        else:
            if buf:
                parts.append("".join(buf))
                buf = []
            parts.append(segs)
        i = end + 1
    if buf:
        parts.append("".join(buf))
    return tuple(parts), tuple(problems)


def resolve(env: Mapping[str, Any], path: Sequence[str]) -> list[str]:
    """Text values at ``path``, projecting through lists; missing gives ``[]``."""
    current: list[Any] = [env]
    for seg in path:
        nxt: list[Any] = []
        for value in current:
            if isinstance(value, Mapping) and seg in value:
                nxt.append(value[seg])
        flat: list[Any] = []
        for v in nxt:
            if isinstance(v, list | tuple):
                flat.extend(v)
            else:
                flat.append(v)
        current = flat
    out: list[str] = []
    for v in current:
        if isinstance(v, bool):
            out.append("true" if v else "false")
        elif isinstance(v, int | Fraction):
            out.append(format_number(v))
        elif isinstance(v, float):
            out.append(repr(v))
        elif isinstance(v, str):
            out.append(v)
    return out


def render_template(parts: Sequence[TemplatePart], env: Mapping[str, Any]) -> str:
    chunks: list[str] = []
    for part in parts:
        chunks.append(part if isinstance(part, str) else " ".join(resolve(env, part)))
    text = " ".join("".join(chunks).split())
    return text[:MAX_QUERY_CHARS]


def check_recipe_path(
    path: tuple[str, ...],
    *,
    facts: PType,
    outputs: Mapping[str, PType],
    loc: Loc,
) -> Diagnostic | None:
    """Is ``path`` something a recipe may read? (``task``, a fact, or a known step output.)"""
    dotted = ".".join(path)
    if path == ("task",):
        return None
    if path[0] == "steps":
        if len(path) < 3 or path[2] != "output":
            return Diagnostic(
                "lcl_recipe_path", f"`{dotted}`: write steps.<primitive>.output.<field>", loc
            )
        if path[1] not in outputs:
            return Diagnostic(
                "lcl_primitive_not_found",
                f"`{dotted}` reads an unknown primitive {path[1]!r}",
                loc,
                closest(path[1], outputs),
            )
        t: PType = outputs[path[1]]
        rest = path[3:]
    else:
        t = facts
        rest = path
    for seg in rest:
        while t.kind == "list" and t.elem is not None:
            t = t.elem  # projection through lists
        if t.kind == "any":
            return None
        sub = t.field(seg) if t.kind == "record" else None
        if sub is None:
            return Diagnostic(
                "lcl_recipe_path",
                f"`{dotted}`: no field {seg!r} here",
                loc,
                closest(seg, t.names) if t.kind == "record" else (),
            )
        t = sub
    return None


@dataclass(frozen=True, slots=True)
class ContextRecipe:
    """How a step's context pack is built (see the module docstring)."""

    lanes: tuple[str, ...]
    query: str = "{task}"
    budget: int = 3000
    role: str = "Implementer"
    files: tuple[str, ...] = ()

    @property
    def all_lanes(self) -> tuple[str, ...]:
        """``policy`` plus the named lanes, in the composer's lane order."""
        wanted = {"policy", *self.lanes}
        return tuple(lane for lane in LANES if lane in wanted)

    @property
    def excluded_lanes(self) -> tuple[str, ...]:
        return tuple(lane for lane in LANES if lane not in self.all_lanes)

    def render_query(self, env: Mapping[str, Any]) -> str:
        """The pack's task text for this environment (``task`` + facts + ``steps``)."""
        parts, _ = parse_template(self.query)
        return render_template(parts, env)

    def pinned_files(self, env: Mapping[str, Any]) -> tuple[str, ...]:
        """Repository paths to pin, sorted and without repeats."""
        out: set[str] = set()
        for expr in self.files:
            out.update(v for v in resolve(env, tuple(expr.split("."))) if v)
        return tuple(sorted(out))

    def to_dict(self) -> dict[str, Any]:
        return {
            "lanes": list(self.all_lanes),
            "query": self.query,
            "files": list(self.files),
            "budget": self.budget,
            "role": self.role,
        }
