"""The technique library: every primitive, operator, pattern and composition, checked.

:func:`load_library` gathers

* primitives from the ``codelibrarian.primitives`` entry-point group and operators
  from ``codelibrarian.operators`` — the built-ins arrive through the same groups
  (entry points named ``builtin``) as any plugin's;
* the packaged patterns, compositions and library-wide relationships.

An entry point may load a :class:`~.primitives.Primitive` (or
:class:`~.operators.OperatorSpec`), a table shaped like a primitive TOML file,
an iterable of those, or a zero-argument callable returning any of them. A
plugin that fails to load or to validate is skipped and recorded in
``plugin_errors`` (a broken plugin must not take the library down); a plugin id
that is already taken is refused. Errors in the *built-in* data raise
:class:`~.diagnostics.LclError`: a release with a broken catalog must not ship.

:func:`default_library` caches the result per process.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from .composition import Composition, Relationship, read_composition, read_relationship
from .diagnostics import Diagnostic, LclError, Loc, closest
from .locate import Positions
from .operators import OperatorSpec
from .patterns import Pattern, read_pattern
from .primitives import ID_PATTERN, Primitive, check_recipe, read_primitive
from .reader import Reader
from .relationships import find_cycle

__all__ = [
    "OPERATOR_GROUP",
    "PRIMITIVE_GROUP",
    "Library",
    "PluginError",
    "default_library",
    "load_library",
]

PRIMITIVE_GROUP = "codelibrarian.primitives"
OPERATOR_GROUP = "codelibrarian.operators"


@dataclass(frozen=True, slots=True)
class PluginError:
    group: str
    name: str
    value: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"group": self.group, "name": self.name, "value": self.value, "error": self.error}


def _lookup(kind: str, code: str, table: Mapping[str, Any], key: str, loc: Loc | None) -> Any:
    if key in table:
        return table[key]
    raise LclError(
        [
            Diagnostic(
                code,
                f"unknown {kind} {key!r}",
                loc or Loc("<lookup>"),
                closest(key, table),
            )
        ]
    )


@dataclass(frozen=True)
class Library:
    """Everything a composition can be built from (read-only after loading)."""

    primitives: Mapping[str, Primitive]
    operators: Mapping[str, OperatorSpec]
    patterns: Mapping[str, Pattern]
    compositions: Mapping[str, Composition]
    relationships: tuple[Relationship, ...] = ()
    plugin_errors: tuple[PluginError, ...] = ()
    warnings: tuple[Diagnostic, ...] = field(default=())

    def primitive(self, pid: str, loc: Loc | None = None) -> Primitive:
        value: Primitive = _lookup(
            "primitive", "lcl_primitive_not_found", self.primitives, pid, loc
        )
        return value

    def operator(self, oid: str, loc: Loc | None = None) -> OperatorSpec:
        value: OperatorSpec = _lookup(
            "operator", "lcl_operator_not_found", self.operators, oid, loc
        )
        return value

    def pattern(self, pid: str, loc: Loc | None = None) -> Pattern:
        value: Pattern = _lookup("pattern", "lcl_pattern_not_found", self.patterns, pid, loc)
        return value

    def composition(self, cid: str, loc: Loc | None = None) -> Composition:
        value: Composition = _lookup(
            "composition", "lcl_composition_not_found", self.compositions, cid, loc
        )
        return value

    @property
    def stratum_rules(self) -> dict[str, str]:
        return {o.id: o.stratum for o in self.operators.values()}

    def self_modifying(self, pid: str) -> bool:
        p = self.primitives.get(pid)
        return bool(p and p.self_modifying)


def _describe(ep: metadata.EntryPoint) -> str:
    return f"{ep.name} = {ep.value}"


def _items(obj: Any) -> list[Any]:
    if callable(obj) and not isinstance(obj, type):
        obj = obj()
    if isinstance(obj, Primitive | OperatorSpec | Mapping) or (
        isinstance(obj, tuple) and len(obj) == 3 and isinstance(obj[2], Positions)
    ):
        return [obj]
    if isinstance(obj, Iterable) and not isinstance(obj, str | bytes):
        out: list[Any] = []
        for item in obj:
            out.extend(_items(item) if not isinstance(item, Primitive | OperatorSpec) else [item])
        return out
    raise TypeError(f"entry point gave {type(obj).__name__}, not primitives or operators")


def _read_primitives(items: list[Any], origin: str, diags: list[Diagnostic]) -> list[Primitive]:
    out: list[Primitive] = []
    for item in items:
        if isinstance(item, Primitive):
            out.append(item)
            continue
        if isinstance(item, tuple):
            source, data, positions = item
        elif isinstance(item, Mapping):
            source, data, positions = origin, item, None
        else:
            raise TypeError(f"not a primitive: {type(item).__name__}")
        got = read_primitive(
            Reader(data, positions=positions, diags=diags, source=source), origin=origin
        )
        if got is not None:
            out.append(got)
    return out


def _entry_points(
    group: str, given: Iterable[metadata.EntryPoint] | None
) -> list[metadata.EntryPoint]:
    eps = list(metadata.entry_points(group=group) if given is None else given)
    # builtin first, then plugins by name: a plugin can never shadow a built-in
    return sorted(eps, key=lambda e: (e.name != "builtin", e.name, e.value))


def _load_group(
    group: str, given: Iterable[metadata.EntryPoint] | None, errors: list[PluginError]
) -> tuple[dict[str, Primitive], dict[str, OperatorSpec]]:
    prims: dict[str, Primitive] = {}
    ops: dict[str, OperatorSpec] = {}
    eps = _entry_points(group, given)
    if not any(e.name == "builtin" for e in eps):
        # running without install metadata (e.g. a bare source tree): load built-ins directly
        module = "codelibrarian.techniques.data"
        attr = "builtin_primitives" if group == PRIMITIVE_GROUP else "builtin_operators"
        eps.insert(0, metadata.EntryPoint("builtin", f"{module}:{attr}", group))
    for ep in eps:
        origin = "builtin" if ep.name == "builtin" else _describe(ep)
        diags: list[Diagnostic] = []
        try:
            items = _items(ep.load())
            if group == PRIMITIVE_GROUP:
                found: list[Any] = _read_primitives(items, origin, diags)
            else:
                found = [i for i in items if isinstance(i, OperatorSpec)]
                if len(found) != len(items):
                    raise TypeError("an operators entry point must give OperatorSpec values")
        except LclError as exc:
            if origin == "builtin":
                raise
            errors.append(PluginError(group, ep.name, ep.value, exc.message))
            continue
        except Exception as exc:
            if origin == "builtin":
                raise
            errors.append(PluginError(group, ep.name, ep.value, f"{type(exc).__name__}: {exc}"))
            continue
        bad = [d for d in diags if d.severity == "error"]
        if bad:
            if origin == "builtin":
                raise LclError(bad)
            errors.append(PluginError(group, ep.name, ep.value, bad[0].render()))
            continue
        for item in found:
            table: dict[str, Any] = prims if group == PRIMITIVE_GROUP else ops
            if not ID_PATTERN.match(item.id):
                errors.append(PluginError(group, ep.name, ep.value, f"invalid id {item.id!r}"))
            elif item.id in table:
                errors.append(
                    PluginError(group, ep.name, ep.value, f"id {item.id!r} is already registered")
                )
            else:
                table[item.id] = item if origin == "builtin" else _with_origin(item, origin)
    return prims, ops


def _with_origin(item: Any, origin: str) -> Any:
    from dataclasses import replace

    return replace(item, origin=origin) if item.origin == "builtin" else item


def load_library(
    *,
    primitive_entry_points: Iterable[metadata.EntryPoint] | None = None,
    operator_entry_points: Iterable[metadata.EntryPoint] | None = None,
) -> Library:
    """Load and check the whole library (see the module docstring)."""
    from .data import data_files

    errors: list[PluginError] = []
    primitives, _ = _load_group(PRIMITIVE_GROUP, primitive_entry_points, errors)
    _, operators = _load_group(OPERATOR_GROUP, operator_entry_points, errors)
    outputs = {pid: p.output_type for pid, p in primitives.items()}
    for pid in sorted(primitives):
        problems = [d for d in check_recipe(primitives[pid], outputs) if d.severity == "error"]
        if problems:
            if primitives[pid].origin == "builtin":
                raise LclError(problems)
            errors.append(
                PluginError(PRIMITIVE_GROUP, pid, primitives[pid].origin, problems[0].render())
            )
            del primitives[pid]
    diags: list[Diagnostic] = []
    relationships: list[Relationship] = []
    for _, data, positions in data_files("relationships"):
        r = Reader(data, positions=positions, diags=diags)
        r.only(("relationships",))
        relationships += [
            x for t in r.tables("relationships") if (x := read_relationship(t, primitives))
        ]
    cycle = find_cycle(relationships)
    if cycle:
        diags.append(
            Diagnostic(
                "lcl_order_cycle",
                "ordering edges form a cycle: " + " -> ".join(cycle),
                Loc("techniques/data/relationships.toml"),
            )
        )
    patterns: dict[str, Pattern] = {}
    for _, data, positions in data_files("patterns"):
        got = read_pattern(
            Reader(data, positions=positions, diags=diags), primitives, sorted(operators)
        )
        if got is not None:
            patterns[got.id] = got
    compositions: dict[str, Composition] = {}
    for _, data, positions in data_files("compositions"):
        comp = read_composition(
            Reader(data, positions=positions, diags=diags), operators, primitives
        )
        if comp is not None:
            compositions[comp.id] = comp
    bad = [d for d in diags if d.severity == "error"]
    if bad:
        raise LclError(bad)
    return Library(
        primitives=dict(sorted(primitives.items())),
        operators=dict(sorted(operators.items())),
        patterns=dict(sorted(patterns.items())),
        compositions=dict(sorted(compositions.items())),
        relationships=tuple(relationships),
        plugin_errors=tuple(errors),
        warnings=tuple(d for d in diags if d.severity == "warning"),
    )


@functools.cache
def default_library() -> Library:
    """The installed library, loaded once per process."""
    return load_library()
