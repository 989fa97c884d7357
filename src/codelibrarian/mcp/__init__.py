"""The MCP server: codelibrarian's tools and run artifacts for AI coding agents.

``build_server(repo)`` returns an ``mcp`` SDK server with the tools
``compose_context``, ``query_codebase``, ``build_context_pack``,
``explain_decision`` and ``index_status`` and the run-artifact resources;
``serve(repo, transport="stdio" | "http")`` runs it. The tools are thin shells
over :class:`codelibrarian.api.Librarian`. See ``docs/mcp.md``.
"""

from __future__ import annotations

from .server import LOOPBACK_HOSTS, Transport, build_server, serve

__all__ = ["LOOPBACK_HOSTS", "Transport", "build_server", "serve"]
