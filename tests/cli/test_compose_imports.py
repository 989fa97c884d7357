"""A piped ``librarian compose`` on an indexed repository loads only what composing needs.

Agents call ``compose`` in a loop, each call a fresh process: the terminal renderer
(rich), the query pipeline with its embedders, the HTTP client and the parser stay
unloaded when the index is current and nothing is drawn.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codelibrarian.index.indexer import index_workspace
from tests.helpers import make_repo

NOT_FOR_COMPOSE = (
    "rich",
    "codelibrarian.query.pipeline",
    "codelibrarian.query.embed",
    "codelibrarian.explain_view",
    "httpx",
    "tree_sitter",
)

FILES = {
    "app/billing.py": (
        "def invoice_total(lines):\n"
        '    """Sum the invoice lines."""\n'
        "    return sum(line.amount for line in lines)\n"
    ),
    "app/shipping.py": "from app.billing import invoice_total\n\n\ndef ship(order):\n"
    "    return invoice_total(order.lines)\n",
}


def _loaded_by_compose(repo: Path, *extra: str) -> list[str]:
    code = (
        "import sys, contextlib, io\n"
        f"sys.argv = ['librarian', 'compose', 'invoice total of the lines', *{list(extra)!r}]\n"
        "from codelibrarian.cli.app import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main()\n"
        "assert 'invoice_total' in out.getvalue(), out.getvalue()\n"
        f"print(','.join(m for m in {NOT_FOR_COMPOSE!r} if m in sys.modules))"
    )
    done = _python(repo, "-c", code)
    return [m for m in done.stdout.strip().split(",") if m]


def _python(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=repo,
        env={**os.environ, "LIBRARIAN_NO_RESIDENT": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_a_piped_compose_loads_no_renderer_pipeline_http_or_parser(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop", FILES)
    index_workspace(repo)
    assert _loaded_by_compose(repo, "--budget", "2000") == []
    assert _loaded_by_compose(repo, "--budget", "2000", "--format", "json") == []


def test_explain_still_draws_with_rich(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop", FILES)
    index_workspace(repo)
    done = _python(repo, "-m", "codelibrarian", "compose", "invoice total", "--explain")
    assert "invoice_total" in done.stdout
    # the explanation's tables, drawn by rich on stderr
    assert "Composition summary" in done.stderr and "Lane breakdown" in done.stderr
