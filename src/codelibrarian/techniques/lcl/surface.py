"""LCL's file surfaces: TOML programs and the seed's JSON presets, read into the one AST.

A program table (TOML, snake_case; the seed's JSON, camelCase, is read too)::

    name = "preset_security_review"          # default: the file stem / table name
    description = "..."
    base = "pattern"                         # pattern | composition | primitives
    base_id = "pattern_change_verification"  # for pattern / composition
    # primitive_ids = ["tp_arch_mapping", "tp_search_history"]   for primitives
    # template = "pipeline"                  # shape of a primitives base
    stratum = "bounded"                      # optional: the most a compile may infer
    actions = ["review"]                     # optional selection metadata
    domains = ["security"]
    scopes = ["Small", "Medium"]

    [overrides]                              # pattern base only
    core_primitives = ["tp_hypothesis", "tp_bisect"]

    [[conditionals]]
    when = "change.touches_auth"
    then = "add"                             # add | remove | replace
    primitive_id = "tp_threat_model"
    position = "start"                       # add: end | start | before:<step> | after:<step>
    # replaces = "tp_x"                      # replace: the step replaced by primitive_id
    [conditionals.else]                      # optional, same keys minus `when`
    then = "add"
    primitive_id = "tp_risk_scan"

    [[operators]]
    type = "retry"
    inputs = ["tp_bisect"]
    parameters = { attempts = 3 }

    [[relationships]]
    source = "tp_min_repro"
    kind = "amplifies"
    target = "tp_bisect"
    weight = 0.7

Order of application (the seed's): base, overrides, conditionals, operators.
A file holds one program (top-level ``base``) or several (``[presets.<name>]``
tables; in JSON, top-level names as in the seed). Every error is positioned.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from ..composition import read_relationship
from ..diagnostics import Diagnostic, LclError, Loc
from ..locate import Positions, locate_json
from ..predicates import PredicateSyntaxError, parse, snake_case
from ..reader import Reader
from ..strata import STRATA
from ..templates import TEMPLATES
from ..vocabulary import ACTIONS, DOMAINS, SCOPES
from .ast import Add, Program, Remove, Replace, WhenEdit
from .builder import ProgramBuilder

__all__ = [
    "SEED_PARAM_ALIASES",
    "canonical_table",
    "programs_from_json",
    "programs_from_toml",
    "read_program",
    "snake_keys",
]

_KEYS = (
    "name", "description", "base", "base_id", "primitive_ids", "template", "template_params",
    "stratum", "actions", "domains", "scopes", "overrides", "conditionals", "operators",
    "relationships",
)  # fmt: skip
_COND_KEYS = ("when", "then", "primitive_id", "replaces", "position", "params", "else")

#: the seed's operator parameter names (read in seed-compatibility mode) -> ours
SEED_PARAM_ALIASES: Mapping[str, str] = {
    "max_retries": "attempts",
    "timeout_ms": "duration_ms",
    "reset_timeout_ms": "reset_after_ms",
    "termination_condition": "converge",
    "fail_on_gate": "on_fail",
}


def _seed_params(params: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        name = SEED_PARAM_ALIASES.get(key, key)
        new = value
        if key == "max_retries" and isinstance(value, int) and not isinstance(value, bool):
            new = value + 1  # the seed counted repeats; attempts counts the first run too
        elif key == "termination_condition":
            new = value == "convergence"
        elif key == "fail_on_gate":
            new = "stop" if value else "skip"
        out[name] = new
    return out


def _edit(r: Reader, then: str, *, compat: bool) -> Add | Remove | Replace | None:
    pid = r.text("primitive_id", required=True)
    if not pid:
        return None
    if then == "add":
        params = r.table("params")
        return Add(
            pid,
            r.text("position", default="end"),
            dict(params.data) if params else {},
            loc=r.loc("primitive_id"),
        )
    if then == "remove":
        return Remove(pid, loc=r.loc("primitive_id"))
    old = r.text("replaces", required=True)
    return Replace(old, pid, loc=r.loc("primitive_id")) if old else None


def read_program(r: Reader, *, name: str, compat: bool = False) -> Program | None:
    """One program table through the builder (errors go to ``r.diags``; None without a base)."""
    r.only(_KEYS, what="in an LCL program")
    b = ProgramBuilder(
        r.text("name", default=name),
        description=r.text("description"),
        source=r.source,
        loc=r.loc(),
    )
    base = r.choice("base", ("pattern", "composition", "primitives"), required=True)
    if base in ("pattern", "composition"):
        bid = r.text("base_id", required=True)
        if bid:
            b.use(bid, kind=base, loc=r.loc("base_id"))
        for key in ("primitive_ids", "template", "template_params"):
            if r.has(key):
                r.error(
                    "lcl_conflict",
                    f"{key!r} belongs to a primitives base (use [overrides] for a pattern)",
                    key,
                )
    elif base == "primitives":
        ids = r.strs("primitive_ids", required=True)
        template = r.choice("template", tuple(TEMPLATES), default="pipeline") or "pipeline"
        tp = r.table("template_params")
        b.primitives(
            *ids,
            template=template,
            loc=r.loc("primitive_ids"),
            id_locs=[r.loc("primitive_ids", i) for i in range(len(ids))],
            **(dict(tp.data) if tp else {}),
        )
        if r.has("base_id"):
            r.error("lcl_conflict", "a primitives base lists primitive_ids, not base_id", "base_id")
    o = r.table("overrides")
    if o is not None:
        o.only(
            ("core_primitives", "optional_primitives", "template", "template_params"),
            what="in [overrides]",
        )
        tp = o.table("template_params")
        b.override(
            core_primitives=o.strs("core_primitives") if o.has("core_primitives") else None,
            optional_primitives=o.strs("optional_primitives")
            if o.has("optional_primitives")
            else None,
            template=o.choice("template", tuple(TEMPLATES)) or None,
            template_params=dict(tp.data) if tp else None,
            loc=o.loc(),
            locs={
                **{k: o.loc(k) for k in o.data},
                **{
                    f"{k}[{i}]": o.loc(k, i)
                    for k in ("core_primitives", "optional_primitives")
                    for i in range(len(o.data.get(k) or ()))
                },
            },
        )
    for c in r.tables("conditionals"):
        c.only(_COND_KEYS, what="in a conditional")
        text = c.text("when", required=True)
        then = c.choice("then", ("add", "remove", "replace"), required=True)
        if not text or not then:
            continue
        try:
            pred = parse(text, where=c.loc("when"), compat=compat)
        except PredicateSyntaxError as exc:
            r.diags.extend(exc.diagnostics)
            continue
        edit = _edit(c, then, compat=compat)
        if edit is None:
            continue
        otherwise = []
        e = c.table("else")
        if e is not None:
            e.only(
                tuple(k for k in _COND_KEYS if k not in ("when", "else")), what="in an else branch"
            )
            ethen = e.choice("then", ("add", "remove", "replace"), required=True)
            got = _edit(e, ethen, compat=compat) if ethen else None
            if got is not None:
                otherwise.append(got)
        b.edit(WhenEdit(pred, (edit,), tuple(otherwise), loc=c.loc("when")))
    for op in r.tables("operators"):
        op.only(("type", "inputs", "parameters", "outputs"), what="in an operator")
        if op.has("outputs"):
            op.error(
                "lcl_outputs_unused",
                "`outputs` is not used: an operator's result is its children's outputs "
                "(fallback alternatives are its inputs, in order)",
                "outputs",
            )
        kind = op.text("type", required=True)
        inputs = op.strs("inputs", required=True)
        ptable = op.table("parameters")
        params = dict(ptable.data) if ptable else {}
        if compat:
            params = _seed_params(params)
        if kind:
            b.wrap(
                kind,
                inputs,
                loc=op.loc("type"),
                param_locs={k: op.loc("parameters", k) for k in params},
                **params,
            )
    for t in r.tables("relationships"):
        rel = read_relationship(t, _Anything())
        if rel is not None:
            b.relate(
                rel.source,
                rel.kind,
                rel.target,
                rationale=rel.rationale,
                weight=str(Decimal(rel.weight) / 1000),
                loc=rel.loc,
            )
    b.tag(
        actions=r.choices("actions", ACTIONS),
        domains=r.choices("domains", DOMAINS),
        scopes=r.choices("scopes", SCOPES),
    )
    stratum = r.choice("stratum", STRATA)
    if stratum:
        b.require_stratum(stratum)
    # a program with reading errors is still returned (its broken parts left out), so a
    # check can go on to report what compiling it finds; loaders refuse it
    try:
        return b.done()
    except LclError as exc:
        r.diags.extend(exc.diagnostics)
        return None


class _Anything(Collection[str]):
    """Primitive existence is checked at compile time (with suggestions), not while reading."""

    def __contains__(self, _item: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def programs_from_toml(text: str, source: str) -> tuple[list[Program], list[Diagnostic]]:
    """Every program in a TOML document (one, or ``[presets.<name>]`` tables)."""
    from ..data import read_toml

    data, positions, diags = read_toml(text, source)
    if data is None:
        return [], diags
    return _programs(data, positions, source, diags, compat=False)


def snake_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {snake_case(str(k)): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


def _snake_positions(positions: Positions) -> Positions:
    offsets = {
        tuple(snake_case(p) if isinstance(p, str) else p for p in key): off
        for key, off in positions._offsets.items()
    }
    return Positions(positions.source, positions.text, offsets)


def programs_from_json(text: str, source: str) -> tuple[list[Program], list[Diagnostic]]:
    """The seed's JSON preset form (camelCase keys, ``===``, ``change.touchesAuth``)."""
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [
            Diagnostic(
                "lcl_json_syntax", f"not valid JSON: {exc.msg}", Loc(source, exc.lineno, exc.colno)
            )
        ]
    if not isinstance(data, Mapping):
        return [], [
            Diagnostic("lcl_wrong_type", "a preset file must hold an object", Loc(source, 1, 1))
        ]
    positions = _snake_positions(locate_json(text, source))
    data = snake_keys(data)
    if "base" not in data and "presets" not in data:
        data = {"presets": data}
        positions = Positions(
            source, text, {("presets", *k): v for k, v in positions._offsets.items()}
        )
    return _programs(data, positions, source, [], compat=True)


