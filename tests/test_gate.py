"""The secret gate: whole-file aware redaction, diffs, structures, decisions."""

from __future__ import annotations

import base64
import json
import random

from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.gate import RedactionLog, SecretGate
from codelibrarian.workspace.secrets import scan_text

RNG = random.Random(7)
BODY = base64.b64encode(RNG.randbytes(480)).decode()
PEM_LINES = [BODY[i : i + 64] for i in range(0, len(BODY), 64)]
PGP = (
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
    + "\n".join(PEM_LINES)
    + ("\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----")
)
DOC = f"# Signing\n\nImport the key:\n\n```\n{PGP}\n```\n\nThen release.\n"
TOKEN = "ghp_" + "".join(RNG.choice("abcdefghijkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(36))


def test_an_excerpt_is_checked_against_its_whole_file() -> None:
    gate = SecretGate()
    line = PEM_LINES[3]
    assert scan_text(line) == ()  # alone, one body line does not look like a key
    log = RedactionLog()
    clean = gate.clean(f"│{line}\n", surface="pack", source=DOC, log=log)
    assert line not in clean and "[REDACTED:private_key]" in clean
    assert log.summary()["spans"] == 1


def test_a_token_cut_short_is_still_redacted() -> None:
    source = f'TOKEN = "{TOKEN}"\n'
    cut = f'TOKEN = "{TOKEN[:20]}...'  # a signature clipped at a character limit
    assert TOKEN[4:20] not in SecretGate().clean(cut, surface="map", source=source)


def test_runs_outside_secrets_are_left_alone() -> None:
    source = f'import os\nTOKEN = "{TOKEN}"\ndef main():\n    return os.getcwd()\n'
    excerpt = "def main():\n    return os.getcwd()\n"
    assert SecretGate().clean(excerpt, surface="pack", source=source) == excerpt


def test_quoted_files_are_all_consulted() -> None:
    other = f'KEY = "{TOKEN}"\n'
    text = f"a.py:\n│{PEM_LINES[0]}\nb.py:\n│{TOKEN[:24]}\n"
    clean = SecretGate().clean(text, surface="pack", sources=[DOC, other])
    assert PEM_LINES[0] not in clean and TOKEN[4:24] not in clean


DIFF = (
    "diff --git a/.env b/.env\nindex 1..2 100644\n--- a/.env\n+++ b/.env\n"
    "@@ -1,2 +1,3 @@ PASSWORD=hunter2-is-not-a-Great9\n DEBUG=1\n-OLD=x\n+NEW=y\n+Z=w\n"
    f"diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1,2 @@\n x = 1\n"
    f'+TOKEN = "{TOKEN}"\n'
)


def test_a_diff_withholds_sensitive_files_and_keeps_its_shape() -> None:
    log = RedactionLog()
    clean = SecretGate().clean_diff(DIFF, surface="trigger", log=log)
    assert "hunter2" not in clean and "NEW=y" not in clean and TOKEN not in clean
    assert clean.count("\n") == DIFF.count("\n")
    assert "@@ -1,2 +1,3 @@\n" in clean  # the header's file line is gone
    assert "+[REDACTED:sensitive_file]" in clean and "-[REDACTED:sensitive_file]" in clean
    assert "x = 1" in clean
    summary = log.summary()
    assert summary["withheld"] == 1 and summary["rules"] == {"env_file": 1, "github_token": 1}


def test_a_plain_diff_is_split_per_file() -> None:
    plain = (
        "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x\n+y\n"
        "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-A=1\n+A=2\n"
    )
    clean = SecretGate().clean_diff(plain, surface="trigger")
    assert "+y" in clean and "A=2" not in clean


def test_clean_value_walks_keys_and_values_and_records_no_secret() -> None:
    doc = {"notes": [f"use {TOKEN}"], TOKEN: 1, "n": 3, "nested": {"t": (TOKEN,)}}
    log = RedactionLog()
    clean = SecretGate().clean_value(doc, surface="mcp", kind="document", id="x1", log=log)
    assert TOKEN not in json.dumps(clean, default=list)
    assert clean["n"] == 3
    (decision,) = log.decisions
    assert decision.spans == 3 and decision.id == "x1"
    assert TOKEN not in json.dumps(decision.to_dict())


def test_paths_and_scanning_switch() -> None:
    gate = SecretGate(sensitive_patterns=["ops/vault*"], scan=False)
    assert gate.sensitive_rule("ops/vault.yaml") == "custom:ops/vault*"
    assert gate.sensitive_rule(".librarian/decisions/x.json") is None
    log = RedactionLog()
    assert not gate.admit("deploy/.env", log=log, surface="query")
    assert log.summary()["withheld"] == 1
    assert gate.clean(f"x = '{TOKEN}'", surface="pack") == f"x = '{TOKEN}'"  # scan off


@given(st.text(max_size=200), st.sampled_from(["", TOKEN, PEM_LINES[1], "sk_live_abc"]))
def test_cleaning_is_idempotent(text: str, extra: str) -> None:
    gate = SecretGate()
    once = gate.clean(text + extra, surface="x", source=DOC)
    assert gate.clean(once, surface="x", source=DOC) == once
