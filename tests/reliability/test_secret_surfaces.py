"""No planted secret leaves through any surface: the CLI, the facade, MCP, the state folder.

The corpus (``corpus.py``: 88 secrets in 35 files, some in sensitive files, some in
the uncommitted change) is written once per module; then every surface that
shows text is driven as a user would and every output is searched for every
fragment of every secret. The CLI runs in a subprocess for the first commands (the
real entry point, start-up included) and in-process through ``main`` for the rest
(the same code, without a second of interpreter start-up per command); the
surfaces are checked in one test so that the corpus is built once, not once per
test worker. The state folder is searched too (all of it but the
index, which is the workspace's own text in derived form), and its modes checked.

Each surface must also *have had* something to leak — the raw files contain the
fragments, and the outputs report redactions — so an empty output cannot pass.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from codelibrarian.workspace.secrets import redact, scan_text
from mcp import Client, StdioServerParameters, stdio_client
from tests.helpers import GIT_ENV, git, run_cli
from tests.reliability.corpus import Planted, build, leaks
from tests.reliability.fuzz import invoke_cli
from tests.sources.repo_fixture import warm_tokenizers

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

AS_OF = 1_767_225_600  # 2026-01-01
TASKS = (
    "configure stripe payments, slack notifications and the github client settings",
    "rotate the aws keys and database passwords used by deploy scripts and services",
    "release signing key, kubeconfig tokens and the google maps geocoder",
)
#: a secret typed by the user into the text they give (acceptance criteria, notes, ...)
TYPED = "ghp_" + "Zq8Lw2Vn5Rt7Yp1Xc4Bm6Hd9Jf3Ks0Ga2Ue8"
FORMATS = ("markdown", "xml", "json", "plain")


def _typed() -> Planted:
    return Planted("github_token", "(typed by the user)", TYPED)


@pytest.fixture(scope="module")
def secret_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Planted]]:
    warm_tokenizers()
    root = tmp_path_factory.mktemp("corpus") / "shop"
    planted = build(root)
    return root, planted


def _out(result: Any) -> str:
    return f"{result.stdout}\n{result.stderr}"


class _Result:
    def __init__(self, stdout: str, stderr: str) -> None:
        self.stdout, self.stderr = stdout, stderr


@pytest.fixture(scope="module")
def outputs(secret_corpus: tuple[Path, list[Planted]]) -> dict[str, str]:
    """Every CLI surface, run once against the corpus: surface name -> all it printed."""
    root, planted = secret_corpus
    repo = ("-C", str(root))
    files = sorted({p.path for p in planted if not p.path.startswith("(")})
    file_args = [a for f in files for a in ("--files", f)]
    out: dict[str, str] = {}

    def real(name: str, *args: str) -> Any:
        result = run_cli(*args)
        assert result.returncode == 0, f"{name}: {result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr
        out[name] = _out(result)
        return result

    def run(name: str, *args: str) -> Any:
        code, stdout, stderr = invoke_cli(list(args))
        assert code in (0, None), f"{name}: {stderr[-2000:]}"
        assert "Traceback" not in stderr
        out[name] = f"{stdout}\n{stderr}"
        return _Result(stdout, stderr)

    real("index", "index", str(root), "--json")
    real("map", "map", "--budget", "20000", *repo)
    real("compose_plain_real", "compose", TASKS[2], "--budget", "30000", "--format", "plain",
         "--explain", *repo)  # fmt: skip
    run("map_json", "map", "--budget", "20000", "--json", *repo)
    decision = ""
    for i, task in enumerate(TASKS):
        for fmt in FORMATS:
            r = run(
                f"compose_{fmt}_{i}",
                "compose", task, "--budget", "30000", "--format", fmt, *file_args,
                "--explain", "--verbose", "--reveal", "--as-of", str(AS_OF + i), *repo,
            )  # fmt: skip
            if fmt == "json":
                decision = json.loads(r.stdout)["decision_id"]
    run("compose_small", "compose", TASKS[0], "--budget", "1500", "--json", *file_args, *repo)
    diff = root.parent / "change.diff"
    diff.write_text(git(root, "diff"), encoding="utf-8")
    assert ".env" in diff.read_text(encoding="utf-8")
    r = run("compose_diff", "compose", TASKS[1], "--diff", str(diff), "--json", *repo)
    out["diff_decision"] = json.loads(r.stdout)["decision_id"]
    run("explain", "explain", decision, *repo)
    run("explain_json", "explain", decision, "--json", *repo)
    run("replay", "replay", out["diff_decision"], "--json", *repo)
    for i, task in enumerate(TASKS):
        run(f"query_{i}", "query", task, "--json", *repo)
        run(f"query_text_{i}", "query", task, *repo)
    r = run(
        "pack",
        "pack", "--agent", "Implementer", "--task", TASKS[0], "--json",
        "--acceptance", f"the token {TYPED} is rotated", "--constraint", f"never log {TYPED}",
        *file_args, *repo,
    )  # fmt: skip
    run_id = json.loads(r.stdout)["run_id"]
    out["run_id"] = run_id
    run("pack_reviewer", "pack", "--agent", "Reviewer", "--task", TASKS[1], "--run", run_id, *repo)
    run(
        "handoff",
        "handoff", "--run", run_id, "--from", "Implementer", "--to", "Reviewer",
        "--note", f"I used {TYPED} to test", "--risk", f"{TYPED} may be in logs", "--json", *repo,
    )  # fmt: skip
    run("runs_show", "runs", "show", run_id, "--json", *repo)
    run("runs_list", "runs", "list", "--json", *repo)
    run("window", "window", "--goal", f"ship it with {TYPED}", "--json", *repo)
    run("violation", "violations", "add", "--rule", "secrets", "--message", f"found {TYPED}", *repo)
    run("violations", "violations", "list", "--json", *repo)
    run("scan", "scan", "--json", *repo)
    run("status_doctor", "doctor", "--json", *repo)
    # an error that echoes a config value back: the value is a token
    (root / "librarian.toml").write_text(f'[workspace]\nignore = "{TYPED}"\n', encoding="utf-8")
    code, stdout, stderr = invoke_cli(["compose", "x", *repo])
    (root / "librarian.toml").unlink()
    assert code == 3, stderr
    out["config_error"] = f"{stdout}\n{stderr}"
    return out


def _report(found: list[tuple[Planted, str]]) -> list[str]:
    return sorted({f"{p.kind} from {p.path}" for p, _ in found})


def _all(planted: list[Planted]) -> list[Planted]:
    return [*planted, _typed()]


def test_the_corpus_is_what_it_claims(secret_corpus: tuple[Path, list[Planted]]) -> None:
    root, planted = secret_corpus
    assert len(planted) >= 76
    assert len({p.path for p in planted}) >= 30
    kinds = {p.kind for p in planted}
    for kind in ("aws_access_key_id", "github_token", "slack_token", "stripe_key", "jwt",
                 "google_api_key", "private_key", "dsn_password", "hex32_api_key"):  # fmt: skip
        assert kind in kinds
    assert any(p.path == ".env" for p in planted)
    assert any("kubeconfig" in p.path for p in planted)
    for p in planted:  # every fragment really is in the repository: the check can fail
        text = (root / p.path).read_text(encoding="utf-8")
        assert all(f in text for f in p.fragments), (p.kind, p.path)


def test_recall_on_the_planted_corpus_is_total(secret_corpus: tuple[Path, list[Planted]]) -> None:
    """Every planted secret is found in its own file: redacting the file hides all of it."""
    root, planted = secret_corpus
    missed = []
    for path in sorted({p.path for p in planted}):
        text = (root / path).read_text(encoding="utf-8")
        clean = redact(text, scan_text(text))
        missed += leaks(clean, [p for p in planted if p.path == path])
    assert _report(missed) == []


#: every surface ``outputs`` runs (the map and a compose through a real subprocess)
SURFACES = (
    "map", "map_json", "compose_plain_real", "compose_small", "compose_diff", "explain",
    "explain_json", "replay",
    *(f"compose_{fmt}_{i}" for fmt in FORMATS for i in range(len(TASKS))),
    *(f"query_{i}" for i in range(len(TASKS))),
    *(f"query_text_{i}" for i in range(len(TASKS))),
    "pack", "pack_reviewer", "handoff", "runs_show", "runs_list", "window", "violation",
    "violations", "index", "scan", "status_doctor", "config_error",
)  # fmt: skip


def test_no_secret_in_any_cli_output(
    outputs: dict[str, str], secret_corpus: tuple[Path, list[Planted]]
) -> None:
    assert sorted(outputs) == sorted({*SURFACES, "diff_decision", "run_id"})
    leaked = {s: _report(leaks(outputs[s], _all(secret_corpus[1]))) for s in SURFACES}
    assert {s: found for s, found in leaked.items() if found} == {}


def test_the_surfaces_had_secrets_to_leak(outputs: dict[str, str]) -> None:
    """The outputs show redactions: the secrets reached the gate, not just nothing."""
    assert _first_json_obj(outputs["map_json"])["redactions"]["spans"] >= 20
    composed = _first_json_obj(outputs["compose_json_0"])
    assert sum(r["spans"] for r in composed["redactions"]) >= 5
    assert "[REDACTED:" in composed["text"]
    intake = _first_json_obj(outputs["compose_diff"])["intake_redactions"]
    assert any(d["kind"] == "diff" and d["reason"] == "sensitive_file_withheld" for d in intake)
    assert "[REDACTED:" in outputs["pack"] and "[REDACTED:" in outputs["handoff"]
    assert "[REDACTED:" in outputs["config_error"]


def _first_json(text: str) -> str:
    """The JSON document at the start of a captured stdout + stderr."""
    decoder = json.JSONDecoder()
    _, end = decoder.raw_decode(text)
    return text[:end]


def _first_json_obj(text: str) -> dict[str, Any]:
    data = json.loads(_first_json(text))
    assert isinstance(data, dict)
    return data


def test_query_snippets_through_the_facade(secret_corpus: tuple[Path, list[Planted]]) -> None:
    """The code of every cited chunk (``with_code``), whole-file aware."""
    from codelibrarian.api import Librarian

    root, planted = secret_corpus
    with Librarian(root) as lib:
        texts = []
        spans = 0
        for task in TASKS:
            result = lib.query(task, with_code=True, limit=30, as_of=AS_OF)
            texts.append(json.dumps(result.to_dict()))
            spans += sum(s.redacted_spans for s in result.snippets)
    assert spans > 0
    assert _report(leaks("\n".join(texts), planted)) == []


def test_state_folder_holds_no_secret_and_is_private(
    outputs: dict[str, str], secret_corpus: tuple[Path, list[Planted]]
) -> None:
    root, planted = secret_corpus
    state = root / ".librarian"
    assert outputs  # every surface has run and written what it writes
    checked = 0
    found: list[tuple[Planted, str]] = []
    for path in sorted(state.rglob("*")):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_dir():
            assert mode == 0o700, f"{path.relative_to(root)} is {mode:04o}"
            continue
        assert mode == 0o600, f"{path.relative_to(root)} is {mode:04o}"
        if path.name.startswith("index.db"):
            continue  # the index: the workspace's own text, derived (docs/secrets.md)
        checked += 1
        found += leaks(path.read_text(encoding="utf-8", errors="replace"), _all(planted))
    assert checked >= 10  # decisions, sidecars, cache, runs, packs, handoffs, journal, ...
    assert (state / "decisions" / "private").is_dir()
    assert _report(found) == []


# --------------------------------------------------------------------------- MCP


def _server_env() -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "NO_COLOR": "1"}
    env.pop("LIBRARIAN_LLM_PROVIDER", None)
    return env


@pytest.fixture(scope="module")
def mcp_outputs(
    secret_corpus: tuple[Path, list[Planted]], outputs: dict[str, str]
) -> dict[str, str]:
    """Every tool and resource through the SDK's client over stdio: name -> text."""
    root, _ = secret_corpus
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codelibrarian", "serve", "--repo", str(root)],
        env=_server_env(),
        cwd=str(root),
    )
    texts: dict[str, str] = {}

    async def script() -> None:
        with open(os.devnull, "w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err)) as client:

                async def call(name: str, tool: str, args: dict[str, Any]) -> str:
                    result = await client.call_tool(tool, args)
                    text = "\n".join(str(getattr(c, "text", "")) for c in result.content)
                    assert not result.is_error, f"{name}: {text}"
                    texts[name] = text
                    return text

                decision = ""
                for i, task in enumerate(TASKS):
                    for fmt in ("markdown", "xml", "plain"):
                        for cap in (1500, 12000):
                            doc = await call(
                                f"compose_{i}_{fmt}_{cap}",
                                "compose_context",
                                {"task": task, "format": fmt, "max_tokens": cap, "as_of": AS_OF},
                            )
                            decision = json.loads(doc).get("decision_id") or decision
                    await call(
                        f"query_{i}",
                        "query_codebase",
                        {"intent": task, "include_code": True, "max_tokens": 20000, "limit": 30},
                    )
                await call("explain", "explain_decision", {"decision_id": decision})
                await call("status", "index_status", {"refresh": True})
                pack = await call(
                    "pack",
                    "build_context_pack",
                    {"goal": TASKS[0], "acceptance": [f"rotate {TYPED}"], "max_tokens": 20000},
                )
                uri = json.loads(pack)["uri"]
                contents = (await client.read_resource(uri)).contents
                texts["pack_resource"] = "\n".join(str(getattr(c, "text", "")) for c in contents)
                runs = (await client.read_resource("resources://runs/index.json")).contents
                index = json.loads(str(getattr(runs[0], "text", "")))
                texts["runs_index"] = json.dumps(index)
                for run in index["runs"]:
                    for res_uri in [*run["context"], *run["handoff"]]:
                        got = (await client.read_resource(res_uri)).contents
                        texts[res_uri] = "\n".join(str(getattr(c, "text", "")) for c in got)

    async def main() -> None:
        with anyio.fail_after(240):
            await script()

    anyio.run(main)
    return texts


def test_no_secret_in_mcp_tools_and_resources(
    mcp_outputs: dict[str, str], secret_corpus: tuple[Path, list[Planted]]
) -> None:
    planted = _all(secret_corpus[1])
    leaked = {name: _report(leaks(text, planted)) for name, text in mcp_outputs.items()}
    assert {name: found for name, found in leaked.items() if found} == {}
    assert any("handoff" in name for name in mcp_outputs)  # the CLI's handoff is served too
    assert sum(text.count("[REDACTED:") for text in mcp_outputs.values()) >= 20


# ------------------------------------------------------------- resident server


def test_no_secret_through_the_resident_server(
    outputs: dict[str, str], secret_corpus: tuple[Path, list[Planted]]
) -> None:
    """Calls a resident server answers (``serve --daemon``) pass the same gate: the
    answers equal the in-process ones and carry no secret, errors included."""
    from codelibrarian.cli.resident import request, socket_path

    root, planted = secret_corpus
    env = {"LIBRARIAN_NO_RESIDENT": ""}
    started = run_cli("serve", "--daemon", "--json", cwd=root, env=env)
    assert started.returncode == 0, started.stderr
    try:
        served = int(request(root, {"op": "ping"}, timeout=10)["served"])
        texts: list[str] = []
        calls = [
            ("compose", TASKS[0], "--budget", "30000", "--format", "json", "--explain"),
            ("compose", TASKS[1], "--budget", "30000", "--format", "plain"),
            ("query", TASKS[2], "--json"),
            ("map", "--budget", "20000", "--json"),
        ]
        for args in calls:
            result = run_cli(*args, "--as-of", str(AS_OF), cwd=root, env=env) if args[0] in (
                "compose", "query") else run_cli(*args, cwd=root, env=env)  # fmt: skip
            assert result.returncode == 0, (args, result.stderr)
            assert "Traceback" not in result.stderr
            texts.append(_out(result))
        # a config error echoing a token back, answered by the server
        (root / "librarian.toml").write_text(f'[workspace]\nignore = "{TYPED}"\n', encoding="utf-8")
        try:
            bad = run_cli("compose", "x", cwd=root, env=env)
        finally:
            (root / "librarian.toml").unlink()
        assert bad.returncode == 3, bad.stderr
        texts.append(_out(bad))
        assert int(request(root, {"op": "ping"}, timeout=10)["served"]) == served + len(calls) + 1
        assert _report(leaks("\n".join(texts), _all(planted))) == []
        assert "[REDACTED:" in texts[0]  # it had secrets to leak
    finally:
        run_cli("serve", "--stop", cwd=root, env=env)
    deadline = time.monotonic() + 10
    while socket_path(root).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not socket_path(root).exists()
