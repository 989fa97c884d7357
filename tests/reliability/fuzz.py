# ruff: noqa: E501 -- the argument tables read best one option per entry
"""Generated bad (and good) input for the three ways in: config files, CLI arguments, MCP.

Each generator takes a seeded ``random.Random`` and yields cases; each runner runs
one case in-process and returns an :class:`Outcome`:

* ``traceback`` — an exception the library did not turn into a library error
  (for the CLI: anything escaping ``main`` but ``SystemExit``, or exit 70, or
  "Traceback" on stderr; for MCP: a tool error from the crash path, or a raw SDK
  error; for configs: anything but ``Config`` or ``ConfigError``);
* ``overrun`` — a successful result longer than its token budget (the pack, the
  map, a tool result, the window);
* ``ok`` / ``error`` — a result, or a clean error.

``tests/reliability/test_fuzz.py`` runs a few hundred cases in the suite;
``benchmarks/fuzz_surfaces.py`` runs ten thousand and records the counts.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import string
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codelibrarian.tokens import get_tokenizer
from tests.helpers import git, make_repo, write_files

__all__ = [
    "Outcome",
    "cli_cases",
    "config_cases",
    "invoke_cli",
    "make_workspace",
    "mcp_cases",
    "run_cli_case",
    "run_config_case",
    "run_mcp_case",
]

AS_OF = 1_767_225_600
FILES = {
    "shop/pricing.py": "def apply_discount(total, rate):\n    return total * (1 - rate)\n",
    "shop/cart.py": (
        "from shop.pricing import apply_discount\n\n\nclass Cart:\n"
        "    def total(self, items):\n        return apply_discount(sum(items), 0.1)\n"
    ),
    "shop/settings.py": 'STRIPE_KEY = "sk_live_' + "4eC39HqLyjWDarjtT1zdp7dc" + '"\nDEBUG = True\n',
    "README.md": "# shop\n\nA small shop.\n",
    "CONSTRAINTS.md": "# Constraints\n\n- Never log card numbers.\n",
    ".env": "PASSWORD=Xy9-secret-Q4w\n",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str  # "ok", "error", "traceback", "overrun"
    detail: str = ""


def make_workspace(root: Path) -> Path:
    """A small git repository with a change in progress, indexed, a diff and envelopes."""
    make_repo(root, FILES)
    write_files(root, {"shop/pricing.py": FILES["shop/pricing.py"] + "\n\nTAX = 0.2\n"})
    (root.parent / "change.diff").write_text(git(root, "diff"), encoding="utf-8")
    (root.parent / "envelopes.jsonl").write_text(
        json.dumps({"id": "e1", "content": "ran the tests", "timestamp_ms": 1}) + "\n",
        encoding="utf-8",
    )
    (root.parent / "garbage.bin").write_bytes(bytes(range(256)) * 4)
    return root


# ------------------------------------------------------------------- values


def _text(rng: random.Random) -> str:
    return rng.choice(
        [
            "apply a discount to the cart",
            "",
            "   ",
            "x",
            "🛒 ünïcödé task ✓",
            "fix " * rng.randrange(1, 400),
            "token ghp_" + "".join(rng.choice(string.ascii_letters) for _ in range(36)),
            "".join(rng.choice(string.printable) for _ in range(rng.randrange(1, 80))),
            "\x00\x01 control",
            "--budget",
            "../../etc/passwd",
        ]
    )


def _int(rng: random.Random) -> str:
    return rng.choice(
        [
            str(rng.randrange(1, 40_000)),
            "0",
            "-1",
            "1",
            "128",
            "99999999999999999999999",
            "9223372036854775807",
            "1e3",
            "abc",
            "",
            str(AS_OF),
        ]
    )


def _path(rng: random.Random, root: Path) -> str:
    return rng.choice(
        [
            "shop/pricing.py",
            "shop/missing.py",
            "../../etc/passwd",
            "/etc/passwd",
            str(root / "shop" / "cart.py"),
            ".env",
            "",
            "shop",
            "a" * 300,
        ]
    )


# ------------------------------------------------------------------- config

_KEYS = {
    "budget": ["total_tokens"],
    "budget.lanes.local": ["min", "max", "priority"],
    "workspace": ["max_file_bytes", "ignore", "skip", "max_line_chars"],
    "index": [
        "chunk_max_tokens",
        "cochange_commits",
        "cochange_max_files",
        "workers",
        "lock_timeout",
        "first_files",
        "background",
    ],
    "cache": ["dir", "max_mb"],
    "policy": [
        "constraint_docs",
        "danger_zones",
        "sensitive_patterns",
        "protected",
        "scan_secrets",
    ],
    "rules": ["files"],
    "compose": ["model", "format"],
    "state": ["cache_max_mb", "cache_max_entries", "decisions_max_mb", "decisions_max_age_days"],
    "nonsense": ["what"],
}


def _toml_value(rng: random.Random) -> str:
    return rng.choice(
        [
            str(rng.randrange(-5, 50_000)),
            "9223372036854775807",
            "99999999999999999999999999",
            "-9223372036854775808",
            "0",
            "1.5",
            "true",
            '"markdown"',
            '"claude-sonnet-4.5"',
            '"frobnicator"',
            '["*.py", "build/"]',
            "[1, 2]",
            "[]",
            '""',
            "{ a = 1 }",
            "inf",
            "nan",
            '"\\u0000"',
        ]
    )


_VALID: dict[str, Any] = {
    "total_tokens": lambda r: str(r.randrange(2000, 20_000)),
    "min": lambda r: str(r.randrange(0, 300)),
    "max": lambda r: str(r.randrange(300, 4000)),
    "priority": lambda r: str(r.randrange(0, 9)),
    "max_file_bytes": lambda r: str(r.randrange(1000, 2_000_000)),
    "chunk_max_tokens": lambda r: str(r.randrange(64, 1024)),
    "cochange_commits": lambda r: str(r.randrange(0, 500)),
    "cochange_max_files": lambda r: str(r.randrange(2, 60)),
    "workers": lambda r: str(r.randrange(0, 5)),
    "skip": lambda r: r.choice(
        ["[]", '["vendored"]', '["minified", "long_lines"]', '["generated"]']
    ),
    "max_line_chars": lambda r: str(r.randrange(200, 20_000)),
    "lock_timeout": lambda r: str(r.randrange(0, 30)),
    "first_files": lambda r: str(r.choice([0, 1, 2, 200])),
    "background": lambda r: "false",  # no background runs outliving a fuzz case
    "dir": lambda r: r.choice(['""', '"fuzz-cache"']),
    "max_mb": lambda r: str(r.randrange(0, 64)),
    "protected": lambda r: r.choice(["true", "false"]),
    "scan_secrets": lambda r: r.choice(["true", "false"]),
    "model": lambda r: r.choice(['"gpt-4o"', '"claude-sonnet-4-5"', '"llama3"', '"frobnicator"']),
    "format": lambda r: r.choice(['"markdown"', '"xml"', '"plain"', '"json"']),
}


def _value_for(rng: random.Random, key: str) -> str:
    """Mostly a valid value for ``key`` (so valid configs get used), else anything."""
    if rng.random() < 0.6:
        if key in _VALID:
            return str(_VALID[key](rng))
        if key.startswith(("cache_", "decisions_")):
            return str(rng.randrange(1, 100))
        if key in ("ignore", "constraint_docs", "danger_zones", "sensitive_patterns", "files"):
            return rng.choice(['["*.md"]', "[]", '["shop/**"]', '["**/secrets/*"]'])
    return _toml_value(rng)


def config_cases(rng: random.Random, n: int) -> Iterator[tuple[str, str]]:
    """(file name, content) of ``librarian.toml`` or ``pyproject.toml`` files."""
    for _ in range(n):
        roll = rng.random()
        if roll < 0.05:
            yield "librarian.toml", "".join(rng.choice(string.printable) for _ in range(60))
            continue
        lines: list[str] = []
        for table in rng.sample(sorted(_KEYS), rng.randrange(1, 4)):
            lines.append(f"[{table}]")
            for key in rng.sample(_KEYS[table], rng.randrange(1, len(_KEYS[table]) + 1)):
                lines.append(f"{key} = {_value_for(rng, key)}")
        body = "\n".join(lines) + "\n"
        if roll < 0.2:
            prefixed = "\n".join(
                ln.replace("[", "[tool.librarian.", 1) if ln.startswith("[") else ln
                for ln in body.splitlines()
            )
            yield "pyproject.toml", '[project]\nname = "x"\n' + prefixed + "\n"
        else:
            yield "librarian.toml", body


def run_config_case(root: Path, name: str, content: str, *, compose: bool) -> Outcome:
    """Load the config (and, if it loads and ``compose``, compose with it)."""
    from codelibrarian.api import Librarian
    from codelibrarian.config import Config, load_config
    from codelibrarian.errors import ConfigError, LibrarianError

    for old in ("librarian.toml", "pyproject.toml"):
        (root / old).unlink(missing_ok=True)
    (root / name).write_text(content, encoding="utf-8")
    try:
        config = load_config(root)
    except ConfigError as exc:
        return Outcome("error", exc.code)
    except Exception as exc:
        return Outcome("traceback", f"load_config: {type(exc).__name__}: {exc}")
    assert isinstance(config, Config)
    if not compose:
        return Outcome("ok")
    budget = 2000
    try:
        with Librarian(root, config=config) as lib:
            result = lib.compose("apply a discount", budget=budget, as_of=AS_OF)
    except LibrarianError as exc:
        return Outcome("error", exc.code)
    except Exception as exc:
        return Outcome("traceback", f"compose: {type(exc).__name__}: {exc}")
    if get_tokenizer(result.model).count(result.text) > budget:
        return Outcome("overrun", "compose with a fuzzed config")
    return Outcome("ok")


# ---------------------------------------------------------------------- CLI


def cli_cases(rng: random.Random, n: int, root: Path, decision: str) -> Iterator[list[str]]:
    """Argument lists for ``librarian`` (without the program name)."""
    side = root.parent
    for _ in range(n):
        cmd = rng.choice(
            ["compose"] * 6 + ["map"] * 2 + ["query"] * 2
            + ["explain", "replay", "pack", "handoff", "runs", "violations", "vitals", "window",
               "tokens", "scan", "index", "doctor", "init", "bogus", "techniques", "patterns",
               "lcl", "presets"]
        )  # fmt: skip
        args: list[str] = [cmd]
        opts: list[tuple[str, Any]] = []
        if cmd == "compose":
            args.append(_text(rng))
            opts = [("--budget", _int), ("--model", lambda r: r.choice(["gpt-4o", "claude-3-5-sonnet", "frob", ""])),
                    ("--format", lambda r: r.choice(["markdown", "xml", "json", "plain", "yaml", ""])),
                    ("--files", lambda r: _path(r, root)), ("--as-of", _int),
                    ("--base", lambda r: r.choice(["HEAD", "HEAD~5", "nope", "--x"])),
                    ("--diff", lambda r: r.choice([str(side / "change.diff"), str(side / "garbage.bin"), "/nonexistent", str(side)])),
                    ("--event", lambda r: r.choice(["manual", "file_saved", "bogus"])),
                    ("-o", lambda r: r.choice([str(side / "out.md"), "/nonexistent/x/out.md", str(side)])),
                    ("--json", None), ("--dry-run", None), ("--explain", None), ("--no-cache", None),
                    ("--reveal", None), ("--verbose", None)]  # fmt: skip
        elif cmd == "map":
            opts = [
                ("--budget", _int),
                ("--json", None),
                ("--format", lambda r: r.choice(["json", "text", "x"])),
            ]
        elif cmd == "query":
            args.append(_text(rng))
            opts = [("--depth", lambda r: r.choice(["L0", "L1", "L3", "L9"])), ("--limit", _int),
                    ("--budget", _int), ("--as-of", _int), ("--json", None)]  # fmt: skip
        elif cmd in ("explain", "replay"):
            args.append(rng.choice([decision, "0" * 24, "../../etc/passwd", "", "x" * 200]))
            opts = [("--json", None)]
        elif cmd == "pack":
            opts = [("--agent", lambda r: r.choice(["Planner", "Implementer", "Hacker", ""])),
                    ("--task", _text), ("--scope", lambda r: r.choice(["Tiny", "Huge"])),
                    ("--capability", lambda r: r.choice(["fast_code", "nope"])),
                    ("--run", lambda r: r.choice(["r1", "../x", "", "a" * 80])),
                    ("--files", lambda r: _path(r, root)), ("--as-of", _int), ("--json", None)]  # fmt: skip
        elif cmd == "handoff":
            opts = [("--run", lambda r: r.choice(["r1", "nope", "../x"])),
                    ("--from", lambda r: r.choice(["Planner", "X"])), ("--to", lambda r: r.choice(["Implementer", ""])),
                    ("--note", _text), ("--json", None)]  # fmt: skip
        elif cmd == "runs":
            args.append(rng.choice(["list", "show", "nope"]))
            if args[-1] == "show":
                args.append(rng.choice(["r1", "../..", "x"]))
            opts = [("--json", None)]
        elif cmd == "violations":
            args.append(rng.choice(["add", "list"]))
            opts = [("--rule", _text), ("--message", _text), ("--line", _int),
                    ("--severity", lambda r: r.choice(["low", "huge"])), ("--json", None)]  # fmt: skip
        elif cmd == "vitals":
            args.append(rng.choice(["show", "record"]))
            opts = [
                ("--tests", lambda r: r.choice(["pass", "maybe"])),
                ("--as-of", _int),
                ("--json", None),
            ]
        elif cmd == "window":
            opts = [("--goal", _text), ("--total", _int), ("--map-budget", _int),
                    ("--envelopes", lambda r: r.choice([str(side / "envelopes.jsonl"), str(side / "garbage.bin"), "/nope"])),
                    ("--max-recent", _int), ("--json", None)]  # fmt: skip
        elif cmd == "index":
            args.append(rng.choice([str(root), "/nonexistent", str(root / "README.md")]))
            opts = [("--json", None)]
        elif cmd == "tokens":
            opts = [
                ("--model", lambda r: r.choice(["gpt-4o", "x"])),
                ("--top", _int),
                ("--json", None),
            ]
        elif cmd in ("techniques", "patterns"):
            args.append(rng.choice(["list", "show", "nope"]))
            if args[-1] == "show":
                args.append(rng.choice(["tp_change_impact", "tc_root_cause_recovery",
                                        "pattern_bug_investigation", "nope", "../x", ""]))  # fmt: skip
            opts = [("--kind", lambda r: r.choice(["primitives", "operators", "compositions",
                                                   "templates", "nope"])),
                    ("--json", None), ("--format", lambda r: r.choice(["json", "text", "yaml"]))]  # fmt: skip
        elif cmd in ("lcl", "presets"):
            target = lambda r: r.choice(["preset_security_review", "nope", str(side / "garbage.bin"),  # noqa: E731
                                         str(root / "README.md"), "/nonexistent.lcl", str(side)])  # fmt: skip
            sub = rng.choice(
                ["check", "compile", "facts"] if cmd == "lcl" else ["list", "show", "save"]
            )
            args.append(sub)
            if sub in ("check", "compile", "show", "save"):
                args.append(
                    target(rng) if sub != "show" else rng.choice(["x", "preset_security_review"])
                )
            if sub == "save":
                args.append(target(rng))
            opts = [("--task", _text), ("--base", lambda r: r.choice(["HEAD", "nope"])),
                    ("--diff", lambda r: r.choice([str(side / "change.diff"), str(side / "garbage.bin"), "/nonexistent"])),
                    ("--facts", None), ("--name", lambda r: r.choice(["a", ""])), ("--json", None)]  # fmt: skip
            if sub in ("check", "list"):
                opts = [("--json", None)]
        else:
            opts = [("--json", None), ("--format", lambda r: r.choice(["json", "text", "yaml"]))]
        for name, gen in rng.sample(opts, rng.randrange(0, len(opts) + 1)) if opts else []:
            args.append(name)
            if gen is not None:
                args.append(gen(rng))
        if rng.random() < 0.03:
            args.insert(rng.randrange(1, len(args) + 1), "--no-such-option")
        # the technique library needs no repository: those commands take no -C
        if cmd not in ("index", "techniques", "patterns") and args[1:2] != ["check"]:
            args += ["-C", str(root)]
        yield args


def invoke_cli(args: list[str]) -> tuple[Any, str, str]:
    """``(exit code, stdout, stderr)`` of the CLI's ``main`` run in-process with ``args``;
    an exception that escapes ``main`` (other than ``SystemExit``) propagates."""
    from codelibrarian.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    old_argv = sys.argv
    sys.argv = ["librarian", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.argv = old_argv
    return code, out.getvalue(), err.getvalue()


def run_cli_case(args: list[str]) -> Outcome:
    """Run ``main`` in-process with ``args``; check exit, stderr and budgets."""
    try:
        code, stdout, stderr = invoke_cli(args)
    except BaseException as exc:
        return Outcome("traceback", f"{args[0]}: {type(exc).__name__}: {exc}")
    if code == 70 or "Traceback" in stderr:
        return Outcome("traceback", f"{args[0]}: {(stderr or stdout).strip()[-300:]}")
    if code not in (0, None):
        return Outcome("error", f"exit {code}")
    overrun = _overrun(args, stdout)
    return Outcome("overrun", overrun) if overrun else Outcome("ok")


def _opt(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def _overrun(args: list[str], stdout: str) -> str:
    """Why a successful command's output is over its budget ("" when it is not)."""
    cmd = args[0]
    model = _opt(args, "--model") or "gpt-4o"
    count = get_tokenizer(model).count
    if cmd == "compose" and "--dry-run" not in args and "-o" not in args:
        if stdout.lstrip().startswith("{"):
            doc = json.loads(stdout)
            if doc["tokens"] > doc["budget"] or count(doc["text"]) > doc["budget"]:
                return f"compose json: {doc['tokens']} > {doc['budget']}"
        elif (raw := _opt(args, "--budget")) and raw.isdigit():
            text = stdout[:-1] if stdout.endswith("\n") else stdout
            if count(text) > int(raw) and count(text.rstrip("\n")) > int(raw):
                return f"compose text: {count(text)} > {raw}"
    if cmd == "map" and not stdout.lstrip().startswith("{"):
        budget = int(_opt(args, "--budget") or 1024)
        if count(stdout) > budget:
            return f"map: {count(stdout)} > {budget}"
    if cmd == "window" and stdout.lstrip().startswith("{"):
        doc = json.loads(stdout)
        if doc["total_tokens_used"] > doc["budget"]["total"]:
            return "window over its total"
    return ""


