"""The compose and query options are spelled once: every shell agrees with the rows.

The rows are the requests' fields (``codelibrarian/requests.py``); the typer commands and
the quick parser are made from them, the facade's keywords and the MCP tools'
arguments are checked against them here.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codelibrarian.api import Librarian
from codelibrarian.errors import UsageError
from codelibrarian.mcp import tools
from codelibrarian.mcp.args import python_type
from codelibrarian.options import Option, OptionTable
from codelibrarian.requests import (
    COMPOSE_OPTIONS,
    DEPTHS,
    QUERY_OPTIONS,
    ComposeRequest,
    QueryRequest,
)
from codelibrarian.service.resolve import check_pack_budget, check_signals, smallest_pack
from codelibrarian.tokens import get_tokenizer

#: MCP arguments every tool has (the result's cap and the model that counts it; for
#: compose_context the model is the request's too)
MCP_ONLY = {"max_tokens", "model"}
CASES = [
    (ComposeRequest, COMPOSE_OPTIONS, Librarian.compose, tools.compose_context, {"progress"}),
    (QueryRequest, QUERY_OPTIONS, Librarian.query, tools.query_codebase, {"reporter", "cancel"}),
]


@pytest.mark.parametrize(("request_cls", "table", "api", "tool", "api_extra"), CASES)
def test_every_field_is_a_row_and_the_facade_takes_the_api_rows(
    request_cls: type, table: OptionTable, api: Any, tool: Any, api_extra: set[str]
) -> None:
    fields = dataclasses.fields(request_cls)
    assert table.names() == tuple(f.name for f in fields)
    params = inspect.signature(api).parameters
    keywords = {n: p for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    api_rows = {row.name: row for row in table if row.api and not row.required}
    assert set(keywords) - api_extra == set(api_rows)
    for name, row in api_rows.items():
        default = keywords[name].default
        assert default == row.default or (default == () and row.default == frozenset()), name
    (positional,) = (r for r in table if r.required)
    assert next(iter(params)) == "self" and list(params)[1] == positional.name


@pytest.mark.parametrize(("request_cls", "table", "api", "tool", "api_extra"), CASES)
def test_mcp_arguments_are_the_mcp_rows(
    request_cls: type, table: OptionTable, api: Any, tool: Any, api_extra: set[str]
) -> None:
    hints = typing.get_type_hints(tool, localns={"Librarian": object}, include_extras=True)
    params = {n: p for n, p in inspect.signature(tool).parameters.items() if n != "lib"}
    by_mcp = {row.mcp: row for row in table if row.mcp}
    assert set(params) - MCP_ONLY == set(by_mcp) - MCP_ONLY
    for name, row in by_mcp.items():
        base, *meta = typing.get_args(hints[name])
        field = next(m for m in meta if hasattr(m, "description"))
        assert field.description == row.help, name
        expected = python_type(row)
        if params[name].default is not None and typing.get_args(expected):
            expected = typing.get_args(expected)[0]  # a default of the tool's own
        if row.kind == "texts":  # each item carries the tool's limits
            assert typing.get_origin(base) is tuple, name
        else:
            assert base == expected, name


def test_tokenizer_argument_of_every_tool_reads_the_model_row() -> None:
    assert typing.get_args(tools.ModelArg)[1].description == COMPOSE_OPTIONS["model"].help


def _click_params(module: str, name: str) -> dict[str, Any]:
    import typer.main

    from codelibrarian.cli.app import build_app

    command = typer.main.get_command(build_app((module,)))
    return {p.name: p for p in command.get_command(None, name).params}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("module", "name", "rows"),
    [
        ("compose_cmds", "compose", "codelibrarian.cli.compose_run:COMPOSE_CLI"),
        ("query_cmds", "query", "codelibrarian.cli.query_cmds:QUERY_CLI"),
    ],
)
def test_typer_commands_are_made_of_the_rows(module: str, name: str, rows: str) -> None:
    import importlib

    path, _, attr = rows.partition(":")
    table: tuple[Option, ...] = getattr(importlib.import_module(path), attr)
    params = _click_params(module, name)
    assert [p for p in params if p != "help"] == [row.name for row in table]
    for row in table:
        param = params[row.name]
        assert row.help in (param.help or ""), row.name
        if not row.argument:
            spelled = [*param.opts, *param.secondary_opts]
            assert spelled == [s for f in row.flags for s in f.split("/")], row.name


def test_the_quick_parser_knows_every_spelling_of_compose() -> None:
    from codelibrarian.cli.compose_run import COMPOSE_CLI, parse_compose

    for row in COMPOSE_CLI:
        for flag in row.flags:
            argv = ["compose", "the task", flag] + ([] if row.kind == "flag" else ["7"])
            parsed = parse_compose(argv)
            assert parsed is not None, flag
            assert row.name in parsed, flag


def test_every_shell_spelled_option_is_on_the_cli_or_the_api() -> None:
    # an option that no shell offers would be a field nobody can set
    for table in (COMPOSE_OPTIONS, QUERY_OPTIONS):
        for row in table:
            assert row.flags or row.argument or row.api or row.mcp or row.name == "lanes"


def test_depths_match_the_pipeline() -> None:
    from codelibrarian.query.types import DEPTHS as PIPELINE_DEPTHS

    assert DEPTHS == PIPELINE_DEPTHS


def test_the_smallest_pack_is_a_real_lower_bound() -> None:
    # a budget of the smallest pack passes; one token less is refused, and the
    # message names the smallest budget
    from codelibrarian.composer.render import render_block
    from codelibrarian.composer.types import Candidate

    for model in ("gpt-4o", "gpt-4", "claude-sonnet-4", "frobnicator-9"):
        tok = get_tokenizer(model)
        for fmt in ("markdown", "xml", "plain", "json"):
            floor = smallest_pack(fmt, tok)
            assert 0 < floor < 64
            check_pack_budget(floor, fmt, tok)
            with pytest.raises(UsageError, match=f"at least {floor} tokens"):
                check_pack_budget(floor - 1, fmt, tok)
            # a realistic block (a path, a kind, a line range) is larger
            real = Candidate(
                id="b", kind="symbol_context", lane="retrieved", token_estimate=1,
                title="src/app/x.py", lines=(3, 9),
            )  # fmt: skip
            block = render_block(real, "def f():", "markdown" if fmt == "json" else fmt)  # type: ignore[arg-type]
            assert tok.count(block) >= floor


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**13),
    st.text(max_size=8),
    st.lists(st.text(max_size=4), max_size=3),
    st.floats(allow_nan=False),
    st.just(b"bytes"),
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from([r.name for r in COMPOSE_OPTIONS if r.name != "signals_off"]),
    value=_VALUES,
)
def test_any_bad_value_is_a_usage_error_and_a_good_one_is_kept(name: str, value: Any) -> None:
    kwargs = {} if name == "task" else {"task": "fix the retry loop"}
    try:
        made = ComposeRequest(**{**kwargs, name: value})
    except UsageError as exc:
        assert exc.message and str(exc)
        return
    kept = getattr(made, name)
    row = COMPOSE_OPTIONS[name]
    if value is None:
        assert kept is None
    elif row.kind == "texts":
        assert kept == tuple(value)
    elif name == "task":
        assert kept == value.strip()
    else:
        assert kept == value and type(kept) is type(value)


def test_requests_are_frozen_and_normalised() -> None:
    req = ComposeRequest("  fix it  ", files=["a.py", "b.py"], signals_off=["commits"])
    assert req.task == "fix it" and req.files == ("a.py", "b.py")
    assert req.signals_off == frozenset({"commits"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.task = "other"  # type: ignore[misc]
    assert dataclasses.replace(req, budget=900).budget == 900
    with pytest.raises(UsageError, match="the budget must be"):
        dataclasses.replace(req, budget=0)


def test_unknown_signal_names_the_known_ones() -> None:
    from codelibrarian.query.locate import SIGNALS

    with pytest.raises(UsageError) as caught:
        check_signals(ComposeRequest("x", signals_off={"commits", "nope"}).signals_off)
    assert "nope" in caught.value.message and "commits" not in caught.value.message
    assert all(s in (caught.value.hint or "") for s in SIGNALS)


def test_paths_are_the_clis_own() -> None:
    # a path is read by the CLI (--diff, --output, --repo); requests hold values
    assert all(row.kind != "path" for t in (COMPOSE_OPTIONS, QUERY_OPTIONS) for row in t)
