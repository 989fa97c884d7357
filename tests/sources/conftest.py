from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codelibrarian.config import Config
from codelibrarian.sources import SourceContext
from codelibrarian.tokens import get_tokenizer
from codelibrarian.trigger import Trigger
from codelibrarian.workspace.git import working_diff
from codelibrarian.workspace.state import State
from tests.sources.repo_fixture import AS_OF, warm_tokenizers


@pytest.fixture(autouse=True, scope="session")
def _warm() -> None:
    warm_tokenizers()


MakeCtx = Callable[..., SourceContext]


@pytest.fixture
def make_ctx() -> MakeCtx:
    """A SourceContext over a repository, without an index (store=None)."""

    def _make(
        root: Path,
        task: str = "add retry backoff",
        *,
        config: Config | None = None,
        files: tuple[str, ...] = (),
        budget: int = 8000,
        as_of: int = AS_OF,
    ) -> SourceContext:
        state = State(root).ensure()
        listing = tuple(
            sorted(
                p.relative_to(root).as_posix()
                for p in root.rglob("*")
                if p.is_file() and ".git" not in p.parts and ".librarian" not in p.parts
            )
        )
        return SourceContext(
            root=root,
            config=config or Config(),
            trigger=Trigger.create(task, as_of=as_of, files=files),
            tokenizer=get_tokenizer("gpt-4o"),
            secret=state.secret(),
            state=state,
            changes=working_diff(root),
            files=listing,
            budget=budget,
        )

    return _make
