"""``librarian serve`` argument checks (no server is started)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_repo, run_cli


def test_serve_refuses_non_loopback_hosts_and_unknown_transports(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    public = run_cli("serve", "--transport", "http", "--host", "0.0.0.0", "--repo", str(root))
    assert public.returncode == 2  # a usage error
    assert "loopback" in public.stderr and public.stdout == ""
    bad = run_cli("serve", "--transport", "sse", "--repo", str(root))
    assert bad.returncode != 0
    assert "unknown transport 'sse'" in bad.stderr


def test_serve_help_names_the_transports() -> None:
    result = run_cli("serve", "--help")
    assert result.returncode == 0
    assert "--transport" in result.stdout and "--port" in result.stdout
