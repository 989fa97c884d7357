"""Files the library ships that are generated from benchmark data (``intents/export_*.py``).

Each is written by its script, or checked: with ``--check`` a stale file is an error, so
the tests hold the shipped file to what its inputs give today.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["export_main"]

_REPO = Path(__file__).resolve().parents[2]


def export_main(
    argv: list[str] | None,
    *,
    script: str,
    description: str | None,
    target: Path,
    render: Callable[[], str],
    what: Callable[[str], str],
) -> int:
    """The command line of the export script ``script``: write ``render()`` to ``target``,
    saying ``what(text)`` was written, or with ``--check`` exit 1 when ``target`` differs
    from it."""
    ap = argparse.ArgumentParser(prog=script, description=description)
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            print(f"{target} is stale: run {script}", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {what(text)} to {target.relative_to(_REPO)}")
    return 0
