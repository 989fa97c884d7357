"""Entry-point registration: built-ins through the same groups, plugins checked and isolated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from codelibrarian.techniques import lcl
from codelibrarian.techniques.registry import OPERATOR_GROUP, PRIMITIVE_GROUP, load_library
from codelibrarian.techniques.tree import steps_of

ROOT = Path(__file__).resolve().parents[2]
BUILTIN_P = EntryPoint(
    "builtin", "codelibrarian.techniques.data:builtin_primitives", PRIMITIVE_GROUP
)
BUILTIN_O = EntryPoint(
    "builtin", "codelibrarian.techniques.operators:builtin_operators", OPERATOR_GROUP
)


def _ep(name: str, attr: str, group: str = PRIMITIVE_GROUP) -> EntryPoint:
    return EntryPoint(name, f"tests.techniques.plugin_sample:{attr}", group)


def test_builtins_arrive_through_the_entry_point_groups() -> None:
    prims = {ep.name: ep.value for ep in entry_points(group=PRIMITIVE_GROUP)}
    ops = {ep.name: ep.value for ep in entry_points(group=OPERATOR_GROUP)}
    assert prims["builtin"] == BUILTIN_P.value and ops["builtin"] == BUILTIN_O.value


def test_a_plugin_primitive_and_operator_are_usable_from_lcl() -> None:
    lib = load_library(
        primitive_entry_points=[BUILTIN_P, _ep("acme", "primitives")],
        operator_entry_points=[BUILTIN_O, _ep("acme", "THROTTLE", OPERATOR_GROUP)],
    )
    p = lib.primitive("acme_license_scan")
    assert p.origin == "acme = tests.techniques.plugin_sample:primitives"
    program = (
        lcl.compose("with_plugin")
        .use("tc_dependency_update")
        .add("acme_license_scan", position="after:tp_dependency_audit")
        .wrap("acme_throttle", ["acme_license_scan"], interval_ms=5000)
        .done()
    )
    compiled = program.compile(library=lib)
    assert [s.primitive for s in steps_of(compiled.root)][:2] == [
        "tp_dependency_audit",
        "acme_license_scan",
    ]
    assert compiled.stratum == "finite"


def test_broken_and_clashing_plugins_are_recorded_not_fatal() -> None:
    lib = load_library(
        primitive_entry_points=[
            BUILTIN_P,
            _ep("bad", "broken"),
            _ep("clash", "clash"),
            _ep("gone", "nothing"),
        ],
        operator_entry_points=[BUILTIN_O],
    )
    errors = {e.name: e.error for e in lib.plugin_errors}
    assert "executor" in errors["bad"] and "wizard" in errors["bad"]
    assert "already registered" in errors["clash"]
    assert "AttributeError" in errors["gone"]
    assert lib.primitive("tp_bisect").origin == "builtin"


@pytest.mark.slow
def test_an_installed_plugin_is_found_and_used_by_the_cli(tmp_path: Path) -> None:
    site = tmp_path / "site"
    pkg = site / "acme_plugin"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        (Path(__file__).parent / "plugin_sample.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    info = site / "acme_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-plugin\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[codelibrarian.primitives]\nacme = acme_plugin:primitives\n", encoding="utf-8"
    )
    program = tmp_path / "licensed.toml"
    program.write_text(
        textwrap.dedent(
            """\
            base = "composition"
            base_id = "tc_dependency_update"

            [[conditionals]]
            when = "change.touches_dependencies"
            then = "add"
            primitive_id = "acme_license_scan"
            """
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")])}
    cli = [sys.executable, "-m", "codelibrarian"]
    out = subprocess.run(
        [*cli, "lcl", "compile", str(program), "--json", "-C", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert {"step": "acme_license_scan", "primitive": "acme_license_scan"} in doc["steps"]
    listed = subprocess.run(
        [*cli, "techniques", "show", "acme_license_scan", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert json.loads(listed.stdout)["item"]["origin"] == "acme = acme_plugin:primitives"
