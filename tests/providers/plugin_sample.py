"""A third-party provider plugin, as a test would ship it (loaded via entry points)."""

from __future__ import annotations

from codelibrarian.providers import FakeProvider

#: an object entry point
probe = FakeProvider(id="acme", name="Acme LLM", priority=25, models=("acme-1",))


class AcmeClassProbe(FakeProvider):
    """A class entry point: the loader instantiates it."""

    def __init__(self) -> None:
        super().__init__(id="acme-class", priority=26)


def make_probe() -> FakeProvider:
    """A factory entry point: the loader calls it."""
    return FakeProvider(id="acme-factory", priority=27)


not_a_probe = object()
