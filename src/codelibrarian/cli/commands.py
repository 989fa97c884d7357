"""Which module defines each ``librarian`` command, and its one-line summary.

Plain data, so that starting the CLI reads this table instead of importing every
command module: ``librarian compose ...`` imports ``compose_cmds`` only, and
``librarian --help`` / ``--version`` import nothing but this file.
``tests/cli/test_startup_imports.py`` checks that the table names every command
the modules register, with the summary their docstrings give.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "DAEMON_COMMANDS", "MODULES", "module_for"]

#: ``(name, module in codelibrarian.cli, summary)``, in the order ``--help`` lists them
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("init", "workspace_cmds", "Create the .librarian/ state folder (idempotent) and check the config."),
    ("doctor", "workspace_cmds", "Check Python, packages, tokenizers, grammars, SQLite, config, git, state and index."),
    ("scan", "workspace_cmds", "Summarise the files the librarian reads: by language, total size, skips by reason."),
    ("tokens", "workspace_cmds", "Count tokens per file for the repository's files (largest first) and in total."),
    ("window", "window_cmds", "Compose a sliding window: goal, then map, then recent past (newest first)."),
    ("compose", "compose_cmds", "Compose a context pack for TASK under a hard token budget."),
    ("explain", "compose_cmds", "Explain a recorded decision: lanes, verdicts with reasons, redactions, locate stages."),
    ("replay", "compose_cmds", "Re-run a recorded decision without cache: identical, inputs changed, or diverged."),
    ("query", "query_cmds", "Ranked files with citations for an intent, with per-stage diagnostics."),
    ("index", "index_cmds", "Build or update the index (symbols, references, imports, chunks, graphs)."),
    ("map", "index_cmds", "Print the ranked repository map (top files and their signatures) under a budget."),
    ("pack", "pack_cmds", "Build an agent's Local Context Pack under its scope and capability budget."),
    ("handoff", "pack_cmds", "Write a handoff package from one agent to another in a run."),
    ("plan", "planning_cmds", "Plan the workflow for INTENT on this repository, and say why."),
    ("advise", "planning_cmds", "Find the codebase's features (auth, api, database ...) and suggest workflows."),
    ("serve", "serve_cmds", "Serve the MCP tools and run resources for the repository (see docs/mcp.md)."),
    ("providers", "providers_cmds", "Discover LLM providers, check them, and qualify models."),
    ("violations", "compose_cmds", "Record and list violations (the policy lane brings them back)."),
    ("vitals", "compose_cmds", "Workspace vitals: pressure, pulse, oxygen."),
    ("runs", "pack_cmds", "Runs: workflow runs, their packs, handoffs and journal."),
    ("techniques", "techniques_cmds", "Browse the technique library: primitives, operators, compositions, templates."),
    ("patterns", "techniques_cmds", "Browse the pattern catalog: when to use which techniques, and how."),
    ("lcl", "lcl_cmds", "Check and compile LCL programs (the Librarian Configuration Language)."),
    ("presets", "lcl_cmds", "Named LCL programs: built in, in librarian.toml, or saved in .librarian/presets/."),
    ("evolve", "planning_cmds", "Learn workflows from finished runs; nothing changes without approval."),
)  # fmt: skip

#: every command module, in registration order (typer lists plain commands first, then
#: groups, each in this order: the order of ``COMMANDS``)
MODULES: tuple[str, ...] = (
    "workspace_cmds",  # init, doctor, scan, tokens
    "window_cmds",  # window
    "providers_cmds",  # providers list | check | qualify
    "compose_cmds",  # compose, explain, replay, violations, vitals
    "query_cmds",  # query
    "index_cmds",  # index, map
    "pack_cmds",  # pack, handoff, runs list | show (+ workflow_cmds: runs start | next | ...)
    "techniques_cmds",  # techniques list | show, patterns list | show
    "lcl_cmds",  # lcl check | compile | facts, presets list | show | save
    "planning_cmds",  # plan, advise, evolve [approve | reject]
    "serve_cmds",  # serve (MCP server)
)

#: commands a running resident server (``librarian serve --daemon``) can answer
DAEMON_COMMANDS: frozenset[str] = frozenset({"compose", "query", "map", "explain", "window"})

_BY_NAME = {name: module for name, module, _ in COMMANDS}


def module_for(name: str) -> str | None:
    """The module defining command ``name``, or None for an unknown name."""
    return _BY_NAME.get(name)
