"""``librarian providers list | check | qualify``.

* ``list``    registered providers (descriptors) with the cached status, if any;
  probes only with ``--refresh``.
* ``check``   probes every provider (cached 30 minutes unless ``--refresh``), shows
  each status and which provider/model would be used; exit 7 when none is usable.
* ``qualify`` runs the ten-test qualification battery against a model (the
  resolved one, or ``--provider/--model``), stores the result and shows the
  scores; exit 0 when qualified, 1 when not.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import ProviderUnavailable
from ._common import (
    FORMAT_OPTION,
    JSON_OPTION,
    REPO_OPTION,
    err_console,
    json_mode,
    out_console,
    print_json,
    resolve_repo,
)

if TYPE_CHECKING:  # the clients pull in httpx: import the providers on use
    from ..providers import ProviderRegistry
    from ..providers.qualify import QualificationResult
    from ..providers.registry import PluginLoadError

# _exit_note: click's main(standalone_mode=False), which app.main uses, *returns* the
# code of a typer.Exit instead of raising it, so the process would exit 0. SystemExit
# passes through click untouched and keeps the documented exit codes.

REFRESH_OPTION = typer.Option(False, "--refresh", help="Probe again, ignoring the 30-minute cache.")
TIMEOUT_OPTION = typer.Option(5.0, "--timeout", help="Seconds each probe may take.", min=0.1)


def _state_dir(root: Path) -> Path:
    from ..api import ensure_state_dir

    return ensure_state_dir(root)


def _registry(repo: Path, timeout: float) -> ProviderRegistry:
    from ..providers import default_registry

    return default_registry(
        state_dir=_state_dir(resolve_repo(repo)), env=dict(os.environ), probe_timeout_s=timeout
    )


def _pct(permille: int) -> str:
    return f"{permille // 10}.{permille % 10}%"


def register(app: typer.Typer) -> None:
    """Register ``providers`` and its subcommands on ``app``."""
    group = typer.Typer(
        name="providers",
        help="Discover LLM providers, check them, and qualify models.",
        no_args_is_help=True,
    )
    app.add_typer(group, name="providers")

    @group.command("list")
    def list_cmd(
        *,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
        refresh: bool = REFRESH_OPTION,
        timeout: float = TIMEOUT_OPTION,
    ) -> None:
        """List registered providers (best priority first) with their cached status."""
        as_json = json_mode(as_json, fmt)
        from ..providers import QualificationStore

        registry = _registry(repo, timeout)
        discovery = registry.discover(force_refresh=True) if refresh else registry.cached()
        qualified = QualificationStore(_state_dir(resolve_repo(repo))).qualified()
        rows = []
        for probe in registry.all():
            d = probe.descriptor
            result = None if discovery is None else discovery.results.get(d.id)
            rows.append(
                {
                    **d.to_dict(),
                    "result": None if result is None else result.to_dict(),
                    "qualified_models": {
                        m: ok for (pid, m), ok in qualified.items() if pid == d.id
                    },
                }
            )
        if as_json:
            print_json(
                {
                    "ok": True,
                    "providers": rows,
                    "checked_at": None if discovery is None else discovery.checked_at,
                    "plugin_errors": [
                        {"name": e.name, "value": e.value, "error": e.error}
                        for e in _errors(registry)
                    ],
                }
            )
            return
        console = out_console()
        for probe in registry.all():
            d = probe.descriptor
            result = None if discovery is None else discovery.results.get(d.id)
            status = "not checked" if result is None else result.status
            embeds = ", embeddings" if d.supports_embeddings else ""
            console.print(
                f"{d.priority:>4}  {d.id:<10} {d.name} — default model {d.default_model}"
                f" ({d.auth_method}{embeds}) — {status}",
                markup=False,
            )
            if d.env_vars:
                console.print(f"      env: {', '.join(d.env_vars)}", markup=False)
            for (pid, m), ok in qualified.items():
                if pid == d.id:
                    verdict = "qualified" if ok else "not qualified"
                    console.print(f"      model {m}: {verdict}", markup=False)
        for e in _errors(registry):
            err_console().print(f"plugin {e.name} ({e.value}) failed: {e.error}", markup=False)
        if discovery is None:
            err_console().print("Run `librarian providers check` to probe them.", markup=False)

    @group.command("check")
    def check_cmd(
        *,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
        refresh: bool = REFRESH_OPTION,
        timeout: float = TIMEOUT_OPTION,
    ) -> None:
        """Probe every provider and show which provider and model would be used."""
        as_json = json_mode(as_json, fmt)
        from ..providers import resolve_model

        registry = _registry(repo, timeout)
        discovery = registry.discover(force_refresh=refresh)
        statuses = registry.statuses()
        error: ProviderUnavailable | None = None
        try:
            chosen = resolve_model(registry)
        except ProviderUnavailable as exc:
            chosen, error = None, exc
        if as_json:
            print_json(
                {
                    "ok": error is None,
                    "source": discovery.source,
                    "checked_at": discovery.checked_at,
                    "providers": [s.to_dict() for s in statuses],
                    "chosen": None if chosen is None else chosen.to_dict(),
                    "error": None
                    if error is None
                    else {**error.to_dict(), "trace": error.trace.to_dict()},
                }
            )
        else:
            console = out_console()
            for s in statuses:
                r = s.result
                mark = "ok " if r.usable else "-- "
                detail = "" if r.usable else f": {r.error}"
                models = f" [{', '.join(r.models[:5])}]" if r.models else ""
                console.print(
                    f"{mark}{s.descriptor.id:<10} {r.status}{detail}{models}", markup=False
                )
                if not r.usable and (r.remedy or s.descriptor.remedy):
                    console.print(f"     fix: {r.remedy or s.descriptor.remedy}", markup=False)
            if chosen is not None:
                console.print(
                    f"using {chosen.provider} / {chosen.model} ({chosen.source})", markup=False
                )
            elif error is not None:
                err = err_console()
                err.print(f"error: {error.trace}", markup=False)
                if error.hint:
                    err.print(error.hint, markup=False)
        if error is not None:
            raise SystemExit(7)  # see _exit_note

    @group.command("qualify")
    def qualify_cmd(
        *,
        repo: Path = REPO_OPTION,
        as_json: bool = JSON_OPTION,
        fmt: str | None = FORMAT_OPTION,
        refresh: bool = REFRESH_OPTION,
        timeout: float = TIMEOUT_OPTION,
        provider: str | None = typer.Option(None, "--provider", help="Provider id to qualify."),
        model: str | None = typer.Option(None, "--model", help="Model id to qualify."),
        call_timeout: float = typer.Option(
            60.0, "--call-timeout", help="Seconds each test call may take.", min=0.1
        ),
    ) -> None:
        """Run the ten-test qualification battery against a model and store the result."""
        as_json = json_mode(as_json, fmt)
        from ..providers import (
            ClientOptions,
            QualificationStore,
            client_for,
            qualify_model,
            resolve_model,
        )
        from ..providers.registry import choose_model

        root = resolve_repo(repo)
        registry = _registry(root, timeout)
        if provider:
            probe = registry.require(provider)
            if model is None:  # what discovery would pick: the default, or a listed model
                model, _ = choose_model(probe.descriptor, registry.check(provider))
            chosen_provider, chosen_model = provider, model
        else:
            resolved = resolve_model(registry, force_refresh=refresh)
            chosen_provider, chosen_model = resolved.provider, model or resolved.model
        client = client_for(
            registry.require(chosen_provider),
            chosen_model,
            ClientOptions(env=dict(os.environ), timeout_s=call_timeout),
        )
        result = qualify_model(client)
        QualificationStore(_state_dir(root)).save(result)
        if as_json:
            print_json({"ok": True, **result.to_dict()})
        else:
            _print_qualification(result)
        if not result.qualified:
            raise SystemExit(1)  # see _exit_note


def _errors(registry: ProviderRegistry) -> tuple[PluginLoadError, ...]:
    return registry.load_errors


def _print_qualification(result: QualificationResult) -> None:
    console = out_console()
    s = result.scores
    verdict = "QUALIFIED" if result.qualified else "NOT QUALIFIED"
    console.print(f"{result.provider} / {result.model}: {verdict}", markup=False)
    rows = (
        ("JSON validity", s.json_validity_permille, s.json_ok, s.json_total, 90),
        ("schema compliance", s.schema_compliance_permille, s.schema_ok, s.schema_total, 80),
        (
            "instruction following",
            s.instruction_following_permille,
            s.instruction_ok,
            s.instruction_total,
            80,
        ),
    )
    for label, permille, ok, total, need in rows:
        console.print(
            f"  {label:<22} {_pct(permille):>7}  ({ok}/{total}, need {need}%)", markup=False
        )
    console.print(f"  {'latency p50':<22} {s.latency_p50_ms:>5} ms  (need < 5000 ms)", markup=False)
    for o in result.outcomes:
        ok = o.instruction_ok and o.json_valid is not False and o.schema_valid is not False
        reason = f" — {'; '.join(o.reasons)}" if o.reasons else ""
        console.print(
            f"  {'pass' if ok else 'FAIL'} {o.test} ({o.latency_ms} ms){reason}", markup=False
        )