# ---------------------------------------------------------------------- MCP

_TOOLS: dict[str, dict[str, Any]] = {
    "compose_context": {
        "task": _text, "max_tokens": lambda r: r.choice([50, 128, 129, 600, 3000, 12000, 100_001, "9"]),
        "model": lambda r: r.choice(["gpt-4o", "claude-3-5-sonnet", "frob", None]),
        "base": lambda r: r.choice(["HEAD", "nope", None]), "files": lambda r: [_path(r, Path("/"))],
        "format": lambda r: r.choice(["markdown", "xml", "plain", "json"]), "as_of": lambda r: r.choice([AS_OF, -1, 10**20]),
        "agent_role": lambda r: r.choice(["Implementer", "x" * 60]), "budget": lambda r: 500,
    },
    "query_codebase": {
        "intent": _text, "max_tokens": lambda r: r.choice([128, 700, 3000, 20_000, 0]),
        "limit": lambda r: r.choice([1, 10, 50, 51, -1]), "depth": lambda r: r.choice(["L0", "L2", "L7"]),
        "include_code": lambda r: r.choice([True, False, "yes"]), "semantic": lambda r: False,
        "as_of": lambda r: r.choice([AS_OF, "now"]), "query": lambda r: "misnamed",
    },
    "build_context_pack": {
        "goal": _text, "agent": lambda r: r.choice(["Planner", "Implementer", "Hacker"]),
        "run_id": lambda r: r.choice(["r1", "../../x", None]), "acceptance": lambda r: [_text(r)],
        "scope": lambda r: r.choice(["Tiny", "Huge", None]), "max_tokens": lambda r: r.choice([128, 2000, 20000]),
    },
    "explain_decision": {
        "decision_id": lambda r: r.choice(["0" * 24, "../x", "", "a" * 70]),
        "max_tokens": lambda r: r.choice([128, 500, 4000]),
    },
    "index_status": {"refresh": lambda r: r.choice([True, False]), "max_tokens": lambda r: r.choice([128, 600]), "verbose": lambda r: True},
}  # fmt: skip
_REQUIRED = {"compose_context": "task", "query_codebase": "intent", "build_context_pack": "goal"}
_DEFAULTS = {
    "compose_context": 6000,
    "query_codebase": 3000,
    "build_context_pack": 4000,
    "explain_decision": 2000,
    "index_status": 600,
}


