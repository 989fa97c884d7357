"""A process that starts or resumes an unattended workflow run, to be SIGKILLed.

``python -m tests.execution.crash_worker REPO start`` starts the crash-test
composition with ``--provider ollama`` semantics (the model server is named by
``OLLAMA_HOST``); ``... REPO resume RUN...`` resumes runs one after the other.
Either prints ``go`` once its imports are done, then each run's final status as
JSON if it gets that far. The real service, the real run store, the real HTTP
client: only the library is the tests' (builtin steps plus the test plugin's).
"""

from __future__ import annotations

import json
import sys
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
