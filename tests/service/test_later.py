"""Records after the reply (service/later.py): queued while a server answers, written
before its next call, waited for by a reader in another process's place."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.errors import NotFound
from codelibrarian.service.later import PENDING, after_reply, queued, replying, run_queued
from tests.helpers import make_repo

FILES = {
    "app/billing.py": "def invoice_total(lines):\n    return sum(x.amount for x in lines)\n",
    "app/shipping.py": "def ship(order):\n    return order.address\n",
}
AS_OF = 1767225600
TASK = "fix the invoice total"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", FILES)  # the first compose indexes it


def _logged(root: Path) -> str:
    folder = root / ".librarian" / "decisions"
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.jsonl")))


def test_work_runs_at_once_outside_a_reply_and_in_order_after_one() -> None:
    done: list[str] = []
    assert not queued()
    after_reply(lambda: done.append("now"))
    assert done == ["now"]
    with replying() as queue:
        assert queued()
        after_reply(lambda: done.append("first"))
        after_reply(lambda: done.append("second"))
        assert done == ["now"]
    assert not queued()
    assert run_queued(queue) == [] and done == ["now", "first", "second"] and queue == []


def test_failing_work_does_not_stop_the_rest() -> None:
    done: list[str] = []

    def broken() -> None:
        raise OSError("disk full")

    with replying() as queue:
        after_reply(broken)
        after_reply(lambda: done.append("kept"))
    errors = run_queued(queue)
    assert [type(e) for e in errors] == [OSError] and done == ["kept"]


def test_a_served_compose_records_after_the_reply_and_a_reader_waits(repo: Path) -> None:
    lib = Librarian(repo)
    plain = lib.compose(TASK, as_of=AS_OF, use_cache=False)
    assert plain.decision_id and plain.decision_id in _logged(repo)
    marker = repo / ".librarian" / PENDING
    assert not marker.exists()
    with replying() as queue:
        served = lib.compose(TASK + " again", as_of=AS_OF, use_cache=False)
    # the answer is complete; its records wait for the reply to be sent
    assert served.decision_id and served.decision_id not in _logged(repo)
    assert marker.exists() and queue
    other = Librarian(repo)  # a reader elsewhere: explain with the resident mode off
    timer = threading.Timer(0.3, run_queued, args=(queue,))
    timer.start()
    try:
        began = time.monotonic()
        explained = other.explain(served.decision_id)
        assert time.monotonic() - began >= 0.2  # it waited for the records
    finally:
        timer.join()
    assert explained["decision_id"] == served.decision_id
    assert served.decision_id in _logged(repo) and not marker.exists()
    lib.close()
    other.close()


def test_a_stale_marker_is_not_waited_for(repo: Path) -> None:
    marker = repo / ".librarian" / PENDING
    with Librarian(repo) as lib:
        lib.compose(TASK, as_of=AS_OF, use_cache=False)  # makes the state folder
        marker.write_text("", encoding="utf-8")
        old = time.time() - 60
        os.utime(marker, (old, old))  # a killed server's
        began = time.monotonic()
        with pytest.raises(NotFound):
            lib.explain("0123456789abcdef01234567")
        assert time.monotonic() - began < 2.0
