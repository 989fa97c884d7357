from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100
)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=200
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _private_parse_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test gets its own per-user cache folder, so no test sees another's parses
    (and none writes to the real ~/.cache). Subprocesses inherit the variable."""
    folder = tmp_path_factory.mktemp("user-cache")
    old = os.environ.get("LIBRARIAN_CACHE_DIR")
    os.environ["LIBRARIAN_CACHE_DIR"] = str(folder)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("LIBRARIAN_CACHE_DIR", None)
        else:
            os.environ["LIBRARIAN_CACHE_DIR"] = old
