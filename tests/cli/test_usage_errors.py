"""Usage errors give click's message and exit code 2, never a traceback."""

from __future__ import annotations

import pytest

from tests.helpers import run_cli


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tokens", "--bogus"), "No such option: --bogus"),
        (("nosuchcmd",), "No such command 'nosuchcmd'"),
        (("compose",), "Missing argument"),
    ],
)
def test_usage_error_exits_2_with_a_message(args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
