"""``librarian serve``: run the MCP server for one repository.

stdio by default (the client starts ``librarian serve`` and talks over its
stdin/stdout); ``--transport http`` serves streamable HTTP at
``http://HOST:PORT/mcp`` on a loopback address. stdout carries protocol
messages only; logs (tool names, codes, counts — no paths or content) go to
stderr. See ``docs/mcp.md`` for client registration.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import UsageError
from ._common import REPO_OPTION, resolve_repo

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Register ``librarian serve`` on ``app``."""

    @app.command("serve")
    def serve_cmd(
        *,
        transport: str = typer.Option(
            "stdio", "--transport", "-t", help="stdio (default) or http (streamable HTTP)."
        ),
        host: str = typer.Option(
            "127.0.0.1", "--host", help="HTTP: loopback address to listen on."
        ),
        port: int = typer.Option(8765, "--port", "-p", help="HTTP: port to listen on."),
        repo: Path = REPO_OPTION,
    ) -> None:
        """Serve the MCP tools and run resources for the repository (see docs/mcp.md)."""
        from ..mcp.server import serve

        if transport not in ("stdio", "http"):
            raise UsageError(
                f"unknown transport {transport!r}", hint="Use --transport stdio or http."
            )
        serve(
            resolve_repo(repo),
            transport="http" if transport == "http" else "stdio",
            host=host,
            port=port,
        )
