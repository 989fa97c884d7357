from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.forkserver import ForkServer, shared

#: no test starts a resident server unless it asks for one (the CLI's default mode,
#: ``auto``, would start one on the second call in an indexed repository): servers a
#: test starts itself (``serve --daemon``) are still used. Subprocesses inherit it.
os.environ["LIBRARIAN_RESIDENT"] = "manual"
os.environ.pop("LIBRARIAN_RESIDENT_IDLE", None)

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100
)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=200
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session")
def fork_server() -> ForkServer:
    """A parent that has imported the library and forks ``librarian`` processes from
    it (``tests/forkserver.py``): one per xdist worker, started on first use."""
    return shared()


@contextlib.contextmanager
def _cache_folder(folder: Path) -> Iterator[None]:
    old = os.environ.get("LIBRARIAN_CACHE_DIR")
    os.environ["LIBRARIAN_CACHE_DIR"] = str(folder)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("LIBRARIAN_CACHE_DIR", None)
        else:
            os.environ["LIBRARIAN_CACHE_DIR"] = old


@pytest.fixture(scope="session", autouse=True)
def _private_session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Module- and session-scoped fixtures run before the per-test folder below is set:
    they get a folder of this session's, never the real ~/.cache (whose index registry
    other checkouts' test runs share: a sibling index seeded from there can be another
    build's)."""
    with _cache_folder(tmp_path_factory.mktemp("session-cache")):
        yield


@pytest.fixture(autouse=True)
def _private_parse_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test gets its own per-user cache folder, so no test sees another's parses
    (and none writes to the real ~/.cache). Subprocesses inherit the variable."""
    with _cache_folder(tmp_path_factory.mktemp("user-cache")):
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: those declaring a longer timeout, then other slow ones,
    then the rest in collection order. With two workers, a test of a minute or more
    started last keeps one worker busy while the other idles."""

    def key(item: pytest.Item) -> tuple[bool, float]:
        timeout = item.get_closest_marker("timeout")
        declared = float(timeout.args[0]) if timeout is not None and timeout.args else 0.0
        return item.get_closest_marker("slow") is None, -declared

    items.sort(key=key)
