"""MCP tool results against their token caps: a sweep of ``max_tokens`` per tool.

    python benchmarks/bench_mcp.py --repo PATH [--task TEXT] [--intent TEXT]

Runs the real server in process (``build_server``) through the mcp SDK's own
client, calls every tool at caps from 128 to 6000 tokens with a fixed ``as_of``,
and counts each result with the o200k tokenizer. Prints one row per tool (``cap:
tokens``, ``*`` when the result was shrunk) and a summary line: calls, tool
errors, results over their cap (must be 0) and the largest used/cap ratio. Also
prints the size of the ``tools/list`` answer, which every client loads once.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
from mcp.types import CallToolResult, TextContent

from codelibrarian.mcp import build_server
from codelibrarian.tokens import get_tokenizer
from mcp import Client

CAPS = (128, 160, 200, 256, 320, 400, 512, 700, 1000, 1500, 2500, 4000, 6000)
AS_OF = 1_800_000_000


def _text(result: CallToolResult) -> str:
    """A tool result's text (every tool answers with one text block)."""
    block = result.content[0]
    if not isinstance(block, TextContent):
        raise SystemExit(f"a tool answered with a {type(block).__name__}, not text")
    return block.text


async def sweep(repo: Path, task: str, intent: str) -> dict[str, Any]:
    tok = get_tokenizer("gpt-4o")
    out: dict[str, Any] = {"rows": {}}
    async with Client(build_server(repo, log_level=30)) as client:
        tools = await client.list_tools()
        listing = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]
        out["tools_list_tokens"] = tok.count(json.dumps(listing))
        first = await client.call_tool("compose_context", {"task": task, "as_of": AS_OF})
        decision = json.loads(_text(first))["decision_id"]
        calls: dict[str, dict[str, Any]] = {
            "compose_context": {"task": task, "as_of": AS_OF},
            "query_codebase": {"intent": intent, "semantic": False, "as_of": AS_OF},
            "explain_decision": {"decision_id": decision},
            "index_status": {},
            "build_context_pack": {"goal": task, "agent": "Implementer"},
        }
        calls_made = errors = over = 0
        worst = 0.0
        for name, args in calls.items():
            row = []
            for cap in CAPS:
                result = await client.call_tool(name, {**args, "max_tokens": cap})
                text = _text(result)
                used = tok.count(text)
                calls_made += 1
                over += used > cap
                worst = max(worst, used / cap)
                if result.is_error:
                    errors += 1
                    row.append(f"{cap}:error({used})")
                    continue
                cut = "*" if "truncated" in json.loads(text) else ""
                row.append(f"{cap}:{used}{cut}")
            out["rows"][name] = row
        out.update(calls=calls_made, errors=errors, over_cap=over, max_used_over_cap=worst)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="an indexed repository")
    parser.add_argument("--task", default="add a post method with retry backoff to HttpClient")
    parser.add_argument("--intent", default="retry backoff http client settings")
    ns = parser.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
    result = anyio.run(sweep, ns.repo.resolve(), ns.task, ns.intent)
    print(f"tools/list: {result['tools_list_tokens']} tokens")
    for name, row in result["rows"].items():
        print(f"{name:20} {' '.join(row)}")
    print(
        f"calls={result['calls']} errors={result['errors']} over_cap={result['over_cap']} "
        f"max used/cap={result['max_used_over_cap']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