def _programs(
    data: Mapping[str, Any],
    positions: Positions,
    source: str,
    diags: list[Diagnostic],
    *,
    compat: bool,
) -> tuple[list[Program], list[Diagnostic]]:
    stem = PurePath(source).stem
    root = Reader(data, positions=positions, diags=diags, source=source)
    out: list[Program] = []
    if "base" in data:
        got = read_program(root, name=stem, compat=compat)
        if got is not None:
            out.append(got)
        return out, diags
    table = root.table("presets")
    if table is None:
        root.error(
            "lcl_missing_key",
            "no program here: a program has `base = ...`; several go in [presets.<name>] tables",
        )
        return out, diags
    for key in sorted(table.data):
        sub = table.table(key)
        if sub is None:
            continue
        got = read_program(sub, name=key, compat=compat)
        if got is not None:
            out.append(got)
    return out, diags


def canonical_table(data: Mapping[str, Any], *, compat: bool) -> dict[str, Any]:
    """A program table in canonical form, keys in documented order (for ``presets save``).

    Seed-compatibility input (the JSON form) comes out in the TOML form: canonical
    predicate text and our operator parameter names.
    """
    out: dict[str, Any] = {}
    for key in _KEYS:
        if key not in data:
            continue
        value = data[key]
        if key == "conditionals" and isinstance(value, list):
            value = [
                {**c, "when": parse(c["when"], compat=compat).text}
                if isinstance(c, Mapping) and isinstance(c.get("when"), str)
                else c
                for c in value
            ]
        elif key == "operators" and isinstance(value, list) and compat:
            value = [
                {**o, "parameters": _seed_params(o.get("parameters") or {})}
                if isinstance(o, Mapping)
                else o
                for o in value
            ]
        out[key] = value
    return out
