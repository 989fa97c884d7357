"""Two clones of one repository give the same pack for the same task.

Artifact ids are keyed by each workspace's own secret, so a tie between equal
scores that fell back to the id alone was decided differently in every clone:
the same change composed in two checkouts showed different windows of the file.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from codelibrarian.api import Librarian
from tests.helpers import commit_all, make_repo

AS_OF = 1_800_000_000


def _module(version: int) -> str:
    rows: list[str] = []
    for block in range(12):
        rows.append(f"def handler_{block}(request, settings):")
        for n in range(30):
            value = version if n == 15 else 0
            rows.append(f"    field_{block}_{n} = settings.lookup('{block}.{n}', {value})")
        rows.append(f"    return field_{block}_0")
        rows.append("")
    return "\n".join(rows) + "\n"


def _clone_pack(root: Path) -> str:
    make_repo(root, {"app/handlers.py": _module(0), "README.md": "# service\n"})
    (root / "app/handlers.py").write_text(_module(1), encoding="utf-8")
    commit_all(root, "bump every handler's middle field")
    diff = subprocess.run(
        ["git", "-C", str(root), "diff", "HEAD~1", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lib = Librarian(root)
    try:
        lib.index()
        return lib.compose(
            "review the handler field change",
            budget=900,
            diff_text=diff,
            fmt="markdown",
            as_of=AS_OF,
            use_cache=False,
            record=False,
        ).text
    finally:
        lib.close()


def test_equal_scores_break_by_source_position_not_by_the_workspace_secret(
    tmp_path: Path,
) -> None:
    first = _clone_pack(tmp_path / "one")
    # the twelve edited windows score alike and only some fit: the tie decides which
    assert 0 < first.count("handlers.py") < 13
    for name in ("two", "three", "four"):
        assert _clone_pack(tmp_path / name) == first
