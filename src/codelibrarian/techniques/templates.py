"""Structure templates (seed 004 P4): named shapes that turn a list of primitives into a tree.

=========  ==============================================  ============================
template   shape                                           parameters (defaults)
=========  ==============================================  ============================
pipeline   sequence(p1, ..., pn)                           —
fanout     parallel(p1, ..., pn)                           max_concurrency (all)
gated      sequence(p1, gate[when](sequence(p2...pn)))     when (``steps.<p1>.output.passed
                                                           == true``), on_fail (stop)
iterative  loop[until, converge, max_iterations](          until (none), converge (true),
           sequence(p1, ..., pn))                          max_iterations (10)
quorum     quorum[required | threshold](p1, ..., pn)       strict majority
=========  ==============================================  ============================

The seed's ``gated`` passed the gate primitive as an input with ``failOnGate``
and never said what "passing" meant; here the gate is the first primitive, run
first, and ``when`` reads its output (``passed`` by convention). The seed's
``iterative`` set ``terminationCondition: 'convergence'``, a name its loop never
understood; here that is ``converge = true``, and the 10-iteration bound is the
template's explicit default, not a hidden one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .diagnostics import Diagnostic, Loc, closest
from .operators import BUILTIN_OPERATORS, ParamSpec, build_operator
from .tree import Node, OperatorNode, Step

__all__ = ["TEMPLATES", "TemplateSpec", "apply_template"]


@dataclass(frozen=True, slots=True)
class TemplateSpec:
    id: str
    description: str
    params: tuple[ParamSpec, ...]
    min_primitives: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "description": self.description,
            "params": [p.to_dict() for p in self.params],
            "min_primitives": self.min_primitives,
        }


_P = ParamSpec
TEMPLATES: Mapping[str, TemplateSpec] = {
    t.id: t
    for t in (
        TemplateSpec("pipeline", "Run the primitives in order.", ()),
        TemplateSpec(
            "fanout",
            "Run the primitives concurrently.",
            (_P("max_concurrency", "int", "at most this many at once", None, minimum=1),),
            min_primitives=2,
        ),
        TemplateSpec(
            "gated",
            "Run the first primitive; continue with the rest only when its verdict passes.",
            (
                _P("when", "predicate", "the gate (default: the first step's output.passed)"),
                _P("on_fail", "choice", "stop or skip", "stop", choices=("stop", "skip")),
            ),
            min_primitives=2,
        ),
        TemplateSpec(
            "iterative",
            "Repeat the primitives in order until a condition, convergence or a bound.",
            (
                _P("until", "predicate", "stop when this holds"),
                _P("converge", "bool", "stop when outputs stop changing", True),
                _P("max_iterations", "int", "bound", 10, minimum=1, maximum=1000),
            ),
        ),
        TemplateSpec(
            "quorum",
            "Run the primitives as voters; a quorum of agreeing votes wins.",
            (
                _P("required", "int", "agreeing voters needed", None, minimum=1),
                _P("threshold", "fraction", "more than this share must agree"),
                _P("vote_field", "text", "the output field that holds the vote", "conclusion"),
            ),
            min_primitives=2,
        ),
    )
}


def _op(
    operator: str,
    params: Mapping[str, Any],
    children: Sequence[Node],
    loc: Loc,
    locs: Mapping[str, Loc] | None = None,
) -> tuple[OperatorNode, list[Diagnostic]]:
    spec = next(o for o in BUILTIN_OPERATORS if o.id == operator)
    return build_operator(spec, params, children, loc=loc, param_locs=locs)


def apply_template(
    name: str,
    primitives: Sequence[str],
    params: Mapping[str, Any] | None = None,
    *,
    loc: Loc | None = None,
    param_locs: Mapping[str, Loc] | None = None,
) -> tuple[Node | None, list[Diagnostic]]:
    """The tree a template makes of ``primitives`` (or None and the errors)."""
    where = loc or Loc()
    params = dict(params or {})
    spec = TEMPLATES.get(name)
    if spec is None:
        return None, [
            Diagnostic(
                "lcl_template_not_found",
                f"unknown structure template {name!r}; templates: {', '.join(TEMPLATES)}",
                where,
                closest(name, TEMPLATES),
            )
        ]
    diags: list[Diagnostic] = []
    names = [p.name for p in spec.params]
    for key in sorted(params):
        if key not in names:
            diags.append(
                Diagnostic(
                    "lcl_param_invalid",
                    f"template {name} has no parameter {key!r}; "
                    f"parameters: {', '.join(names) or 'none'}",
                    where,
                    closest(key, names),
                )
            )
    if len(primitives) < spec.min_primitives:
        diags.append(
            Diagnostic(
                "lcl_template_arity",
                f"template {name} needs at least {spec.min_primitives} primitives, "
                f"got {len(primitives)}",
                where,
            )
        )
    if diags:
        return None, diags
    steps: list[Node] = [Step(p, loc=where) for p in primitives]
    if name == "pipeline":
        if len(steps) == 1:
            return steps[0], []
        node, d = _op("sequence", {}, steps, where)
    elif name == "fanout":
        node, d = _op("parallel", params, steps, where, param_locs)
    elif name == "gated":
        gate = primitives[0]
        when = params.get("when") or f"steps.{gate}.output.passed == true"
        body: Node = steps[1]
        d0: list[Diagnostic] = []
        if len(steps) > 2:
            body, d0 = _op("sequence", {}, steps[1:], where)
        gate_params = {"when": when, "on_fail": params.get("on_fail", "stop")}
        gated, d1 = _op("gate", gate_params, [body], where, param_locs)
        node, d2 = _op("sequence", {}, [steps[0], gated], where)
        d = d0 + d1 + d2
    elif name == "iterative":
        loop_params = {
            "converge": params.get("converge", True),
            "max_iterations": params.get("max_iterations", 10),
        }
        if params.get("until") is not None:
            loop_params["until"] = params["until"]
        body = steps[0]
        d0 = []
        if len(steps) > 1:
            body, d0 = _op("sequence", {}, steps, where)
        node, d1 = _op("loop", loop_params, [body], where, param_locs)
        d = d0 + d1
    else:
        node, d = _op("quorum", params, steps, where, param_locs)
    return node, d
