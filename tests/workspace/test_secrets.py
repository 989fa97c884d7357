"""Secret detection: one test per rule family, placeholders, redaction, paths.

Fake values are generated from a seeded RNG at test time, so this file holds no
string that a secret scanner would (rightly) complain about.
"""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import random
import re
import string
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.workspace.secrets import (
    DEFAULT_SENSITIVE_PATTERNS,
    SECRET_RULES,
    SecretFinding,
    is_sensitive_path,
    redact,
    scan_text,
)

RNG = random.Random(4242)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def pem(label: str) -> str:
    body = base64.b64encode(bytes(RNG.getrandbits(8) for _ in range(300))).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


def b64url_json(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def jwt() -> str:
    head = b64url_json({"alg": "HS256", "typ": "JWT"})
    return f"{head}.{b64url_json({'sub': rand(HEX, 10), 'iat': 1700000000})}.{rand(B64URL, 43)}"


PW = "Zq8" + rand(ALNUM, 9)
_GH = "ghp_" + rand(ALNUM, 36)
_RSA = pem("RSA PRIVATE KEY")
_GCP_PEM = pem("PRIVATE KEY").replace("\n", "\\n")

# (expected rule, text, the secret that must be covered)
CASES: list[tuple[str, str, str]] = []


def case(rule: str, template: str, secret: str) -> None:
    CASES.append((rule, template.format(s=secret), secret))


case(
    "aws_access_key_id",
    "aws_access_key_id = {s}\n",
    "AKIA" + rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
)
case("aws_access_key_id", 'key: "{s}"', "ASIA" + rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16))
case("aws_secret_access_key", 'AWS_SECRET_ACCESS_KEY="{s}"\n', rand(B64, 40))
case("aws_secret_access_key", "aws_secret_access_key = {s}\n", rand(B64, 40))
case("github_token", "GITHUB_TOKEN={s}\n", _GH)
case("github_token", "token: {s}", "gho_" + rand(ALNUM, 36))
case("github_token", "export GH={s}", "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59))
case("gitlab_token", "CI_TOKEN='{s}'", "glpat-" + rand(B64URL, 20))
case(
    "slack_token",
    "slack = '{s}'",
    "xoxb-" + rand("0123456789", 12) + "-" + rand("0123456789", 13) + "-" + rand(ALNUM, 24),
)
case(
    "slack_webhook",
    "url: {s}\n",
    "https://hooks.slack.com/services/"
    + f"T{rand('ABCDEFGH2345', 8)}/B{rand('ABCDEFGH2345', 10)}/{rand(ALNUM, 24)}",
)
case("stripe_key", "stripe.api_key = '{s}'", "sk_live_" + rand(ALNUM, 24))
case("stripe_key", "STRIPE={s}", "rk_live_" + rand(ALNUM, 30))
case("google_api_key", "const key = '{s}';", "AIza" + rand(B64URL, 35))
case("gcp_service_account_key", '{{"type": "service_account", "private_key": "{s}"}}', _GCP_PEM)
case(
    "azure_storage_key",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net",
    rand(B64, 86) + "==",
)
case(
    "azure_shared_access_key",
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={s}",
    rand(B64, 43) + "=",
)
case(
    "azure_sas_token",
    "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&sig={s}",
    rand(ALNUM, 40) + "%3D",
)
case("private_key", "{s}\n", _RSA)
case("private_key", 'KEY = """{s}"""\n', pem("OPENSSH PRIVATE KEY"))
case("private_key", "{s}", pem("EC PRIVATE KEY"))
case("private_key", "{s}", pem("DSA PRIVATE KEY"))
case("private_key", "{s}", pem("ENCRYPTED PRIVATE KEY"))
case("private_key", "{s}", pem("PGP PRIVATE KEY BLOCK"))
case("jwt", "Authorization = '{s}'", jwt())
case("connection_string_password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", PW)
case(
    "connection_string_password",
    'uri = "mongodb+srv://svc:{s}@cluster0.abcde.mongodb.net/db"',
    "Mg" + PW,
)
case("connection_string_password", "url: mysql://root:{s}@10.0.0.5/shop", "My" + PW)
case("connection_string_password", "REDIS_URL=redis://default:{s}@cache:6379/0", "Rd" + PW)
case("connection_string_password", "BROKER=amqp://worker:{s}@mq.prod.svc:5672//", "Am" + PW)
case("url_basic_auth", 'git clone "https://deploy:{s}@git.corp.net/repo.git"', "Gt" + PW)
case("npm_token", "//registry.npmjs.org/:_authToken={s}\n", "npm_" + rand(ALNUM, 36))
case("pypi_token", "password = {s}\n", "pypi-AgEIcHlwaS5vcmc" + rand(B64URL, 70))
case("twilio_api_key", "TWILIO_KEY={s}", "SK" + rand(HEX, 32))
case("twilio_auth_token", "TWILIO_AUTH_TOKEN={s}", rand(HEX, 32))
case("sendgrid_api_key", "SENDGRID = '{s}'", "SG." + rand(B64URL, 22) + "." + rand(B64URL, 43))
case("openai_api_key", 'OPENAI_API_KEY="{s}"', "sk-proj-" + rand(B64URL, 74))
case("openai_api_key", "key = {s}", "sk-" + rand(ALNUM, 20) + "T3BlbkFJ" + rand(ALNUM, 20))
case("anthropic_api_key", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + rand(B64URL, 93) + "AA")
case("huggingface_token", "HF_TOKEN={s}", "hf_" + rand(string.ascii_letters, 34))
case(
    "discord_bot_token",
    "client.run('{s}')  # discord bot",
    "M" + rand(B64URL, 23) + "." + rand(B64URL, 6) + "." + rand(B64URL, 27),
)
case(
    "discord_webhook",
    "hook = '{s}'",
    f"https://discord.com/api/webhooks/{rand('0123456789', 18)}/{rand(B64URL, 68)}",
)
case(
    "telegram_bot_token",
    "TELEGRAM_BOT_TOKEN={s}",
    "1" + rand("0123456789", 9) + ":AA" + rand(B64URL, 33),
)
case("mailgun_api_key", "MAILGUN_KEY={s}", "key-" + rand(HEX, 32))
case("shopify_token", "SHOPIFY={s}", "shpat_" + rand(HEX, 32))
case("square_token", "SQUARE={s}", "sq0atp-" + rand(B64URL, 22))
case("square_token", "SQUARE={s}", "EAAA" + rand(B64URL, 60))
case(
    "heroku_api_key",
    "HEROKU_API_KEY={s}",
    f"{rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)}",
)
case("heroku_api_key", "HEROKU={s}", "HRKU-" + rand(B64URL, 60))
case("bearer_token", "curl -H 'Authorization: Bearer {s}' https://api", rand(B64URL, 40))
case("generic_password", 'DB_PASSWORD = "{s}"', "Pw" + PW)
case("generic_password", "password: {s}\n", "Yp" + PW)
case("generic_secret", '  - name: APP_SECRET\n    value: "{s}"\n', rand(ALNUM, 32))
case("generic_secret", '{{"api_key": "{s}"}}', rand(ALNUM, 32))
case("generic_secret", "client_secret={s}\n", rand(ALNUM, 28) + "42")
case("generic_password", "  password: {s}\n", base64.b64encode(rand(ALNUM, 14).encode()).decode())


@pytest.mark.parametrize(
    ("rule", "text", "secret"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_each_rule_family_is_found_and_fully_redacted(rule: str, text: str, secret: str) -> None:
    findings = scan_text(text)
    start = text.index(secret)
    covering = [f for f in findings if f.start <= start and f.end >= start + len(secret)]
    assert covering, f"{rule} not found in {text!r}: {findings}"
    assert covering[0].rule == rule
    out = redact(text, findings)
    assert f"[REDACTED:{rule}]" in out
    # no part of the secret survives: not its prefix, not its end
    bare = re.sub(r"\[REDACTED:[a-z_]+\]", "", out)
    assert secret[:6] not in bare
    assert secret[-6:] not in bare


def test_every_rule_family_has_a_case() -> None:
    assert {c[0] for c in CASES} == set(SECRET_RULES)


@pytest.mark.parametrize(
    "text",
    [
        "password = 'changeme'",
        'password = "<your-password>"',
        "API_TOKEN=${API_TOKEN}",
        "token = os.environ['GITHUB_TOKEN']",
        "secret = os.getenv('SECRET_KEY')",
        "const key = process.env.API_KEY;",
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "password: '{{ vault_db_password }}'",
        "db_password = 'dummy-password-123'",
        "token = 'aaaaaaaaaaaaaaaaaaaaaaaa'",
        "SECRET_KEY=",
        "secret_key = settings.SECRET_KEY",
        "password = self._password",
        "token = tokenize.generate_tokens(readline)",
        "session_token: str | None = None",
        'INCORRECT_PASSWORD = "Incorrect"',
        'model = Model(password="IAmSensitive")',
        "request_id = '3f1c2a9e-5b7d-4c8e-9a1f-2d3e4f5a6b7c'",
        '"integrity": "sha512-Nbw0HOUQq0yqS/2cDXwjgpIqX+jJHFExGW0y3g4ABLBl6w/'
        + 'X2nL3/Tr7Q6ST1dy6oa3w=="',
        "token_hash = e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "url = 'postgres://user:password@localhost/db'",
        "url = 'https://user:pass@www.python.org/'",
        "url = 'postgres://app:%s@%s/db' % (pw, host)",
        "DSN = 'mysql://app:{password}@db/app'",
        "ftp://joe:secret@ftp.example.com/",
        "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----",
        "if line.startswith('-----BEGIN PRIVATE KEY-----'):",
        "token_type = 'bearer'",
        "password_field = 'password1234'",
        "Authorization: Bearer <token>",
        "key = 'sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc'",
        "  password: " + base64.b64encode(b"password").decode(),  # Kubernetes Secret data
        "  apiPassword: " + base64.b64encode(b"storageos").decode(),
    ],
)
def test_placeholders_and_code_are_not_secrets(text: str) -> None:
    assert scan_text(text) == ()


def test_findings_are_sorted_with_lines_and_non_overlapping() -> None:
    text = (
        f"# config\nGITHUB_TOKEN={_GH}\nDEBUG=1\nDATABASE_URL=postgres://app:{PW}@db/app\n{_RSA}\n"
    )
    findings = scan_text(text)
    assert [f.rule for f in findings] == [
        "github_token",
        "connection_string_password",
        "private_key",
    ]
    assert [f.line for f in findings] == [2, 4, 5]
    assert list(findings) == sorted(findings, key=lambda f: (f.start, f.end))
    for a, b in itertools.pairwise(findings):
        assert a.end <= b.start
    for f in findings:
        assert text.count("\n", 0, f.start) + 1 == f.line
    with pytest.raises(AttributeError):
        findings[0].rule = "x"  # type: ignore[misc]


def test_gcp_json_and_private_key_overlap_merge_into_one_span() -> None:
    text = '{"private_key": "' + _GCP_PEM + '\\n", "client_email": "a@b.iam.gserviceaccount.com"}'
    findings = scan_text(text)
    assert len(findings) == 1
    assert findings[0].rule == "gcp_service_account_key"
    assert "BEGIN" not in redact(text, findings)


def test_truncated_private_key_block_is_still_caught() -> None:
    block = _RSA.rsplit("-----END", 1)[0]  # END line lost (e.g. a chunk boundary)
    text = "key = '''\n" + block + "'''\n"
    (finding,) = scan_text(text)
    assert finding.rule == "private_key"
    assert block.strip()[40:80] not in redact(text, (finding,))


def test_redact_merges_overlaps_and_accepts_unsorted_input() -> None:
    text = "0123456789abcdef"
    findings = [
        SecretFinding("b", 8, 12, 1),
        SecretFinding("a", 2, 6, 1),
        SecretFinding("c", 5, 9, 1),
    ]
    assert redact(text, findings) == "01[REDACTED:a]cdef"
    assert redact(text, []) == text
    assert redact(text, [SecretFinding("z", 3, 3, 1)]) == text


def test_telegram_span_includes_the_bot_id() -> None:
    token = "7" + rand("0123456789", 9) + ":AA" + rand(B64URL, 33)
    text = f"bot = '{token}'"
    assert redact(text, scan_text(text)) == "bot = '[REDACTED:telegram_bot_token]'"


def test_non_ascii_text_keeps_offsets_aligned() -> None:
    text = f"# İstanbul ß ﬁ café\nGITHUB_TOKEN={_GH}\n"
    (finding,) = scan_text(text)
    assert text[finding.start : finding.end] == _GH
    assert finding.line == 2


def test_empty_and_plain_text() -> None:
    assert scan_text("") == ()
    assert scan_text("def add(a, b):\n    return a + b\n") == ()


@given(
    prefix=st.text(alphabet=string.ascii_letters + " \n=:'\"", max_size=60),
    suffix=st.text(alphabet=string.ascii_letters + " \n=:'\"", max_size=60),
)
def test_property_planted_token_never_leaks(prefix: str, suffix: str) -> None:
    text = f"{prefix} {_GH} {suffix}"
    findings = scan_text(text)
    out = redact(text, findings)
    assert _GH[:8] not in out
    assert all(0 <= f.start < f.end <= len(text) for f in findings)
    assert list(findings) == sorted(findings, key=lambda f: (f.start, f.end))


@given(st.text(max_size=300))
def test_property_arbitrary_text_is_handled(text: str) -> None:
    findings = scan_text(text)
    for a, b in itertools.pairwise(findings):
        assert a.end <= b.start
    assert scan_text(text) == findings
    if not findings:
        assert redact(text, findings) == text


# ---- paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        (".env", "env_file"),
        ("services/api/.env.production", "env_file"),
        ("deploy/prod.env", "env_file"),
        (".envrc", "env_file"),
        ("certs/server.pem", "private_key_file"),
        ("tls/server.key", "private_key_file"),
        ("home/.ssh/id_rsa", "ssh_private_key"),
        ("id_ed25519", "ssh_private_key"),
        ("android/release.keystore", "keystore"),
        ("certs/client.p12", "keystore"),
        ("certs/client.pfx", "keystore"),
        ("java/trust.jks", "keystore"),
        (".npmrc", "package_registry_credentials"),
        ("~/.pypirc".lstrip("~/"), "package_registry_credentials"),
        (".netrc", "netrc"),
        (".git-credentials", "git_credentials"),
        ("config/credentials.json", "cloud_credentials"),
        ("gcp/service-account-prod.json", "cloud_credentials"),
        ("home/.aws/credentials", "cloud_credentials"),
        (".aws/credentials", "cloud_credentials"),
        ("infra/terraform.tfstate", "terraform_state"),
        ("infra/terraform.tfstate.backup", "terraform_state"),
        ("ops/kubeconfig", "kubeconfig"),
        ("home/.kube/config", "kubeconfig"),
        ("home/.docker/config.json", "docker_config"),
        ("nginx/.htpasswd", "htpasswd"),
        ("./.env", "env_file"),
        ("config\\.env.local", "env_file"),
    ],
)
def test_sensitive_paths(path: str, rule: str) -> None:
    assert is_sensitive_path(path) == rule


@pytest.mark.parametrize(
    "path",
    [
        ".env.example", ".env.sample", ".env.template", "app/.env.example", "src/env.py",
        "id_rsa.pub", "keys/README.md", "credentials.py", "docs/aws/credentials.md",
        "config.json", "kube/config.yaml", "", "src/keyboard.py", "environment.yml",
    ],
)  # fmt: skip
def test_not_sensitive_paths(path: str) -> None:
    assert is_sensitive_path(path) is None


def test_extra_patterns_are_named_and_win() -> None:
    assert is_sensitive_path("secrets/prod.yaml", ["secrets/"]) == "custom:secrets/"
    assert is_sensitive_path(".env.example", [".env.example"]) == "custom:.env.example"
    assert is_sensitive_path("src/app.py", ["*.yaml"]) is None
    names = [name for name, _ in DEFAULT_SENSITIVE_PATTERNS]
    assert len(names) == len(set(names))


# ---- the benchmark's planted corpus as a regression test ---------------------------------


def test_planted_corpus_recall_and_precision() -> None:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_secrets.py"
    spec = importlib.util.spec_from_file_location("bench_secrets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_secrets"] = module
    try:
        spec.loader.exec_module(module)
        result = module.run_planted(show=False)
    finally:
        del sys.modules["bench_secrets"]
    assert result["kinds"] >= 20
    assert result["recall"] >= 0.99, result["missed_kinds"]
    assert result["false_positives"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN RSA PRIVATE KEY-----\n" * 30_000,  # BEGIN lines without END
        "token" * 200_000,  # a needle repeated inside one long blob
        "password=" * 100_000,
    ],
    ids=["begins-without-end", "needle-blob", "assignment-chain"],
)
def test_pathological_inputs_stay_linear(text: str) -> None:
    import time

    start = time.process_time()
    assert scan_text(text) == ()
    assert time.process_time() - start < 20  # quadratic behaviour took minutes here


def test_rule_gates_only_skip_rules_that_could_not_match() -> None:
    """Every rule's gate strings are necessary: with the gates ignored (every finder
    run on every text) the findings are the same, on every case, on the cases with
    their secret's letters in other cases, and on texts cut at every few characters."""
    import dataclasses

    from codelibrarian.workspace import secrets as module

    gated = module._compiled_rules()
    ungated = tuple(dataclasses.replace(r, gate=()) for r in gated)
    texts = [text for _, text, _ in CASES]
    texts += [t.swapcase() for t in texts] + [t.upper() for t in texts]
    texts += [t[i:] for t in texts[: len(CASES)] for i in range(0, len(t), 7)]
    expected = [module.scan_text(t) for t in texts]
    module._compiled_rules.cache_clear()  # scan_text reads the rules through this cache
    real = module._rules
    module._rules = lambda: ungated
    try:
        assert module._compiled_rules() == ungated
        assert [module.scan_text(t) for t in texts] == expected
    finally:
        module._rules = real
        module._compiled_rules.cache_clear()
    assert [(r.name, r.gate) for r in module._compiled_rules()] == [(r.name, r.gate) for r in gated]
    assert sum(1 for found in expected if found) >= len(CASES)