def mcp_cases(rng: random.Random, n: int) -> Iterator[tuple[str, dict[str, Any]]]:
    for _ in range(n):
        tool = rng.choice(sorted(_TOOLS))
        spec = _TOOLS[tool]
        keys = rng.sample(sorted(spec), rng.randrange(0, len(spec) + 1))
        if tool in _REQUIRED and rng.random() < 0.9 and _REQUIRED[tool] not in keys:
            keys.append(_REQUIRED[tool])
        yield tool, {k: spec[k](rng) for k in keys}


async def run_mcp_case(client: Any, root: Path, tool: str, args: dict[str, Any]) -> Outcome:
    """One tool call through the SDK client: crash, overrun, clean error or result."""
    result = await client.call_tool(tool, args)
    text = "\n".join(str(getattr(c, "text", "")) for c in result.content)
    if result.is_error:
        # the SDK's crash text is the bare prefix; ours names the exception type
        if text.strip() == f"Error executing tool {tool}" or f"{tool} failed:" in text:
            return Outcome("traceback", f"{tool}: {text[:300]}")
        if len(text) > 700 or str(root) in text:
            return Outcome("traceback", f"{tool}: long or path-bearing error: {text[:200]}")
        return Outcome("error")
    cap = args.get("max_tokens", _DEFAULTS[tool])
    model = (args.get("model") if tool != "index_status" else None) or "gpt-4o"
    if get_tokenizer(model).count(text) > cap:
        return Outcome("overrun", f"{tool}: over {cap}")
    return Outcome("ok")
