"""Starting the CLI loads only what every command needs.

Each ``librarian`` call is a fresh process (agents shell out to it), so heavy
dependencies load inside the commands that use them. This guards against a
module-level import bringing them back.
"""

from __future__ import annotations

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


def test_building_the_cli_imports_no_heavy_module() -> None:
    code = (
        "import sys, codelibrarian.cli.app\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
