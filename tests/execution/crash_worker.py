"""A process that starts or resumes an unattended workflow run, to be SIGKILLed.

``python -m tests.execution.crash_worker REPO start`` starts the crash-test
composition with ``--provider ollama`` semantics (the model server is named by
``OLLAMA_HOST``); ``... REPO resume RUN...`` resumes runs one after the other.
Either prints ``go`` once its imports are done, then each run's final status as
JSON if it gets that far. The real service, the real run store, the real HTTP
client: only the library is the tests' (builtin steps plus the test plugin's).

``python -m tests.execution.crash_worker serve`` pays the imports once and then
forks one such worker per request line read on stdin (``{"argv": [...], "out":
FILE, "err": FILE}``: the worker's arguments and where its stdout and stderr go),
printing ``pid N`` when the worker starts and ``exit CODE`` when it ended (a
negative code: the signal that ended it). Each worker is still its own process,
killed on its own; only the start-up (seconds of imports on a loaded machine) is
shared.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import traceback
from pathlib import Path

from tests.execution.library import LIBRARY, compiled, executors
from tests.execution.sim import op, s

TASK = "add returns the wrong result: add(2, 3) gives -1"


def tree() -> object:
    """Six model steps and three builtin ones, one of them inside a retry."""
    return op(
        "sequence",
        s("test_think", "t1"),
        s("test_noop", "n1"),
        s("test_think", "t2"),
        op("retry", s("test_think", "t3"), attempts=2, backoff="constant", base_delay_ms=0),
        s("test_noop", "n2"),
        s("test_think", "t4"),
        s("test_think", "t5"),
        s("test_noop", "n3"),
        s("test_think", "t6"),
    )


def main(argv: list[str]) -> int:
    from codelibrarian.execution.service import ExecutionService
    from codelibrarian.service.compose import ComposeService
    from codelibrarian.service.workspace import WorkspaceSession

    repo, mode = Path(argv[0]), argv[1]
    ws = WorkspaceSession(repo)
    service = ExecutionService(ws, ComposeService(ws), library=LIBRARY, executors=executors())
    print("go", flush=True)  # imports done: from here on a kill lands in the run's work
    if mode == "start":
        views = [service.start(compiled(tree(), "crash_flow"), TASK, provider="ollama")]
    else:  # resume each run named, one after the other
        views = [service.resume(run_id) for run_id in argv[2:]]
    for view in views:
        print(json.dumps({"run_id": view.run_id, "status": view.status}), flush=True)
    return 0


def serve() -> int:
    """Fork a worker per request on stdin (see the module docstring); ends at EOF."""
    import codelibrarian.execution.service
    import codelibrarian.service.compose
    import codelibrarian.service.workspace  # noqa: F401 - loaded once, inherited by each fork

    # the loaded objects never change: keep the collector (and the copy-on-write
    # faults its scans would cause in every worker) off them
    gc.freeze()
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the worker: its own output files, then exit without cleanup
            code = 1
            try:
                for fd, path in ((1, request["out"]), (2, request["err"])):
                    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    os.dup2(target, fd)
                    os.close(target)
                code = main(request["argv"])
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {os.waitstatus_to_exitcode(status)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(serve() if sys.argv[1:] == ["serve"] else main(sys.argv[1:]))
