"""The terminal view of a workflow run: its trace as a tree, rendered to a string.

Takes the plain data ``Librarian.run_show`` returns (status and trace tree) and
draws one line per node — an outcome mark, the node, and what happened there
(attempts, timings, tokens, decisions) — with rich, at a fixed width, so the CLI
and the golden tests see the same text.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

__all__ = ["render_run", "render_trace"]

_MARK = {
    "succeeded": "✓",
    "success": "✓",
    "failed": "✗",
    "failure": "✗",
    "violated": "✗",
    "timeout": "⧗",
    "cancelled": "⊘",
    "skipped": "–",
    "running": "…",
    "not_run": "·",
}


def _ms(value: Any) -> str:
    if value is None:
        return "-"
    ms = int(value)
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _label(node: Mapping[str, Any]) -> str:
    status = str(node.get("status", "not_run"))
    mark = _MARK.get(status, "?")
    if node.get("kind") == "step":
        runs = node.get("dispatches", [])
        same = node["id"] == node.get("primitive")
        name = node["id"] if same else f"{node['id']} ({node.get('primitive')})"
        text = f"{mark} {name} [{node.get('role')}, {node.get('executor')}] {status}"
        if runs:
            text += f" · {len(runs)} dispatch{'es' if len(runs) > 1 else ''}"
            text += f" · {_ms(node.get('duration_ms'))} · {node.get('tokens', 0)} tok"
            attempts = [r for r in runs if r.get("status") not in ("success", "running")]
            if attempts:
                text += " · " + ", ".join(f"{r['dispatch']}: {r['status']}" for r in attempts)
        return text
    text = f"{mark} {node['id']} {status}"
    if node.get("reason"):
        text += f" ({node['reason']})"
    if node.get("starts", 0) > 1:
        text += f" · {node['starts']} activations"
    if node.get("duration_ms") is not None:
        text += f" · {_ms(node['duration_ms'])}"
    return text


def render_trace(tree: Mapping[str, Any], *, width: int = 100) -> str:
    """The trace tree as text (one line per node, decisions beneath operators)."""
    from rich.console import Console
    from rich.tree import Tree

    def grow(branch: Tree, node: Mapping[str, Any]) -> None:
        for decision in node.get("decisions", []):
            branch.add(f"↳ {decision}", style="dim")
        for child in node.get("children", []):
            grow(branch.add(_label(child)), child)

    root = Tree(_label(tree))
    grow(root, tree)
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, highlight=False, soft_wrap=False).print(root)
    return buf.getvalue()


def render_run(data: Mapping[str, Any], *, width: int = 100) -> str:
    """Status lines, then the trace tree."""
    s = data["status"]
    head = [
        f"run {s['run_id']} · {s['composition']} · {s['status']}"
        + (f" ({s['reason']})" if s.get("reason") else ""),
        f"stratum {s['stratum']} · {s['mode']}"
        + (f" via {s['provider']}" if s.get("provider") else "")
        + f" · {s['dispatched']} dispatched · {s['results']} results · {s['tokens']} tokens",
    ]
    if s.get("awaiting"):
        a = s["awaiting"]
        head.append(f"awaiting a human: {a['kind']} at {a['node']} ({a['reason']})")
    for p in s.get("pending", []):
        head.append(f"waiting for the {p['role']} agent: {p['dispatch']} ({p['primitive']})")
    head.append(f"next: {s['next']}")
    return "\n".join(head) + "\n\n" + render_trace(data["tree"], width=width)
