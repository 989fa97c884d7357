"""Starting the CLI loads only what the command asked for needs.

Each ``librarian`` call is a fresh process (agents shell out to it), so heavy
dependencies load inside the commands that use them, ``--help`` and
``--version`` load none of them, and a command loads its own module only.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "numpy",
    "httpx",
    "codelibrarian.api",
    "codelibrarian.query.pipeline",
    "codelibrarian.index.store",
    "codelibrarian.packs",
    "codelibrarian.providers.clients",
)
#: what ``--help`` / ``--version`` must not load (the issue names the first three)
NOT_FOR_HELP = ("numpy", "pydantic", "tree_sitter", "typer", "rich", "codelibrarian.config")


def _loaded_after(argv: list[str], names: tuple[str, ...]) -> list[str]:
    code = (
        "import sys, contextlib, io\n"
        f"sys.argv = ['librarian', *{argv!r}]\n"
        "from codelibrarian.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()\n"
        f"print(','.join(m for m in {names!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return [m for m in out.stdout.strip().split(",") if m]


def test_building_the_cli_imports_no_heavy_module() -> None:
    code = (
        "import sys, codelibrarian.cli.app\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_help_and_version_import_no_numpy_pydantic_tree_sitter_or_typer() -> None:
    for argv in ([], ["--help"], ["-h"], ["--version"]):
        assert _loaded_after(argv, NOT_FOR_HELP) == [], argv


def test_a_command_loads_only_its_own_module() -> None:
    others = tuple(
        f"codelibrarian.cli.{m}"
        for m in ("workspace_cmds", "providers_cmds", "pack_cmds", "serve_cmds", "window_cmds")
    )
    assert _loaded_after(["compose", "--help"], others) == []
    assert _loaded_after(["compose", "--help"], ("codelibrarian.cli.compose_cmds",)) == [
        "codelibrarian.cli.compose_cmds"
    ]


def test_the_command_table_matches_the_commands() -> None:
    """``commands.COMMANDS`` (what --help prints and how commands load) is the truth."""
    code = (
        "import json, typer.main\n"
        "from codelibrarian.cli.app import build_app\n"
        "from codelibrarian.cli.commands import MODULES\n"
        "rows = []\n"
        "for module in MODULES:\n"
        "    cmd = typer.main.get_command(build_app((module,)))\n"
        "    for name in cmd.list_commands(None):\n"
        "        c = cmd.get_command(None, name)\n"
        "        first = (c.short_help or c.help or '').strip().split('\\n')[0]\n"
        "        rows.append([name, module, first])\n"
        "print(json.dumps(rows))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    from codelibrarian.cli.commands import COMMANDS

    real = sorted(tuple(r) for r in json.loads(out.stdout))
    assert sorted(COMMANDS) == real


def test_help_lists_every_command_and_version_prints_it() -> None:
    from codelibrarian import __version__
    from codelibrarian.cli.commands import COMMANDS

    help_out = subprocess.run(
        [sys.executable, "-m", "codelibrarian", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    for name, _, summary in COMMANDS:
        assert f"  {name}" in help_out and summary in help_out
    version = subprocess.run(
        [sys.executable, "-m", "codelibrarian", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert version == f"codelibrarian {__version__}\n"
