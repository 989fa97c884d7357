"""SIGTERM that always ends the process, promptly.

The CLI's SIGTERM handler raises ``SystemExit`` so that a command unwinds like
after Ctrl-C (transactions roll back, pool workers are killed, the index lock is
released). Python drops an exception raised where it ignores exceptions: in an
``os.register_at_fork`` callback (``logging`` has one, run each time the parse
pool forks a worker), a finalizer, a weakref callback. A SIGTERM landing there was
lost, and the command ran on. So the handler also starts a timer that ends the
process ``TERM_GRACE_S`` later if it is still running: the index is crash-safe,
so a clean-up cut short leaves what a SIGKILL would.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["TERM_GRACE_S", "exit_later", "exit_now"]

#: how long a terminated command may take to unwind before it is ended anyway
TERM_GRACE_S = 1.0

_armed: list[bool] = []


def exit_later(code: int) -> None:
    """End the process with ``code`` in ``TERM_GRACE_S`` unless it has ended (once)."""
    if _armed:
        return
    _armed.append(True)
    import threading

    threading.Thread(target=_exit_after, args=(code,), daemon=True).start()


def _exit_after(code: int) -> None:
    time.sleep(TERM_GRACE_S)
    exit_now(code)


def exit_now(code: int) -> None:
    """Flush the standard streams and end the process at once (no interpreter teardown)."""
    for stream in (sys.stdout, sys.stderr):
        # not contextlib.suppress: a call the resident server answered never loads it
        try:  # noqa: SIM105
            stream.flush()
        except Exception:  # a closed or broken stream: end regardless
            pass
    os._exit(code)
