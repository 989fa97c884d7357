"""Resident mode: CLI calls answered by a warm server, and the fallback without one.

The suite runs with ``LIBRARIAN_RESIDENT=manual`` (``tests/conftest.py``): no call
starts a server unless a test asks. Tests here that want the real default unset
the variable; every server a test starts is stopped (and waited for) by the
fixture, whatever the test's outcome.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codelibrarian.cli import resident
from codelibrarian.cli.resident import auto_start, request, socket_path
from tests.helpers import commit_all, make_repo, running, wait_gone

FILES = {
    "app/billing.py": (
        "def invoice_total(lines):\n"
        '    """Sum the invoice lines."""\n'
        "    return sum(line.amount for line in lines)\n"
    ),
    "app/shipping.py": "def ship(order):\n    return order.address\n",
    "README.md": "# Shop\n\nBilling and shipping.\n",
}
AS_OF = "1767225600"
TASK = "fix the invoice total"
#: a loaded machine: a server's start-up (imports, the first index) takes seconds
START_S = 120.0


def librarian(
    repo: Path, *args: str, mode: str | None = "manual", timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The real CLI in ``repo``; ``mode`` is ``LIBRARIAN_RESIDENT`` (None: unset, the
    default). Auto-started servers end by themselves after 120 s should a stop fail."""
    env = dict(os.environ)
    env.pop("LIBRARIAN_NO_RESIDENT", None)
    env.pop("LIBRARIAN_RESIDENT", None)
    if mode is not None:
        env["LIBRARIAN_RESIDENT"] = mode
    env["LIBRARIAN_RESIDENT_IDLE"] = "120"
    return subprocess.run(
        [sys.executable, "-m", "codelibrarian", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def compose(
    repo: Path, mode: str | None = "manual", *extra: str
) -> subprocess.CompletedProcess[str]:
    return librarian(repo, "compose", TASK, "--as-of", AS_OF, *extra, mode=mode)


def _ping(root: Path) -> dict[str, object] | None:
    try:
        return request(root, {"op": "ping"}, timeout=5)
    except OSError:
        return None


def _served(root: Path) -> int:
    state = _ping(root)
    assert state is not None, "no resident server answers"
    return int(str(state["served"]))


def _wait_for_server(root: Path, seconds: float = START_S) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = _ping(root)
        if state is not None:
            return state
        time.sleep(0.1)
    pytest.fail("no resident server answered in time")


def stop_server(root: Path) -> None:
    """Stop the repository's server, if any, and wait until its process is gone."""
    state = _ping(root)
    if state is None:
        return
    pid = int(str(state["pid"]))
    with contextlib.suppress(OSError):
        request(root, {"op": "stop"}, timeout=10)
    if wait_gone({pid}, 60):
        os.kill(pid, signal.SIGKILL)
        wait_gone({pid}, 30)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    root = make_repo(tmp_path / "shop", FILES)
    yield root
    stop_server(root)


@pytest.mark.slow
def test_calls_go_to_the_resident_server_and_answer_the_same(repo: Path) -> None:
    alone = compose(repo, "off")
    assert alone.returncode == 0, alone.stderr
    alone_xml = compose(repo, "off", "--format", "xml", "--budget", "1500")
    started = librarian(repo, "serve", "--daemon", "--json")
    assert started.returncode == 0, started.stderr
    assert socket_path(repo).exists()
    assert socket_path(repo).stat().st_mode & 0o077 == 0  # only its owner can connect
    before = _served(repo)
    warm = compose(repo)
    assert warm.returncode == 0, warm.stderr
    assert _served(repo) == before + 1
    assert warm.stdout == alone.stdout  # byte-identical packs
    warm_xml = compose(repo, "manual", "--format", "xml", "--budget", "1500")
    assert warm_xml.stdout == alone_xml.stdout and warm_xml.stderr == alone_xml.stderr
    # errors come back with their exit code and message
    bad = librarian(repo, "compose", "x", "--budget", "0")
    assert bad.returncode == 2 and "budget" in bad.stderr
    # off: answered here even with a server running
    off = compose(repo, "off")
    assert off.stdout == alone.stdout
    assert _served(repo) == before + 3
    again = librarian(repo, "serve", "--daemon")
    assert "already running" in again.stdout
    status = librarian(repo, "serve", "--status")
    assert "running" in status.stdout and "started by serve" in status.stdout
    stopped = librarian(repo, "serve", "--stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    deadline = time.monotonic() + 30
    while socket_path(repo).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not socket_path(repo).exists()
    assert "no resident server" in librarian(repo, "serve", "--status").stdout


def test_a_stale_socket_falls_back_to_running_in_process(repo: Path) -> None:
    path = socket_path(repo)
    path.parent.mkdir(exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens
    result = compose(repo)
    assert result.returncode == 0, result.stderr
    assert "app/billing.py" in result.stdout


@pytest.mark.slow
def test_a_server_that_dies_mid_call_leaves_the_same_answer(repo: Path) -> None:
    """A server that takes the call and dies before answering (its connection closes):
    the CLI runs the call itself and prints what it prints without any server."""
    alone = compose(repo, "off")
    assert alone.returncode == 0, alone.stderr
    path = socket_path(repo)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    listener.settimeout(START_S)
    got: list[dict[str, object]] = []

    def take_the_call_and_die() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            got.append(resident.recv_message(conn))  # read the whole request, then hang up

    dying = threading.Thread(target=take_the_call_and_die)
    dying.start()
    try:
        result = compose(repo)
    finally:
        listener.close()
        dying.join(timeout=30)
    assert got and got[0]["argv"][:2] == ["compose", TASK]  # type: ignore[index]
    assert result.returncode == 0, result.stderr
    assert result.stdout == alone.stdout


@pytest.mark.slow
def test_a_killed_resident_server_leaves_calls_working(repo: Path) -> None:
    started = librarian(repo, "serve", "--daemon", "--json")
    assert started.returncode == 0, started.stderr
    pid = int(str(_wait_for_server(repo)["pid"]))
    os.kill(pid, signal.SIGKILL)
    wait_gone({pid}, 30)
    t0 = time.monotonic()
    result = compose(repo)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - t0 < 60
    assert "app/billing.py" in result.stdout


@pytest.mark.slow
def test_the_default_starts_one_server_that_follows_the_repository(repo: Path) -> None:
    """No variable set: the first call (which indexes) starts a server once it is done;
    later calls are answered by it, and stay equal to in-process answers when the
    tree changes and when the index is deleted and rebuilt under it."""
    assert not (repo / ".librarian").exists()
    first = compose(repo, None)
    assert first.returncode == 0, first.stderr
    assert "invoice_total" in first.stdout
    state = _wait_for_server(repo)
    assert state["auto"] is True and state["idle_timeout"] == 120
    before = int(str(state["served"]))
    second = compose(repo, None)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout  # byte-identical to the in-process answer
    assert _served(repo) == before + 1
    # the tree changes under the server
    (repo / "app" / "billing.py").write_text(
        FILES["app/billing.py"] + "\n\ndef invoice_tax(lines, rate):\n    return rate\n",
        encoding="utf-8",
    )
    (repo / "app" / "refunds.py").write_text(
        "def refund_invoice_total(invoice):\n    return -invoice.total\n", encoding="utf-8"
    )
    changed_warm = compose(repo, None)
    changed_alone = compose(repo, "off")
    assert changed_warm.returncode == 0, changed_warm.stderr
    assert "invoice_tax" in changed_warm.stdout
    assert changed_warm.stdout == changed_alone.stdout
    # committed, then the index deleted and rebuilt by another process
    commit_all(repo, "refunds")
    for name in ("index.db", "index.db-wal", "index.db-shm"):
        (repo / ".librarian" / name).unlink(missing_ok=True)
    rebuilt = librarian(repo, "index", mode="off")
    assert rebuilt.returncode == 0, rebuilt.stderr
    (repo / "app" / "returns.py").write_text("def returns_total():\n    return 0\n")
    rebuilt_warm = compose(repo, None)
    rebuilt_alone = compose(repo, "off")
    assert rebuilt_warm.returncode == 0, rebuilt_warm.stderr
    assert rebuilt_warm.stdout == rebuilt_alone.stdout
    assert _served(repo) == before + 3  # the server answered every default call
    status = librarian(repo, "serve", "--status", "--json", mode=None)
    assert '"auto": true' in status.stdout and '"running": true' in status.stdout


@pytest.mark.slow
def test_the_config_key_turns_it_off(repo: Path) -> None:
    assert compose(repo, None).returncode == 0
    pid = int(str(_wait_for_server(repo)["pid"]))
    (repo / "librarian.toml").write_text('[resident]\nmode = "off"\n', encoding="utf-8")
    declined = compose(repo, None)
    assert declined.returncode == 0, declined.stderr
    assert "invoice_total" in declined.stdout
    assert wait_gone({pid}, 60) == set()  # the auto-started server ended
    assert not socket_path(repo).exists()
    assert compose(repo, None).returncode == 0  # and no call starts another
    time.sleep(0.5)  # a started server would bind within this; it must not exist at all
    assert _ping(repo) is None
    assert not (repo / ".librarian" / "resident.starting").exists()


@pytest.mark.slow
def test_racing_starts_leave_one_server(repo: Path) -> None:
    (repo / ".librarian").mkdir()
    env = {**os.environ, "LIBRARIAN_RESIDENT_IDLE": "120"}
    cmd = [sys.executable, "-P", "-m", "codelibrarian", "serve", "--resident", "--auto",
           "--idle-timeout", "120", "--repo", str(repo)]  # fmt: skip
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=repo)
        for _ in range(3)
    ]
    try:
        state = _wait_for_server(repo)
        deadline = time.monotonic() + START_S
        while sum(p.poll() is None for p in procs) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = [p for p in procs if p.poll() is None]
        assert len(alive) == 1 and alive[0].pid == state["pid"]
        for p in procs:
            if p is not alive[0]:
                assert p.returncode == 0, p.stderr.read() if p.stderr else ""
    finally:
        stop_server(repo)
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)
            if p.stderr:
                p.stderr.close()


def test_auto_start_claims_the_start_once(tmp_path: Path) -> None:
    state = tmp_path / ".librarian"
    state.mkdir()
    assert resident._claim_start(str(state)) is True
    assert resident._claim_start(str(state)) is False  # another call is starting one
    old = time.time() - 120
    os.utime(state / "resident.starting", (old, old))
    assert resident._claim_start(str(state)) is True  # that start failed long ago


def test_auto_start_needs_auto_mode_and_an_indexed_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["compose", "x", "-C", str(tmp_path)]
    (tmp_path / ".librarian").mkdir()
    for mode in ("off", "manual"):
        monkeypatch.setenv("LIBRARIAN_RESIDENT", mode)
        assert auto_start(argv) is False
    monkeypatch.delenv("LIBRARIAN_RESIDENT")
    monkeypatch.setenv("LIBRARIAN_NO_RESIDENT", "1")
    assert auto_start(argv) is False
    monkeypatch.delenv("LIBRARIAN_NO_RESIDENT")
    (tmp_path / "librarian.toml").write_text('[resident]\nmode = "manual"\n', encoding="utf-8")
    assert auto_start(argv) is False  # the config says so
    (tmp_path / "librarian.toml").write_text('[resident]\nmode = "sometimes"\n')
    assert auto_start(argv) is False  # a bad config: this call reports it; nothing starts
    (tmp_path / "librarian.toml").unlink()
    (tmp_path / ".librarian" / "resident.starting").touch()  # another call is starting one
    assert auto_start(argv) is False
    bare = tmp_path / "bare"
    bare.mkdir()
    assert auto_start(["compose", "x", "-C", str(bare)]) is False  # not indexed: no server
    assert not (bare / ".librarian").exists()
    assert not any(running(p.pid) for p in resident._CHILDREN)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Path, list[list[str]]]]:
    """A real server on a real socket, in a thread, whose commands only record argv."""
    from codelibrarian.cli.resident_server import ResidentServer

    calls: list[list[str]] = []

    def handle(argv: list[str]) -> int:
        calls.append(argv)
        sys.stdout.write("answered\n")
        return 3

    root = tmp_path / "repo"
    root.mkdir()
    srv = ResidentServer(root, handle, idle_timeout=120, auto=True)
    assert srv.bind()
    thread = threading.Thread(target=srv.serve, daemon=True)
    streams = sys.stdout, sys.stderr  # the server routes them per thread
    thread.start()
    try:
        yield root, calls
    finally:
        srv.stop()
        thread.join(timeout=30)
        srv.close()
        sys.stdout, sys.stderr = streams


