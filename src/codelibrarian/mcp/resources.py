"""Run artifacts as MCP resources.

Templates (the agent fills in the run id and the name):

* ``resources://runs/{id}/context/{agent}.lcp.json`` — the Local Context Pack
  built for one agent of a run (``build_context_pack`` returns this URI);
* ``resources://runs/{id}/handoff/{name}.json`` — a handoff package of a run;
  ``name`` is ``<From>→<To>`` (U+2192), percent-encoded or not.

and one fixed resource, ``resources://runs/index.json``: the runs of this
workspace with the URIs of their packs and handoffs (ids and names only).

Files are found through :meth:`Librarian.resource <codelibrarian.api.Librarian.resource>`,
which checks the run id, refuses ``..`` and any path leaving
``.librarian/runs/``, and raises ``NotFound`` for a file that does not exist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ..errors import UsageError

if TYPE_CHECKING:
    from ..api import Librarian

__all__ = [
    "CONTEXT_TEMPLATE",
    "HANDOFF_TEMPLATE",
    "RUNS_INDEX_URI",
    "artifact_uri",
    "read_artifact",
    "runs_index",
    "runs_index_text",
]

CONTEXT_TEMPLATE = "resources://runs/{id}/context/{agent}.lcp.json"
HANDOFF_TEMPLATE = "resources://runs/{id}/handoff/{name}.json"
RUNS_INDEX_URI = "resources://runs/index.json"

_SUFFIX = {"context": ".lcp.json", "handoff": ".json"}


def artifact_uri(run_id: str, kind: str, name: str) -> str:
    """The resource URI of a run artifact (``kind`` is ``context`` or ``handoff``)."""
    if kind not in _SUFFIX:
        raise UsageError(f"unknown run artifact kind {kind!r}", hint="Use context or handoff.")
    return f"resources://runs/{run_id}/{kind}/{name}{_SUFFIX[kind]}"


def read_artifact(lib: Librarian, run_id: str, kind: str, name: str) -> str:
    """The text (JSON) of one run artifact; ``UsageError`` / ``NotFound`` otherwise."""
    run_id, name = unquote(run_id), unquote(name)
    if "/" in run_id or "/" in name or "\\" in name:
        raise UsageError("a run id or artifact name cannot contain '/'")
    path: Path = lib.resource(artifact_uri(run_id, kind, name))
    return _gated(lib, path.read_text(encoding="utf-8"), kind)


def _gated(lib: Librarian, text: str, kind: str) -> str:
    """The artifact through the secret gate (written gated; checked again on the way out).

    A JSON document is cleaned value by value, so a redaction can never break it.
    """
    if not lib.gate.scan(text):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return lib.gate.clean(text, surface="mcp", kind=kind)
    clean = lib.gate.clean_value(data, surface="mcp", kind=kind)
    return json.dumps(clean, ensure_ascii=False, indent=2) + "\n"


def runs_index(lib: Librarian) -> dict[str, Any]:
    """Every run with the URIs of its packs and handoffs, sorted by id and name."""
    runs = []
    for run in lib.runs():
        runs.append(
            {
                "id": run.run_id,
                "context": [artifact_uri(run.run_id, "context", a) for a in sorted(run.agents)],
                "handoff": [
                    artifact_uri(run.run_id, "handoff", quote(h, safe=""))
                    for h in sorted(run.handoffs)
                ],
            }
        )
    return {"schema": "codelibrarian.runs/1", "runs": runs}


def runs_index_text(lib: Librarian) -> str:
    return json.dumps(runs_index(lib), ensure_ascii=False, indent=2) + "\n"
