"""Shared plumbing for the built-in probes: bounded subprocesses and HTTP GETs."""

from __future__ import annotations

import functools
import json
import shutil
import ssl
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from .. import guard
from ..types import ProbeContext, ProbeResult

__all__ = ["HttpOutcome", "RunOutcome", "get_json", "run_cli", "which"]


@dataclass(frozen=True, slots=True)
class RunOutcome:
    returncode: int | None  # None: timed out
    stdout: str
    stderr: str


def which(name: str, ctx: ProbeContext) -> str | None:
    """Find ``name`` on the ``PATH`` the probe context carries (not the process's)."""
    return shutil.which(name, path=ctx.get("PATH", ""))


def child_env(ctx: ProbeContext) -> dict[str, str]:
    return dict(ctx.env)


def run_cli(exe: str, args: Sequence[str], ctx: ProbeContext) -> RunOutcome:
    """Run ``exe args`` with the context's env and timeout; never raises on failure."""
    budget = ctx.time_left()
    if budget <= 0:
        return RunOutcome(None, "", "")
    try:
        proc = subprocess.run(
            [exe, *args],
            capture_output=True,
            text=True,
            timeout=budget,
            env=child_env(ctx),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return RunOutcome(None, "", "")
    except OSError as exc:
        return RunOutcome(127, "", str(exc))
    return RunOutcome(proc.returncode, proc.stdout, proc.stderr)


def blocked_executable(exe: str, ctx: ProbeContext) -> ProbeResult | None:
    if guard.executable_allowed(exe, ctx.env):
        return None
    return ProbeResult(
        available=False,
        authenticated=False,
        status="blocked",
        error=f"{exe} is outside the test sandbox; real providers are blocked under tests",
        remedy=f"put a fake executable on PATH or set {guard.ALLOW_ENV}=1",
    )


def timed_out(
    command: str,
    ctx: ProbeContext,
    remedy: str,
    *,
    available: bool = False,
    version: str | None = None,
) -> ProbeResult:
    """The result for a CLI call that ran out of time."""
    return ProbeResult(
        available,
        False,
        "timeout",
        f"`{command}` timed out after {ctx.timeout_s:g}s",
        remedy,
        version=version,
    )


def locate_cli(name: str, ctx: ProbeContext, install: str) -> tuple[str, RunOutcome] | ProbeResult:
    """Find ``name``, check the sandbox lets it run, and run ``name --version``.

    Returns the executable and the version call's outcome (its exit code is the
    caller's to judge), or the result to report when the executable is missing,
    blocked or the version call timed out.
    """
    exe = which(name, ctx)
    if exe is None:
        return ProbeResult(False, False, "not_installed", f"`{name}` is not on PATH", install)
    blocked = blocked_executable(exe, ctx)
    if blocked is not None:
        return blocked
    version = run_cli(exe, ["--version"], ctx)
    if version.returncode is None:
        return timed_out(
            f"{name} --version", ctx, f"check that `{name} --version` runs quickly in a terminal"
        )
    return exe, version


def first_line(text: str) -> str | None:
    """The first line of ``text`` stripped, or None when it is blank."""
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else None


@dataclass(frozen=True, slots=True)
class HttpOutcome:
    """``kind``: ok, refused, timeout, http_status, malformed, blocked, error."""

    kind: str
    data: object = None
    status: int | None = None
    detail: str = ""


def get_json(base_url: str, path: str, ctx: ProbeContext) -> HttpOutcome:
    """GET ``base_url + path`` and decode JSON, classifying every way it can fail."""
    url = base_url.rstrip("/") + path
    if not guard.url_allowed(url, ctx.env):
        return HttpOutcome("blocked", detail=f"{url} is not loopback; blocked under tests")
    try:
        with httpx.Client(timeout=ctx.timeout_s, trust_env=False, verify=ssl_context()) as client:
            response = client.get(url)
    except httpx.ConnectError as exc:
        return HttpOutcome("refused", detail=str(exc) or "connection refused")
    except httpx.TimeoutException:
        return HttpOutcome("timeout", detail=f"no answer within {ctx.timeout_s:g}s")
    except httpx.HTTPError as exc:
        return HttpOutcome("error", detail=str(exc))
    if response.status_code != 200:
        return HttpOutcome(
            "http_status", status=response.status_code, detail=f"HTTP {response.status_code}"
        )
    try:
        return HttpOutcome("ok", data=response.json(), status=200)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return HttpOutcome("malformed", status=200, detail=f"{path} did not return JSON")


def unreachable(
    outcome: HttpOutcome,
    base: str,
    path: str,
    meta: Mapping[str, str],
    *,
    start: str,
    restart: str,
) -> ProbeResult | None:
    """The result for a GET of ``base + path`` that found no server (remedy ``start``),
    timed out (remedy ``restart``) or was blocked; None when a server answered."""
    if outcome.kind == "refused":
        return ProbeResult(
            False, False, "unreachable", f"nothing listens at {base}", start, metadata=meta
        )
    if outcome.kind == "timeout":
        return ProbeResult(
            False, False, "timeout", f"{base}{path}: {outcome.detail}", restart, metadata=meta
        )
    if outcome.kind == "blocked":
        return ProbeResult(False, False, "blocked", outcome.detail, None, metadata=meta)
    return None


def model_list(outcome: HttpOutcome, key: str, *name_keys: str) -> tuple[str, ...] | None:
    """The sorted, distinct names in the ``key`` list of an answered GET.

    An entry's name is its first non-empty string among ``name_keys``. None when
    the GET failed or the answer is not such a list (an entry without a name included).
    """
    data = outcome.data
    if outcome.kind != "ok" or not isinstance(data, Mapping):
        return None
    entries = data.get(key)
    if not isinstance(entries, list):
        return None
    names: set[str] = set()
    for entry in entries:
        name: str | None = None
        for name_key in name_keys:
            name = str_field(entry, name_key)
            if name:
                break
        if name is None:
            return None
        names.add(name)
    return tuple(sorted(names))


def str_field(data: object, key: str) -> str | None:
    if isinstance(data, Mapping):
        value = data.get(key)
        if isinstance(value, str):
            return value
    return None


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One verified TLS context for every provider request (building one per
    ``httpx.Client`` costs ~100 ms of certificate loading)."""
    return ssl.create_default_context()
