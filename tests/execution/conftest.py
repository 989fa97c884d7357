"""Fixtures for shell tests: a library with the test plugin, a fake model, a real repo."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from codelibrarian.execution.models import ModelAccess
from codelibrarian.providers.capabilities import CAPABILITIES, ModelProfile
from codelibrarian.providers.fake import FakeProvider, example_for_schema
from codelibrarian.providers.registry import ProviderRegistry
from tests.helpers import make_repo

from .library import LIBRARY, executors

ROOT = Path(__file__).resolve().parents[2]

BUGGY_FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": (
        '"""Arithmetic helpers."""\n\n\n'
        "def add(a, b):\n"
        '    """Return the sum of a and b."""\n'
        "    return a - b\n\n\n"
        "def mul(a, b):\n"
        "    return a * b\n"
    ),
    "calc/cli.py": "from calc.ops import add\n\n\ndef main():\n    print(add(2, 3))\n",
    "tests/test_ops.py": (
        "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
    "README.md": "# calc\n\nA tiny calculator: `calc.ops.add` adds two numbers.\n",
}


def fake_access(
    answer: Callable[[str, Mapping[str, Any]], Mapping[str, Any]] | None = None,
    calls: list[str] | None = None,
) -> Callable[[str | None], ModelAccess]:
    """A ModelAccess over a FakeProvider whose model can do everything."""

    def responder(messages: Sequence[Any], schema: Mapping[str, Any] | None) -> str:
        user = next(m.content for m in messages if m.role == "user")
        if calls is not None:
            calls.append(user)
        value = dict(example_for_schema(schema or {"type": "object"}))  # type: ignore[arg-type]
        if answer is not None:
            value.update(answer(user, schema or {}))
        return json.dumps(value)

    def make(provider: str | None) -> ModelAccess:
        registry = ProviderRegistry(env={})
        registry.register(FakeProvider(responder=responder))
        profile = ModelProfile("fake-model", "fake", frozenset(CAPABILITIES), 200_000, 10)
        return ModelAccess(registry, (profile,), provider)

    return make


@pytest.fixture
def buggy_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", BUGGY_FILES)


def plugin_site(tmp: Path) -> Path:
    """The test plugin installed as a package (a real .dist-info) for subprocesses."""
    site = tmp / "site"
    pkg = site / "steps_plugin"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(
        (Path(__file__).parent / "plugin_steps.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    info = site / "steps_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: steps-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[codelibrarian.primitives]\nsteps = steps_plugin:primitives\n\n"
        "[codelibrarian.executors]\nsteps = steps_plugin:executors\n"
    )
    return site


def subprocess_env(site: Path, **extra: str) -> dict[str, str]:
    from tests.helpers import GIT_ENV

    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "NO_COLOR": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT / "src"), str(ROOT)])
    env.pop("LIBRARIAN_LLM_PROVIDER", None)
    env.update(extra)
    return env


PY = sys.executable


def make_service(
    repo: Path,
    *,
    answer: Callable[[str, Mapping[str, Any]], Mapping[str, Any]] | None = None,
    calls: list[str] | None = None,
    **kwargs: Any,
) -> Any:
    """An ExecutionService over ``repo`` with the test library, executors and fake model."""
    from codelibrarian.execution.service import ExecutionService
    from codelibrarian.service.compose import ComposeService
    from codelibrarian.service.workspace import WorkspaceSession

    ws = WorkspaceSession(repo)
    return ExecutionService(
        ws,
        ComposeService(ws),
        library=LIBRARY,
        executors=executors(),
        model_access=fake_access(answer, calls),
        **kwargs,
    )
