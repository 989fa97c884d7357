"""Ollama probe (seed P0 §E.3, priority 30).

``GET /api/version`` says whether a server answers; ``GET /api/tags`` lists the
pulled models. ``OLLAMA_HOST`` is read the way Ollama itself reads it (see
:func:`ollama_base_url`), so the probe looks where ``ollama`` would.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..types import ProbeContext, ProbeResult, ProviderDescriptor
from . import _common

if TYPE_CHECKING:
    from ..clients.base import ClientOptions, LlmClient

__all__ = ["DESCRIPTOR", "OllamaProbe", "ollama_base_url", "probe"]

SERVE = 'run "ollama serve" (or set OLLAMA_HOST to where Ollama listens)'

DESCRIPTOR = ProviderDescriptor(
    id="ollama",
    name="Ollama (local)",
    auth_method="local",
    default_model="llama3.2",
    priority=30,
    supports_embeddings=True,
    supports_chat=True,
    env_vars=("OLLAMA_HOST", "OLLAMA_MODEL"),
    remedy=SERVE,
)


def _split_host_port(hostport: str) -> tuple[str, str] | None:
    """Go's ``net.SplitHostPort``: ``host:port`` or ``[v6]:port``; None when no port."""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0 or hostport[end + 1 : end + 2] != ":":
            return None
        return hostport[1:end], hostport[end + 2 :]
    if hostport.count(":") != 1:
        return None
    host, port = hostport.split(":")
    return host, port


def ollama_base_url(env: Mapping[str, str]) -> str:
    """The server URL from ``OLLAMA_HOST``, following Ollama's ``envconfig.Host``.

    Surrounding spaces and quotes are dropped. No scheme means ``http`` with port
    11434; an explicit ``http://`` defaults to port 80 and ``https://`` to 443. An
    empty host means 127.0.0.1; an invalid port falls back to the default.
    """
    raw = env.get("OLLAMA_HOST", "").strip().strip("\"'")
    default_port = "11434"
    scheme, sep, hostport = raw.partition("://")
    if not sep:
        scheme, hostport = "http", raw
    elif scheme == "http":
        default_port = "80"
    elif scheme == "https":
        default_port = "443"
    hostport, _, path = hostport.partition("/")
    split = _split_host_port(hostport)
    if split is None:
        host, port = "127.0.0.1", default_port
        bare = hostport.strip("[]")
        try:
            host = str(ipaddress.ip_address(bare))
        except ValueError:
            if hostport:
                host = hostport
    else:
        host, port = split
        host = host or ""
    if not port.isdigit() or int(port) > 65535:
        port = default_port
    shown = f"[{host}]" if ":" in host else host
    suffix = f"/{path}" if path else ""
    return f"{scheme}://{shown}:{port}{suffix}"


class OllamaProbe:
    """Probe and client factory for an Ollama server."""

    @property
    def descriptor(self) -> ProviderDescriptor:
        return DESCRIPTOR

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        base = ollama_base_url(ctx.env)
        meta = {"base_url": base}
        version = _common.get_json(base, "/api/version", ctx)
        failed = _common.unreachable(
            version,
            base,
            "/api/version",
            meta,
            start=SERVE,
            restart="check that Ollama is healthy (restart `ollama serve`)",
        )
        if failed is not None:
            return failed
        if version.kind != "ok":
            return ProbeResult(
                False,
                False,
                "error",
                f"{base}/api/version: {version.detail}",
                "check that OLLAMA_HOST points at an Ollama server",
                metadata=meta,
            )
        version_text = _common.str_field(version.data, "version")
        if version_text is None:
            return ProbeResult(
                False,
                False,
                "error",
                f"{base}/api/version answered without a version",
                "check that OLLAMA_HOST points at an Ollama server",
                metadata=meta,
            )
        tags = _common.get_json(base, "/api/tags", ctx)
        models = _common.model_list(tags, "models", "name", "model")
        if models is None:
            # The server runs but its model list is unreadable: usable, models unknown.
            return ProbeResult(
                True,
                True,
                "ok",
                None,
                None,
                version=version_text,
                metadata={**meta, "models_error": tags.detail or "malformed /api/tags"},
                models_source="none",
            )
        if not models:
            return ProbeResult(
                True,
                True,
                "no_models",
                "Ollama runs but has no models",
                f"ollama pull {DESCRIPTOR.default_model}",
                version=version_text,
                metadata=meta,
            )
        return ProbeResult(True, True, models=models, version=version_text, metadata=meta)

    def create_client(self, model: str, options: ClientOptions) -> LlmClient:
        from ..clients.http import OllamaClient

        return OllamaClient(model=model, options=options)


probe = OllamaProbe()
