"""Budgets: validation, lane order and lane reservations.

``BudgetConfig``/``LaneBudget`` live in ``codelibrarian.config`` (validated with
the seed's rules when built). Here: the lane order a config implies, the digest
that goes into cache keys, and the reservation targets selection must honour.

Seed defect fixed: lane minimums were computed but never reserved, and
``laneRequirements`` were never applied. A lane's reservation target is
``max(lane.min, largest requirement)``, capped at the lane's max (a requirement
cannot raise a maximum; the cap is reported in the explanation).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..config import LANES, BudgetConfig, LaneBudget, validate_budget
from ..errors import ConfigError
from .constraints import ComposerConstraints
from .determinism import digest

__all__ = [
    "BudgetConfig",
    "LaneBudget",
    "budget_digest",
    "budget_from_dict",
    "budget_to_dict",
    "lane_priorities",
    "lane_sequence",
    "reservation_targets",
    "validate",
]


def validate(config: BudgetConfig) -> None:
    """Re-check a config (the seed's ``validateBudgetConfig``), raising ConfigError."""
    try:
        validate_budget(config.total_tokens, dict(config.lanes))
    except ValueError as exc:
        raise ConfigError(str(exc), key="budget") from None
    missing = [lane for lane in LANES if lane not in config.lanes]
    if missing:
        raise ConfigError(f"budget has no entry for lane {missing[0]!r}", key="budget.lanes")


def lane_priorities(config: BudgetConfig) -> dict[str, int]:
    """Lane -> rank in priority order (0 = first); ties in priority break by lane name."""
    return {lane: i for i, lane in enumerate(lane_sequence(config))}


def lane_sequence(config: BudgetConfig) -> tuple[str, ...]:
    return tuple(sorted(LANES, key=lambda lane: (config.lanes[lane].priority, lane)))


def budget_to_dict(config: BudgetConfig) -> dict[str, object]:
    return {
        "total_tokens": config.total_tokens,
        "lanes": {
            lane: {"min": b.min, "max": b.max, "priority": b.priority}
            for lane, b in sorted(config.lanes.items())
        },
    }


def budget_from_dict(data: Mapping[str, object]) -> BudgetConfig:
    lanes_raw = data["lanes"]
    assert isinstance(lanes_raw, Mapping)
    total = data["total_tokens"]
    assert isinstance(total, int)
    return BudgetConfig(
        total_tokens=total,
        lanes={name: LaneBudget(**spec) for name, spec in lanes_raw.items()},
    )


def budget_digest(config: BudgetConfig) -> str:
    return digest(budget_to_dict(config))


def reservation_targets(
    config: BudgetConfig, constraints: ComposerConstraints
) -> dict[str, tuple[int, int]]:
    """Lane -> ``(target tokens, requirement tokens)`` to reserve before global fill."""
    out: dict[str, tuple[int, int]] = {}
    for lane in LANES:
        spec = config.lanes[lane]
        required = constraints.required_tokens(lane)
        out[lane] = (min(max(spec.min, required), spec.max), required)
    return out
