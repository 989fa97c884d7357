from __future__ import annotations

import warnings

import pytest

from codelibrarian.tokens import Tokenizer, get_tokenizer


def _warm(tokenizer: Tokenizer) -> Tokenizer:
    # bpe-openai 0.1.4 calls the deprecated importlib.resources.open_binary on first
    # use; load the encoding once here so filterwarnings=error does not trip on it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tokenizer.count("warm up")
    return tokenizer


@pytest.fixture(scope="session")
def tok() -> Tokenizer:
    return _warm(get_tokenizer("gpt-4o"))
