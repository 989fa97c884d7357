"""Fixtures for the Local Context Pack tests: a real git repository with a change."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from codelibrarian.api import Librarian
from codelibrarian.workspace.state import State
from tests.sources.repo_fixture import build_repo, warm_tokenizers

TASK = "add a post method with retry backoff to HttpClient"
CRITERIA = ("post sends the body to the server", "every retry uses backoff")
#: a fixed workspace secret, so everything derived from it is stable
SECRET = bytes(range(32))


@pytest.fixture(autouse=True, scope="session")
def _warm() -> None:
    warm_tokenizers()


def fix_secret(root: Path) -> None:
    state = State(root).ensure()
    state.secret_path.write_bytes(SECRET)
    os.chmod(state.secret_path, 0o600)


def fresh_repo(root: Path) -> Path:
    build_repo(root)
    fix_secret(root)
    return root


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository per test module (packs may be added to it, never edited)."""
    return fresh_repo(tmp_path_factory.mktemp("packs") / "repo")


@pytest.fixture(scope="module")
def shared_lib(shared_repo: Path) -> Iterator[Librarian]:
    with Librarian(shared_repo) as lib:
        yield lib


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository of the test's own (free to edit)."""
    return fresh_repo(tmp_path / "repo")
