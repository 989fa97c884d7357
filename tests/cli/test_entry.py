"""The console script ends like the interpreter does, without its module teardown:
threads joined, ``atexit`` callbacks run, streams flushed, the exit status kept."""

from __future__ import annotations

import subprocess
import sys


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_atexit_callbacks_and_threads_finish_before_the_end() -> None:
    done = _python(
        "import atexit, sys, threading, time\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start()\n"
        "sys.argv = ['librarian', '--version']\n"
        "from codelibrarian.cli.app import entry\n"
        "entry()\n"
        "print('never reached')\n"
    )
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0].startswith("codelibrarian ")
    assert lines[1:] == ["thread done", "atexit ran"]


def test_exit_statuses_are_the_interpreter_s() -> None:
    usage = subprocess.run(
        [sys.executable, "-m", "codelibrarian", "index", "--nope"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert usage.returncode == 2 and "--nope" in usage.stderr
    text = _python(
        "import sys\n"
        "import codelibrarian.cli.app as app\n"
        "app.main = lambda: sys.exit('it broke')\n"
        "app.entry()\n"
    )
    assert text.returncode == 1 and text.stderr == "it broke\n"
    silent = _python(
        "import sys\n"
        "import codelibrarian.cli.app as app\n"
        "app.main = lambda: sys.exit(None)\n"
        "app.entry()\n"
    )
    assert silent.returncode == 0 and silent.stderr == ""


def test_a_long_output_is_flushed_whole_into_a_pipe() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codelibrarian", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: librarian")
    assert done.stdout.endswith("docs/cli.md explains them).\n")
