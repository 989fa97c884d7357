"""Medians, percentiles, the machine line and Markdown tables for benchmark output."""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Iterable, Sequence

__all__ = ["load_average", "machine", "markdown_table", "median_ms", "p95", "percentile"]


def percentile(values: Sequence[float], q: float) -> float:
    """The value at rank ``round(q * (n - 1))`` of the sorted values (nearest rank, no
    interpolation: with 20 calls, p95 is the 19th)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by :func:`percentile`."""
    return percentile(values, 0.95)


def median_ms(seconds: Iterable[float]) -> float:
    """The median of ``seconds``, in milliseconds."""
    return statistics.median(seconds) * 1000


def load_average() -> float:
    """The one-minute load average (NaN where the system has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def machine() -> str:
    """One line naming the machine, its cores, the OS, Python and the load right now."""
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}, CPython {platform.python_version()}; "
        f"load average {load_average():.1f}"
    )


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[object]], *, right: Sequence[int] = ()
) -> str:
    """A Markdown table; the columns numbered in ``right`` are right-aligned."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" if k in right else "---" for k in range(len(header))) + "|")
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
