"""LM Studio probe (seed P0 §E.4, priority 35): ``GET /v1/models`` at ``LMSTUDIO_HOST``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..types import ProbeContext, ProbeResult, ProviderDescriptor
from . import _common

if TYPE_CHECKING:
    from ..clients.base import ClientOptions, LlmClient

__all__ = ["DESCRIPTOR", "LmStudioProbe", "lmstudio_base_url", "probe"]

START = "start LM Studio's local server (`lms server start`) or set LMSTUDIO_HOST"

DESCRIPTOR = ProviderDescriptor(
    id="lmstudio",
    name="LM Studio (local)",
    auth_method="local",
    # A placeholder (as in the seed): discovery picks the first loaded model instead.
    default_model="local-model",
    priority=35,
    # The seed says False, but LM Studio serves /v1/embeddings for embedding models.
    supports_embeddings=True,
    supports_chat=True,
    env_vars=("LMSTUDIO_HOST",),
    remedy=START,
)


def lmstudio_base_url(env: Mapping[str, str]) -> str:
    """``LMSTUDIO_HOST`` (default ``http://localhost:1234``); a bare host gets ``http://``."""
    raw = env.get("LMSTUDIO_HOST", "").strip().strip("\"'") or "http://localhost:1234"
    if "://" not in raw:
        raw = f"http://{raw}"
    return raw.rstrip("/")


class LmStudioProbe:
    """Probe and client factory for LM Studio's OpenAI-compatible server."""

    @property
    def descriptor(self) -> ProviderDescriptor:
        return DESCRIPTOR

    def probe(self, ctx: ProbeContext) -> ProbeResult:
        base = lmstudio_base_url(ctx.env)
        meta = {"base_url": base}
        listing = _common.get_json(base, "/v1/models", ctx)
        failed = _common.unreachable(
            listing, base, "/v1/models", meta, start=START, restart="restart LM Studio's server"
        )
        if failed is not None:
            return failed
        models = _common.model_list(listing, "data", "id")
        if models is None:
            return ProbeResult(
                False,
                False,
                "error",
                f"{base}/v1/models: {listing.detail or 'not an OpenAI model list'}",
                "check that LMSTUDIO_HOST points at LM Studio's server",
                metadata=meta,
            )
        if not models:
            return ProbeResult(
                True,
                True,
                "no_models",
                "LM Studio runs but no model is loaded",
                "load a model in LM Studio (`lms load <model>`)",
                metadata=meta,
            )
        return ProbeResult(True, True, models=models, metadata=meta)

    def create_client(self, model: str, options: ClientOptions) -> LlmClient:
        from ..clients.http import LmStudioClient

        return LmStudioClient(model=model, options=options)


probe = LmStudioProbe()