def test_one_server_per_repository_and_calls_from_other_code_declined(
    server: tuple[Path, list[list[str]]],
) -> None:
    from codelibrarian.cli.resident_server import ResidentServer

    root, calls = server
    second = ResidentServer(root, lambda argv: 0)
    assert second.bind() is False  # the first holds the repository's lock
    assert socket_path(root).exists()
    doc: dict[str, object] = {"argv": ["compose", "x"], "cwd": str(root), "env": {}}
    ours = request(root, {**doc, "client": resident.client_id()}, timeout=30)
    assert ours == {"code": 3, "stdout": "answered\n", "stderr": ""}
    off = request(
        root,
        {**doc, "client": resident.client_id(), "env": {"LIBRARIAN_RESIDENT": "off"}},
        timeout=30,
    )
    assert off == {"declined": True}
    other = request(root, {**doc, "client": "0.0.1 /elsewhere"}, timeout=30)
    assert other == {"declined": True}
    assert calls == [["compose", "x"]]
    # an auto-started server that met other code ends, so the next call starts its own
    deadline = time.monotonic() + 30
    while socket_path(root).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not socket_path(root).exists()
    # the lock is free again once the ending server has closed (it removes its socket
    # first: on a loaded machine the two steps can be a moment apart)
    while not (bound := second.bind()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bound is True
    second.close()


#: what a call answered by the server must not import: the client exists to skip them
NOT_FOR_THE_CLIENT = ("typing", "pathlib", "json", "re", "socket", "subprocess", "threading",
                      "typer", "rich", "pydantic", "numpy", "codelibrarian.api")  # fmt: skip


def test_a_call_the_server_answers_imports_nothing_heavy(
    server: tuple[Path, list[list[str]]],
) -> None:
    root, calls = server
    code = (
        "import sys\n"
        "sys.argv = ['librarian', 'compose', 'the task']\n"
        "from codelibrarian.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"print('exit', code, ','.join(m for m in {NOT_FOR_THE_CLIENT!r} if m in sys.modules))"
    )
    env = {**os.environ, "LIBRARIAN_RESIDENT": "manual"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    assert calls == [["compose", "the task"]], out.stderr
    assert out.stdout.splitlines() == ["answered", "exit 3 "]


def test_warming_runs_when_idle_yields_to_calls_and_ends_with_the_server(tmp_path: Path) -> None:
    """Idle-time warming: steps run while no call waits, a call is answered in the
    middle of a long warming run, each answer restarts it, and it ends with the server."""
    from codelibrarian.cli.resident_server import ResidentServer

    runs: list[threading.Event] = []  # one per warming run: set when the run is closed
    steps: list[int] = []

    def warm() -> Iterator[tuple[int, int]]:
        ended = threading.Event()
        runs.append(ended)
        try:
            for i in range(1_000_000):  # far longer than the test: only a call or stop ends it
                time.sleep(0.001)
                steps.append(i)
                yield i + 1, 1_000_000
        finally:
            ended.set()

    root = tmp_path / "repo"
    root.mkdir()
    srv = ResidentServer(root, lambda argv: 3, idle_timeout=120, warm=warm)
    assert srv.bind()
    thread = threading.Thread(target=srv.serve, daemon=True)
    streams = sys.stdout, sys.stderr
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while len(steps) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(steps) >= 20, "warming did not run while the server was idle"
        state = request(root, {"op": "ping"}, timeout=30)
        assert state["warming"] is True
        done = state["warmed"]
        assert isinstance(done, list) and done[1] == 1_000_000 and 0 < done[0] < done[1]
        doc = {
            "argv": ["compose", "x"],
            "cwd": str(root),
            "env": {},
            "client": resident.client_id(),
        }
        assert request(root, doc, timeout=60)["code"] == 3  # answered mid-warming
        deadline = time.monotonic() + 60
        while len(runs) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(runs) == 2 and runs[0].is_set()  # the call (not the ping) restarted it
        assert not runs[1].is_set()
        request(root, {"op": "ping"}, timeout=30)
        assert len(runs) == 2
    finally:
        srv.stop()
        thread.join(timeout=60)
        srv.close()
        sys.stdout, sys.stderr = streams
    assert not thread.is_alive()
    assert all(ended.is_set() for ended in runs)  # warming ended with the server
    assert not socket_path(root).exists()


@pytest.mark.slow
def test_a_warmed_server_answers_byte_identical_packs(repo: Path) -> None:
    assert compose(repo, "off").returncode == 0  # indexed
    off = librarian(repo, "serve", "--daemon")  # warming is opt-in: this one does not warm
    assert off.returncode == 0, off.stderr
    assert _wait_for_server(repo)["warmed"] == [0, 0]
    stop_server(repo)
    (repo / "librarian.toml").write_text("[resident]\nwarm_files = true\n", encoding="utf-8")
    alone = compose(repo, "off")
    assert alone.returncode == 0, alone.stderr
    started = librarian(repo, "serve", "--daemon")
    assert started.returncode == 0, started.stderr
    deadline = time.monotonic() + START_S
    state = _wait_for_server(repo)
    while state.get("warming") and time.monotonic() < deadline:
        time.sleep(0.1)
        state = _wait_for_server(repo)
    assert state["warming"] is False
    assert state["warmed"] == [4, 4]  # every indexed file warmed (the config too)
    warm = compose(repo)
    assert warm.returncode == 0, warm.stderr
    assert _served(repo) == 1
    assert warm.stdout == alone.stdout


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_server_settles_its_kept_objects_out_of_the_collector() -> None:
    """After start-up (and every few calls) a server freezes what it keeps and collects
    its young objects less often; a re-settle frees garbage frozen before."""
    import gc
    import weakref

    from codelibrarian.cli import resident_server

    threshold = gc.get_threshold()
    try:
        kept = _Cycle()
        ref = weakref.ref(kept)
        resident_server._settle()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= resident_server._GC_YOUNG
        del kept
        gc.collect()
        assert ref() is not None  # frozen with the kept objects: not collected
        resident_server._resettle()
        assert ref() is None  # re-settled: freed
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_a_server_replies_before_the_calls_records_and_writes_them_before_the_next(
    tmp_path: Path,
) -> None:
    from codelibrarian.cli.resident_server import ResidentServer
    from codelibrarian.service.later import after_reply

    order: list[str] = []
    release = threading.Event()

    def handle(argv: list[str]) -> int:
        if argv[1:] == ["first"]:

            def record() -> None:
                release.wait(30)  # the reply must not wait for this
                order.append("recorded")

            after_reply(record)
        else:
            order.append("second call")
        return 0

    root = tmp_path / "repo"
    root.mkdir()
    srv = ResidentServer(root, handle, idle_timeout=120)
    assert srv.bind()
    thread = threading.Thread(target=srv.serve, daemon=True)
    streams = sys.stdout, sys.stderr
    thread.start()
    try:
        doc = {"cwd": str(root), "env": {}, "client": resident.client_id()}
        began = time.monotonic()
        assert request(root, {**doc, "argv": ["compose", "first"]}, timeout=60)["code"] == 0
        assert time.monotonic() - began < 20
        order.append("replied")
        release.set()
        assert request(root, {**doc, "argv": ["compose", "second"]}, timeout=60)["code"] == 0
    finally:
        release.set()
        srv.stop()
        thread.join(timeout=60)
        srv.close()
        sys.stdout, sys.stderr = streams
    assert order == ["replied", "recorded", "second call"]


def test_a_served_call_ends_without_loading_threading_or_contextlib(
    server: tuple[Path, list[list[str]]],
) -> None:
    """The console script's ending (``entry``) after a served call: no thread can run,
    so it imports nothing to look for one."""
    root, calls = server
    code = (
        "import sys\n"
        "sys.argv = ['librarian', 'compose', 'the task']\n"
        "from codelibrarian.cli.app import entry\n"
        "entry()\n"
    )
    env = {**os.environ, "LIBRARIAN_RESIDENT": "manual"}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=root, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert calls == [["compose", "the task"]], out.stderr
    assert out.returncode == 3 and out.stdout == "answered\n"
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert "codelibrarian.cli._signals" in imported  # the ending ran
    assert not {"threading", "contextlib"} & imported


def test_the_server_runs_a_compose_line_without_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compose line the quick parser reads is run as a fresh process runs it; any
    other line (here ``--help``) still goes through the click command."""
    import gc

    from codelibrarian.cli import _output, app, compose_run
    from codelibrarian.cli.app import build_app
    from codelibrarian.cli.resident_server import start_resident

    build_app()  # every command module imported first: none binds the stand-ins below

    # a server keeps its Librarians process-wide: not past this test
    monkeypatch.setattr(_output._Kept, "libraries", None)
    through_click: list[list[str]] = []
    quick: list[dict[str, object]] = []
    monkeypatch.setattr(app, "run", lambda command, argv: through_click.append(argv))
    monkeypatch.setattr(compose_run, "run_compose", lambda **kw: quick.append(kw) or 0)
    root = tmp_path / "repo"
    root.mkdir()
    streams = sys.stdout, sys.stderr
    threshold = gc.get_threshold()
    srv = start_resident(root, idle_timeout=60)  # it settles the collector: undone below
    assert srv is not None
    try:
        assert srv.handle(["compose", TASK, "--as-of", AS_OF, "--budget", "900"]) == 0
        assert quick == [{"task": TASK, "as_of": int(AS_OF), "budget": 900}]
        assert through_click == []
        assert srv.handle(["compose", "--help"]) == 0
        assert through_click == [["compose", "--help"]]
    finally:
        srv.close()
        sys.stdout, sys.stderr = streams
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_the_collector_waits_for_the_reply(tmp_path: Path) -> None:
    """While a call runs the cycle collector is off; it collects once after the reply,
    and is on again between calls."""
    import gc

    from codelibrarian.cli.resident_server import ResidentServer

    during: list[bool] = []
    root = tmp_path / "repo"
    root.mkdir()
    srv = ResidentServer(root, lambda argv: during.append(gc.isenabled()) or 0, idle_timeout=120)
    assert srv.bind()
    thread = threading.Thread(target=srv.serve, daemon=True)
    streams = sys.stdout, sys.stderr
    assert gc.isenabled()
    collected: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and threading.current_thread() is thread:
            collected.append(info["generation"])

    gc.callbacks.append(count)
    thread.start()
    try:
        doc = {"cwd": str(root), "env": {}, "client": resident.client_id(), "argv": ["x"]}
        for _ in range(2):
            assert request(root, doc, timeout=60)["code"] == 0
        request(root, {"op": "ping"}, timeout=60)  # answered after the last call's finish
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(count)
        srv.stop()
        thread.join(timeout=60)
        srv.close()
        sys.stdout, sys.stderr = streams
        gc.enable()
    assert during == [False, False]
    assert collected.count(1) >= 2  # one collection of the young objects per call
