"""The twelve operators, declared: parameters, defaults, arity and stratum effect.

Operators are *declared* here and *run* by the execution engine. Each
:class:`OperatorSpec` lists its parameters (:class:`ParamSpec`: kind, default,
bounds, choices), how many children it takes, what its children mean, and how
it affects the composition's stratum. :func:`validate_params` checks a raw
parameter table and returns the values with defaults applied.

Seed mismatches resolved (docs/lcl.md lists them with their tests):

* quorum: the seed's interpreter reads ``required`` (a count, default
  ``ceil(n/2)+1`` — unanimity for three voters) while its template writes
  ``threshold`` (a fraction). Here either may be given, not both; ``threshold``
  ``t`` means "more than ``t`` of the voters", so ``required = floor(t*n) + 1``;
  with neither, a strict majority ``n//2 + 1``. The compiled node always carries
  the resolved ``required``.
* loop: the seed's ``terminationCondition: 'convergence'`` is a name its
  interpreter does not know (the loop then runs to its hidden limit of 100).
  Here ``until`` is a predicate, ``converge = true`` stops when an iteration's
  outputs equal the previous one's, and there is no hidden limit: a loop
  without ``max_iterations`` is unbounded (the ``productive`` stratum).
* retry: ``attempts`` counts every run including the first (the seed's
  ``maxRetries`` counted only repeats); jitter is seeded by the engine from the
  run id and attempt, never from an unseeded random source.
* conditional: a predicate and explicit then/else children, not
  ``"expr => target"`` strings split on ``=>``.
* gate: a predicate over earlier outputs and ``on_fail`` (``stop``/``skip``)
  instead of a gate primitive passed as the first input with ``failOnGate``.
* circuit_breaker: ``key`` names the breaker whose state the engine persists
  (the seed kept one process-global static map and read the wall clock).
* parallel: outputs stay keyed by step id (the seed merged them into one
  object, so two branches writing the same field overwrote each other).
* ``outputs`` on an operator is not used (an operator's result is its
  children's outputs; fallback alternatives are its children, in order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .diagnostics import Diagnostic, Loc, closest
from .predicates import Predicate, PredicateSyntaxError, parse
from .tree import Node, OperatorNode, freeze

__all__ = [
    "BUILTIN_OPERATORS",
    "OperatorSpec",
    "ParamSpec",
    "StratumRule",
    "build_operator",
    "builtin_operators",
    "quorum_required",
    "validate_params",
]

ParamKind = Literal["int", "bool", "choice", "text", "predicate", "fraction"]
#: how an operator affects the stratum of what it wraps (see strata.py)
StratumRule = Literal["max", "loop", "cap", "unrestricted"]


@dataclass(frozen=True, slots=True)
class ParamSpec:
    name: str
    kind: ParamKind
    description: str
    default: Any = None
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "default": self.default,
            "required": self.required,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "choices": list(self.choices),
        }


@dataclass(frozen=True, slots=True)
class OperatorSpec:
    id: str
    description: str
    params: tuple[ParamSpec, ...] = ()
    min_children: int = 1
    max_children: int | None = None
    #: what the children are, in order ("then, else"; "primary, then alternatives")
    children: str = "steps, in order"
    stratum: StratumRule = "max"
    origin: str = "builtin"

    def param(self, name: str) -> ParamSpec | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "description": self.description,
            "params": [p.to_dict() for p in self.params],
            "min_children": self.min_children,
            "max_children": self.max_children,
            "children": self.children,
            "stratum": self.stratum,
            "origin": self.origin,
        }


_P = ParamSpec
_VOTE = _P("vote_field", "text", "the output field whose value is the vote", "conclusion")

BUILTIN_OPERATORS: tuple[OperatorSpec, ...] = (
    OperatorSpec("sequence", "Run the children one after another; stop at the first failure.",
                 min_children=1),
    OperatorSpec(
        "parallel", "Run the children concurrently; outputs stay keyed by step id.",
        (_P("max_concurrency", "int", "at most this many at once (none: all)", None, minimum=1),
         _P("fail_fast", "bool", "cancel the others when one fails", False)),
        min_children=2, children="independent branches"),
    OperatorSpec(
        "conditional", "Run the first child when `when` holds, else the second (if any).",
        (_P("when", "predicate", "the condition, over facts and earlier outputs", required=True),),
        min_children=1, max_children=2, children="then, else (optional)"),
    OperatorSpec(
        "loop", "Repeat the body until `until` holds, outputs converge, or max_iterations.",
        (_P("until", "predicate", "stop when this holds after an iteration"),
         _P("converge", "bool", "stop when an iteration's outputs equal the previous one's", False),
         _P("max_iterations", "int", "hard bound (none: unbounded, stratum productive)", None,
            minimum=1, maximum=1000)),
        min_children=1, max_children=1, children="the body", stratum="loop"),
    OperatorSpec(
        "gate", "Continue into the body only when `when` holds.",
        (_P("when", "predicate", "the gate condition, over facts and earlier outputs",
            required=True),
         _P("on_fail", "choice", "stop the run, or skip the body", "stop",
            choices=("stop", "skip"))),
        min_children=1, max_children=1, children="the guarded body"),
    OperatorSpec(
        "retry", "Run the body again when it fails, with backoff between attempts.",
        (_P("attempts", "int", "runs in all, the first included", 3, minimum=1, maximum=20),
         _P("backoff", "choice", "delay growth between attempts", "exponential",
            choices=("constant", "linear", "exponential", "exponential_jitter")),
         _P("base_delay_ms", "int", "first delay", 1000, minimum=0),
         _P("max_delay_ms", "int", "ceiling for any delay", 60000, minimum=0)),
        min_children=1, max_children=1, children="the body"),
    OperatorSpec(
        "circuit_breaker", "Skip the body while it has failed `threshold` times in a row.",
        (_P("threshold", "int", "consecutive failures that open the breaker", 3, minimum=1),
         _P("reset_after_ms", "int", "time open before one trial run (half-open)", 60000,
            minimum=1),
         _P("key", "text", "the breaker's persisted identity (default: composition + node)",
            "")),
        min_children=1, max_children=1, children="the protected body"),
    OperatorSpec(
        "fallback", "Run the first child; on failure the next, in order, until one succeeds.",
        min_children=2, children="primary, then alternatives in order"),
    OperatorSpec(
        "quorum", "Run the voters; succeed when `required` of them agree on the vote.",
        (_P("required", "int", "agreeing voters needed (default: strict majority)", None,
            minimum=1),
         _P("threshold", "fraction", "alternatively: more than this share must agree"),
         _VOTE,
         _P("on_no_quorum", "choice", "what to do without a quorum", "escalate",
            choices=("escalate", "fail"))),
        min_children=2, children="voters"),
    OperatorSpec(
        "consensus", "Run the voters; succeed when all agree, else resolve or escalate.",
        (_P("resolution", "choice", "without unanimity", "escalate",
            choices=("escalate", "majority")),
         _VOTE),
        min_children=2, children="voters"),
    OperatorSpec(
        "timebox", "Bound the body's wall-clock time.",
        (_P("duration_ms", "int", "time allowed", 60000, minimum=1),
         _P("on_timeout", "choice", "at the deadline", "checkpoint",
            choices=("checkpoint", "terminate"))),
        min_children=1, max_children=1, children="the body", stratum="cap"),
    OperatorSpec(
        "budget_cap", "Bound the tokens the body may spend (context packs and model calls).",
        (_P("max_tokens", "int", "tokens allowed", 100000, minimum=1),
         _P("on_exceed", "choice", "when the next step would not fit", "terminate",
            choices=("terminate", "checkpoint"))),
        min_children=1, max_children=1, children="the body", stratum="cap"),
)  # fmt: skip


def builtin_operators() -> tuple[OperatorSpec, ...]:
    """The built-in operators (the ``codelibrarian.operators`` entry point ``builtin``)."""
    return BUILTIN_OPERATORS


def quorum_required(n: int, *, required: int | None, threshold_pm: int | None) -> int:
    """Voters that must agree: explicit, from a threshold (more than it), or a strict majority."""
    if required is not None:
        return required
    if threshold_pm is not None:
        return threshold_pm * n // 1000 + 1
    return n // 2 + 1


def _fraction(value: Any) -> int | None:
    from decimal import Decimal, InvalidOperation

    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, ValueError):
        return None
    scaled = d * 1000
    if not (0 <= d < 1) or scaled != scaled.to_integral_value():
        return None
    return int(scaled)


def validate_params(
    spec: OperatorSpec,
    raw: Mapping[str, Any],
    *,
    children: int,
    loc: Loc,
    locs: Mapping[str, Loc] | None = None,
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """``(params with defaults applied, diagnostics)`` for one operator node.

    Predicates become :class:`Predicate` values; ``threshold`` becomes per-mille
    ``threshold_pm``; quorum gets its resolved ``required``.
    """
    diags: list[Diagnostic] = []
    where = dict(locs or {})

    def bad(name: str, message: str, suggestions: tuple[str, ...] = ()) -> None:
        diags.append(Diagnostic("lcl_param_invalid", message, where.get(name, loc), suggestions))

    names = [p.name for p in spec.params]
    for key in sorted(raw):
        if key not in names:
            valid = ", ".join(names) if names else "none"
            bad(
                key,
                f"{spec.id} has no parameter {key!r}; its parameters: {valid}",
                closest(key, names),
            )
    out: dict[str, Any] = {}
    for p in spec.params:
        if p.name not in raw:
            if p.required:
                bad(p.name, f"{spec.id} needs the parameter {p.name!r} ({p.description})")
            out[p.name] = p.default
            continue
        value = raw[p.name]
        if p.kind == "predicate":
            if isinstance(value, Predicate):
                out[p.name] = value
            elif isinstance(value, str):
                try:
                    out[p.name] = parse(value, where=where.get(p.name))
                except PredicateSyntaxError as exc:
                    diags.extend(exc.diagnostics)
                    out[p.name] = None
            else:
                bad(p.name, f"{spec.id}.{p.name} must be a condition written as text")
        elif p.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                bad(p.name, f"{spec.id}.{p.name} must be a whole number, not {value!r}")
            elif (p.minimum is not None and value < p.minimum) or (
                p.maximum is not None and value > p.maximum
            ):
                hi = f" and at most {p.maximum}" if p.maximum is not None else ""
                bad(p.name, f"{spec.id}.{p.name} must be at least {p.minimum}{hi} (got {value})")
            else:
                out[p.name] = value
        elif p.kind == "bool":
            if not isinstance(value, bool):
                bad(p.name, f"{spec.id}.{p.name} must be true or false")
            else:
                out[p.name] = value
        elif p.kind == "choice":
            if value not in p.choices:
                bad(
                    p.name,
                    f"{spec.id}.{p.name} is {value!r}; use one of: {', '.join(p.choices)}",
                    closest(str(value), p.choices),
                )
            else:
                out[p.name] = value
        elif p.kind == "fraction":
            pm = _fraction(value)
            if pm is None:
                bad(
                    p.name,
                    f"{spec.id}.{p.name} must be a share in [0, 1), e.g. 0.5 (got {value!r})",
                )
            else:
                out[p.name] = pm
        elif not isinstance(value, str):
            bad(p.name, f"{spec.id}.{p.name} must be text")
        else:
            out[p.name] = value
    if spec.id == "quorum":
        _quorum(out, raw=raw, children=children, loc=loc, where=where, diags=diags)
    if (
        spec.id == "loop"
        and out.get("until") is None
        and not out.get("converge")
        and out.get("max_iterations") is None
    ):
        diags.append(
            Diagnostic(
                "lcl_loop_unbounded",
                "this loop has no `until`, no `converge` and no `max_iterations`: it never ends "
                "by itself (stratum productive, needs approval)",
                loc,
                severity="warning",
            )
        )
    return out, diags


def _quorum(
    out: dict[str, Any],
    *,
    raw: Mapping[str, Any],
    children: int,
    loc: Loc,
    where: Mapping[str, Loc],
    diags: list[Diagnostic],
) -> None:
    threshold = out.pop("threshold", None)
    if "required" in raw and "threshold" in raw:
        diags.append(
            Diagnostic(
                "lcl_param_invalid",
                "quorum takes `required` (a count) or `threshold` (a share), not both",
                where.get("threshold", loc),
            )
        )
    required = quorum_required(children, required=out.get("required"), threshold_pm=threshold)
    if children and not 1 <= required <= children:
        diags.append(
            Diagnostic(
                "lcl_param_invalid",
                f"quorum needs {required} agreeing voters but has only {children}",
                where.get("required", loc),
            )
        )
    out["required"] = required
    out["threshold_pm"] = threshold


def build_operator(
    spec: OperatorSpec,
    params: Mapping[str, Any],
    children: Sequence[Node],
    *,
    loc: Loc,
    param_locs: Mapping[str, Loc] | None = None,
) -> tuple[OperatorNode, list[Diagnostic]]:
    """An operator node with validated parameters (defaults applied) and checked arity."""
    diags: list[Diagnostic] = []
    n = len(children)
    if n < spec.min_children or (spec.max_children is not None and n > spec.max_children):
        most = "" if spec.max_children is None else f" and at most {spec.max_children}"
        diags.append(
            Diagnostic(
                "lcl_operator_arity",
                f"{spec.id} takes at least {spec.min_children}{most} children ({spec.children}); "
                f"it has {n}",
                loc,
            )
        )
    values, more = validate_params(spec, params, children=n, loc=loc, locs=param_locs)
    node = OperatorNode(
        spec.id, freeze(values), tuple(children), loc=loc, param_locs=dict(param_locs or {})
    )
    return node, diags + more
