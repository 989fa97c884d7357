"""Keep the test suite away from real, paid providers.

Under pytest (``PYTEST_CURRENT_TEST`` is set in the process environment), and
unless ``LIBRARIAN_ALLOW_REAL_PROVIDERS=1``:

* provider executables run only from inside the system temporary directory
  (where tests put their fake ``claude`` and ``codex`` scripts), never from
  ``/usr/local/bin`` or ``~/.local/bin``;
* HTTP probes and clients talk only to loopback addresses.

Outside a test run nothing is blocked. Tests leave the switch unset, so a test
that forgets to isolate ``PATH`` fails with a ``blocked`` status instead of
quietly spending a developer's quota.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["ALLOW_ENV", "executable_allowed", "under_test", "url_allowed"]

ALLOW_ENV = "LIBRARIAN_ALLOW_REAL_PROVIDERS"


def under_test(env: Mapping[str, str] | None = None) -> bool:
    """True when running inside pytest and real providers were not allowed."""
    source = os.environ if env is None else env
    if source.get(ALLOW_ENV) == "1" or os.environ.get(ALLOW_ENV) == "1":
        return False
    return "PYTEST_CURRENT_TEST" in os.environ or "PYTEST_CURRENT_TEST" in source


def executable_allowed(path: str, env: Mapping[str, str] | None = None) -> bool:
    """May this provider executable run? Always outside tests; temp dir only inside."""
    if not under_test(env):
        return True
    tmp = Path(tempfile.gettempdir()).resolve()
    return Path(path).resolve().is_relative_to(tmp)


def url_allowed(url: str, env: Mapping[str, str] | None = None) -> bool:
    """May we send a request to ``url``? Always outside tests; loopback only inside."""
    if not under_test(env):
        return True
    host = (urlsplit(url).hostname or "").strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
