# ruff: noqa: E501 -- the generator and context tables read best one entry per line
"""Secret detection benchmark: recall on a planted corpus, false positives on real code.

    .venv/bin/python benchmarks/bench_secrets.py [--show-hits] [--write-corpus DIR]

1. *Planted corpus.* Generated here from a seeded RNG: fake but format-valid
   values for 30+ kinds of secrets, several variants each, embedded in files of
   ten types (.py, .js, .yaml, .json, .env, Dockerfile, .tf, .ini, shell,
   markdown) surrounded by clean filler that looks like real code (lock-file
   hashes, UUIDs, placeholders, env lookups). Recall counts a secret as found
   only when every character of it is covered by findings (so redaction would
   not leak any part of it). Findings outside planted secrets are counted as
   false positives.
2. *Real code.* Every ``.py`` file of the running Python's standard library
   (``sysconfig.get_paths()["stdlib"]``, without ``site-packages``). Private key
   blocks found there are real (test) keys and are reported separately as true
   secrets; every other hit is a false positive, listed with ``--show-hits``.
   The ``.pem``/``.key``/``.crt`` files of its test data hold real test keys:
   their private key blocks are counted as true secrets, and the path rules
   are checked against those files.
3. *Throughput.* MB/s of ``scan_text`` over the standard library, best of 3,
   in CPU time (``time.process_time``; the figure that does not depend on how
   busy the machine is) and in wall-clock time.
4. ``--heldout DIR``: hits in more real code the rules were not tuned on
   (for example a virtualenv's ``site-packages``), listed with ``--show-hits``.
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import random
import string
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codelibrarian.workspace.secrets import SecretFinding, is_sensitive_path, scan_text

SEED = 20261121
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Planted:
    kind: str
    path: str
    start: int
    end: int


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _pem_body(rng: random.Random, n_bytes: int) -> str:
    raw = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(n_bytes))).decode()
    return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))


def _password(rng: random.Random, n: int) -> str:
    pool = string.ascii_letters + string.digits + "!#%^&*-_+~"
    while True:
        pw = _s(rng, pool, n)
        if any(c.isdigit() for c in pw) and any(c.isalpha() for c in pw):
            return pw


# kind -> (value generator, variable name used in contexts)
Gen = Callable[[random.Random], str]
TOKEN_KINDS: dict[str, tuple[Gen, str]] = {
    "aws_access_key_id": (lambda r: r.choice(["AKIA", "ASIA"]) + _s(r, B32, 16), "AWS_ACCESS_KEY_ID"),
    "aws_secret_access_key": (lambda r: _s(r, B64, 40), "AWS_SECRET_ACCESS_KEY"),
    "github_classic": (lambda r: r.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + _s(r, ALNUM, 36), "GITHUB_TOKEN"),
    "github_fine_grained": (lambda r: "github_pat_" + _s(r, ALNUM, 22) + "_" + _s(r, ALNUM, 59), "GH_PAT"),
    "gitlab": (lambda r: "glpat-" + _s(r, B64URL, 20), "GITLAB_TOKEN"),
    "slack_bot": (lambda r: "xoxb-" + _s(r, "0123456789", 12) + "-" + _s(r, "0123456789", 13) + "-" + _s(r, ALNUM, 24), "SLACK_BOT_TOKEN"),
    "slack_user": (lambda r: "xoxp-" + "-".join(_s(r, "0123456789", 12) for _ in range(3)) + "-" + _s(r, HEX, 32), "SLACK_TOKEN"),
    "slack_webhook": (lambda r: f"https://hooks.slack.com/services/T{_s(r, B32, 8)}/B{_s(r, B32, 10)}/{_s(r, ALNUM, 24)}", "SLACK_WEBHOOK_URL"),
    "stripe": (lambda r: r.choice(["sk_live_", "rk_live_"]) + _s(r, ALNUM, r.choice([24, 34, 99])), "STRIPE_SECRET_KEY"),
    "google_api_key": (lambda r: "AIza" + _s(r, B64URL, 35), "GOOGLE_API_KEY"),
    "azure_storage": (
        lambda r: f"DefaultEndpointsProtocol=https;AccountName=st{_s(r, HEX, 10)};AccountKey={_s(r, B64, 86)}==;EndpointSuffix=core.windows.net",
        "AZURE_STORAGE_CONNECTION_STRING",
    ),
    "jwt": (
        lambda r: ".".join(
            [
                _b64url(json.dumps({"alg": r.choice(["HS256", "RS256"]), "typ": "JWT"}).encode()),
                _b64url(json.dumps({"sub": _s(r, HEX, 12), "iat": r.randrange(1_600_000_000, 1_800_000_000)}).encode()),
                _s(r, B64URL, 43),
            ]
        ),
        "SESSION_JWT",
    ),
    "npm": (lambda r: "npm_" + _s(r, ALNUM, 36), "NPM_TOKEN"),
    "pypi": (lambda r: "pypi-AgEIcHlwaS5vcmc" + _s(r, B64URL, r.choice([64, 120])), "PYPI_API_TOKEN"),
    "twilio_api_key": (lambda r: "SK" + _s(r, HEX, 32), "TWILIO_API_KEY"),
    "twilio_auth_token": (lambda r: _s(r, HEX, 32), "TWILIO_AUTH_TOKEN"),
    "sendgrid": (lambda r: "SG." + _s(r, B64URL, 22) + "." + _s(r, B64URL, 43), "SENDGRID_API_KEY"),
    "openai_project": (lambda r: "sk-proj-" + _s(r, B64URL, r.choice([48, 74, 156])), "OPENAI_API_KEY"),
    "openai_legacy": (lambda r: "sk-" + _s(r, ALNUM, 20) + "T3BlbkFJ" + _s(r, ALNUM, 20), "OPENAI_KEY"),
    "anthropic": (lambda r: "sk-ant-api03-" + _s(r, B64URL, 93) + "AA", "ANTHROPIC_API_KEY"),
    "huggingface": (lambda r: "hf_" + _s(r, string.ascii_letters, 34), "HF_TOKEN"),
    "discord_bot": (lambda r: r.choice("MNO") + _s(r, B64URL, 23) + "." + _s(r, B64URL, 6) + "." + _s(r, B64URL, 27), "DISCORD_BOT_TOKEN"),
    "discord_webhook": (
        lambda r: f"https://discord.com/api/webhooks/{_s(r, '0123456789', 18)}/{_s(r, B64URL, 68)}",
        "DISCORD_WEBHOOK_URL",
    ),
    "telegram": (lambda r: _s(r, "123456789", 1) + _s(r, "0123456789", 9) + ":AA" + _s(r, B64URL, 33), "TELEGRAM_BOT_TOKEN"),
    "mailgun": (lambda r: "key-" + _s(r, HEX, 32), "MAILGUN_API_KEY"),
    "shopify": (lambda r: r.choice(["shpat_", "shpss_", "shpca_"]) + _s(r, HEX, 32), "SHOPIFY_ACCESS_TOKEN"),
    "square": (lambda r: r.choice(["sq0atp-" + _s(r, B64URL, 22), "EAAA" + _s(r, B64URL, 60)]), "SQUARE_ACCESS_TOKEN"),
    "heroku": (
        lambda r: f"{_s(r, HEX, 8)}-{_s(r, HEX, 4)}-{_s(r, HEX, 4)}-{_s(r, HEX, 4)}-{_s(r, HEX, 12)}",
        "HEROKU_API_KEY",
    ),
    "generic_password": (lambda r: _password(r, r.choice([10, 14, 20])), "DB_PASSWORD"),
    "generic_secret": (lambda r: _s(r, ALNUM + "-_", r.choice([24, 32, 50])), "APP_SECRET_KEY"),
    "generic_api_key": (lambda r: _s(r, ALNUM, 32), "PAYMENTS_API_KEY"),
}  # fmt: skip

# how a variable is set in each file type; {n} = variable name, {v} = value
CONTEXTS: tuple[tuple[str, str], ...] = (
    ("settings.py", '{n} = "{v}"\n'),
    ("config.js", "const {lower} = '{v}';\n"),
    ("deploy.yaml", '    - name: {n}\n      value: "{v}"\n'),
    ("app.json", '  "{lower}": "{v}",\n'),
    (".env", "{n}={v}\n"),
    ("Dockerfile", "ENV {n}={v}\n"),
    ("main.tf", '  {lower} = "{v}"\n'),
    ("service.ini", "{lower} = {v}\n"),
    ("run.sh", "export {n}='{v}'\n"),
    ("README.md", "```bash\nexport {n}={v}\n```\n"),
    ("values.yml", "{lower}: {v}\n"),
    ("client.py", 'client = Client({lower}="{v}")\n'),
)

FILLER: dict[str, str] = {
    "py": (
        "import os\nimport hashlib\n\nTOKEN = os.environ['API_TOKEN']\npassword = os.getenv('DB_PASSWORD')\n"
        "secret_key = settings.SECRET_KEY\nREQUEST_ID = '3f1c2a9e-5b7d-4c8e-9a1f-2d3e4f5a6b7c'\n"
        "DIGEST = hashlib.sha256(b'data').hexdigest()  # e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
        "def login(user, password):\n    token = create_token(user)\n    return token\n"
    ),
    "js": (
        "const apiKey = process.env.API_KEY;\nconst password = '<your-password>';\n"
        "const integrity = 'sha512-Nbw0HOUQq0yqS/2cDXwjgpIqX+jJHFExGW0y3g4ABLBl6w/X2nL3/Tr7Q6ST1dy6oa3w==';\n"
        "module.exports = { token: '${TOKEN}', secret: 'changeme' };\n"
    ),
    "yaml": (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  password: ${DB_PASSWORD}\n"
        '  token: "{{ .Values.token }}"\n  uid: 0b8e6c3a-1f2d-4e5f-8a9b-0c1d2e3f4a5b\n'
    ),
    "json": (
        '{\n  "name": "web",\n  "version": "1.2.3",\n  "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",\n'
        '  "integrity": "sha1-W4o6d2Xf4AEmHd6RVYnngvjJTR4=",\n  "password": "xxxxxxxx",\n'
    ),
    "env": "# copy to .env and fill in\nDEBUG=true\nPORT=8080\nSECRET_KEY=\nAPI_TOKEN=your-token-here\n",
    "dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nARG DB_PASSWORD\nRUN pip install -r requirements.txt\n",
    "tf": 'resource "aws_db_instance" "db" {\n  engine   = "postgres"\n  password = var.db_password\n  username = "app"\n',
    "ini": "[server]\nhost = 0.0.0.0\nport = 8000\npassword = %(DB_PASSWORD)s\ntoken_file = /run/secrets/token\n",
    "sh": '#!/bin/sh\nset -eu\nTOKEN="$(cat /run/secrets/token)"\nexport PASSWORD="${PASSWORD:-}"\n',
    "md": "# Setup\n\nSet `API_TOKEN` to your token (for example `ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`).\n\n",
}


def _filler_for(path: str) -> str:
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else path.lower()
    return {
        "py": FILLER["py"], "js": FILLER["js"], "yaml": FILLER["yaml"], "yml": FILLER["yaml"],
        "json": FILLER["json"], "env": FILLER["env"], "dockerfile": FILLER["dockerfile"],
        "tf": FILLER["tf"], "ini": FILLER["ini"], "sh": FILLER["sh"], "md": FILLER["md"],
    }[suffix]  # fmt: skip


def _private_key_docs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, path, value) for private keys in several encodings."""
    out = []
    for label in ("RSA ", "EC ", "OPENSSH ", "DSA ", "", "ENCRYPTED "):
        block = f"-----BEGIN {label}PRIVATE KEY-----\n{_pem_body(rng, 600)}\n-----END {label}PRIVATE KEY-----"
        out.append(("private_key", f"keys/{label.strip().lower() or 'pkcs8'}.txt", block))
    pgp = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        f"{_pem_body(rng, 900)}\n={_s(rng, B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    out.append(("private_key", "keys/pgp.asc.md", pgp))
    return out


def build_corpus(variants: int = 6) -> tuple[dict[str, str], list[Planted]]:
    """Files (path -> text) and the planted secrets' spans."""
    rng = random.Random(SEED)
    files: dict[str, str] = {}
    planted: list[Planted] = []
    ctx_i = 0
    for kind in sorted(TOKEN_KINDS):
        gen, var = TOKEN_KINDS[kind]
        for i in range(variants):
            value = gen(rng)
            fname, ctx = CONTEXTS[ctx_i % len(CONTEXTS)]
            ctx_i += 1
            path = f"{kind}/{i}/{fname}"
            line = ctx.format(n=var, lower=var.lower(), v=value)
            filler = _filler_for(fname)
            head, tail = filler[: len(filler) // 2], filler[len(filler) // 2 :]
            head = head[: head.rfind("\n") + 1]
            tail = filler[len(head) :]
            text = head + line + tail
            start = len(head) + line.index(value)
            secret_start, secret_end = start, start + len(value)
            if kind == "azure_storage":  # the secret is the AccountKey value
                k = value.index("AccountKey=") + len("AccountKey=")
                secret_start, secret_end = start + k, start + value.index(";", k)
            files[path] = text
            planted.append(Planted(kind, path, secret_start, secret_end))
    # connection strings and URLs with passwords
    schemes = (
        "postgresql",
        "postgres",
        "mysql",
        "mongodb+srv",
        "mongodb",
        "redis",
        "amqp",
        "https",
    )
    for i in range(2 * len(schemes)):
        scheme = schemes[i % len(schemes)]
        pw = _password(rng, rng.choice([10, 16, 24])).replace("#", "x").replace("%", "x")
        host = rng.choice(["db.internal", "10.0.3.7", "cluster0.abcde.mongodb.net", "mq.prod.svc"])
        url = f"{scheme}://svc_{_s(rng, string.ascii_lowercase, 5)}:{pw}@{host}:5432/app"
        fname, ctx = CONTEXTS[i % len(CONTEXTS)]
        kind = "url_basic_auth" if scheme == "https" else "connection_string"
        path = f"{kind}/{i}/{fname}"
        line = ctx.format(n="DATABASE_URL", lower="database_url", v=url)
        text = FILLER["py"] + line if fname.endswith(".py") else line
        start = text.index(url) + url.index(":" + pw + "@") + 1
        files[path] = text
        planted.append(Planted(kind, path, start, start + len(pw)))
    # private keys: raw, in a Python string, in YAML block scalar, in markdown, JSON-escaped
    for j, (kind, path, block) in enumerate(_private_key_docs(rng)):
        wrappers = (
            lambda b: b + "\n",
            lambda b: 'KEY = """' + b + '\n"""\n',
            lambda b: "tls:\n  key: |\n" + "\n".join("    " + ln for ln in b.splitlines()) + "\n",
            lambda b: "Key:\n\n```\n" + b + "\n```\n",
        )
        wrapped = wrappers[j % len(wrappers)](block)
        first = block.splitlines()[0]
        last = block.splitlines()[-1]
        start = wrapped.index(first)
        end = wrapped.index(last) + len(last)
        files[path] = wrapped
        planted.append(Planted(kind, path, start, end))
    # GCP service-account JSON
    for i in range(3):
        pem = f"-----BEGIN PRIVATE KEY-----\n{_pem_body(rng, 1200)}\n-----END PRIVATE KEY-----\n"
        escaped = pem.replace("\n", "\\n")
        doc = (
            '{\n  "type": "service_account",\n  "project_id": "proj-'
            + _s(rng, string.ascii_lowercase, 6)
            + '",\n'
            '  "private_key_id": "' + _s(rng, HEX, 40) + '",\n'
            '  "private_key": "' + escaped + '",\n'
            '  "client_email": "bot@proj.iam.gserviceaccount.com"\n}\n'
        )
        start = doc.index("-----BEGIN")
        end = doc.index("-----END PRIVATE KEY-----") + len("-----END PRIVATE KEY-----")
        path = f"gcp/{i}/sa.json"
        files[path] = doc
        planted.append(Planted("gcp_service_account", path, start, end))
    # bearer tokens in code and docs
    for i in range(4):
        tok = _s(rng, B64URL, 40)
        line = rng.choice(
            [
                "headers = {{'Authorization': 'Bearer {t}'}}\n",
                'curl -H "Authorization: Bearer {t}" https://api.internal/v1/items\n',
            ]
        ).format(t=tok)
        path = f"bearer/{i}/call.{'py' if i % 2 else 'sh'}"
        files[path] = line
        planted.append(Planted("bearer_token", path, line.index(tok), line.index(tok) + len(tok)))
    return files, planted


def covered(findings: tuple[SecretFinding, ...], start: int, end: int) -> bool:
    pos = start
    for f in findings:
        if f.start <= pos < f.end:
            pos = f.end
        if pos >= end:
            return True
    return pos >= end


def run_planted(show: bool) -> dict[str, object]:
    files, planted = build_corpus()
    by_path: dict[str, list[Planted]] = {}
    for p in planted:
        by_path.setdefault(p.path, []).append(p)
    found = 0
    missed: list[Planted] = []
    fps: list[tuple[str, SecretFinding]] = []
    kinds = Counter(p.kind for p in planted)
    for path in sorted(files):
        findings = scan_text(files[path])
        mine = by_path.get(path, [])
        for p in mine:
            if covered(findings, p.start, p.end):
                found += 1
            else:
                missed.append(p)
        for f in findings:
            if not any(f.start < p.end and p.start < f.end for p in mine):
                fps.append((path, f))
    if show:
        for p in missed:
            print(f"  MISSED {p.kind:24} {p.path}: {files[p.path][p.start : p.end][:60]!r}")
        for path, f in fps:
            print(
                f"  PLANTED-CORPUS FP {f.rule:24} {path}:{f.line}: {files[path][f.start : f.end][:60]!r}"
            )
    return {
        "files": len(files),
        "secrets": len(planted),
        "kinds": len(kinds),
        "found": found,
        "recall": found / len(planted),
        "false_positives": len(fps),
        "missed_kinds": sorted({p.kind for p in missed}),
    }


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and p.is_file())


def run_stdlib_keys(show: bool) -> dict[str, object]:
    """Key and certificate files in the standard library's test data (not ``.py``).

    These are real (test) keys: a private key block is a true secret, so it is
    counted here, apart from false positives. The path rules should flag the files too.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(
        p
        for p in root.rglob("*")
        if p.suffix in {".pem", ".key", ".crt"} and "site-packages" not in p.parts
    )
    blocks = path_flagged = files_with_blocks = 0
    other: Counter[str] = Counter()
    for p in paths:
        text = p.read_text(encoding="utf-8", errors="replace")
        findings = scan_text(text)
        keys = [f for f in findings if f.rule == "private_key"]
        other.update(f.rule for f in findings if f.rule != "private_key")
        blocks += len(keys)
        files_with_blocks += bool(keys)
        path_flagged += is_sensitive_path(p.relative_to(root).as_posix()) is not None
        if show and keys:
            print(f"  STDLIB KEY FILE {p.relative_to(root)}: {len(keys)} private key block(s)")
    expected = sum(
        "PRIVATE KEY-----" in p.read_text(encoding="utf-8", errors="replace") for p in paths
    )
    return {
        "files": len(paths),
        "files_with_private_key_text": expected,
        "files_with_private_key_found": files_with_blocks,
        "private_key_blocks": blocks,
        "other_findings": dict(sorted(other.items())),
        "files_flagged_by_path": path_flagged,
    }


def run_real(show: bool, root: Path, paths: list[Path], label: str) -> dict[str, object]:
    texts = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in paths]
    lines = sum(t.count("\n") + 1 for _, t in texts)
    size = sum(len(t.encode("utf-8", "surrogatepass")) for _, t in texts)
    true_secrets: list[tuple[str, SecretFinding]] = []
    fps: list[tuple[str, SecretFinding, str]] = []
    for p, t in texts:
        for f in scan_text(t):
            rel = p.relative_to(root).as_posix()
            if f.rule == "private_key":
                true_secrets.append((rel, f))
            else:
                line_text = t.splitlines()[f.line - 1] if t else ""
                fps.append((rel, f, line_text.strip()[:140]))
    wall, cpu = [], []
    for _ in range(3):
        w0, c0 = time.perf_counter(), time.process_time()
        for _, t in texts:
            scan_text(t)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    if show:
        for rel, f in true_secrets:
            print(f"  {label} TRUE SECRET {f.rule:20} {rel}:{f.line}")
        for rel, f, line_text in fps:
            print(f"  {label} FP {f.rule:24} {rel}:{f.line}: {line_text}")
    return {
        "files": len(paths),
        "lines": lines,
        "megabytes": size / 1e6,
        "true_secrets": len(true_secrets),
        "false_positives": len(fps),
        "fp_per_10k_lines": len(fps) * 10_000 / lines,
        "fp_rules": dict(sorted(Counter(f.rule for _, f, _ in fps).items())),
        "cpu_seconds": min(cpu),
        "mb_per_s_cpu": size / 1e6 / min(cpu),
        "mb_per_s_wall": size / 1e6 / min(wall),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-hits", action="store_true", help="list misses and every hit")
    parser.add_argument("--heldout", type=Path, help="more real code (*.py) to count hits in")
    parser.add_argument("--write-corpus", type=Path, help="also write the planted corpus here")
    args = parser.parse_args(argv)
    if args.write_corpus:
        files, _ = build_corpus()
        for rel, text in files.items():
            dest = args.write_corpus / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
    print(f"python {platform.python_version()} on {platform.machine()} ({platform.system()})")
    planted = run_planted(args.show_hits)
    print("planted:", json.dumps(planted))
    root = Path(sysconfig.get_paths()["stdlib"])
    stdlib = run_real(args.show_hits, root, stdlib_files(), "STDLIB")
    print("stdlib:", json.dumps(stdlib))
    print("stdlib key files:", json.dumps(run_stdlib_keys(args.show_hits)))
    if args.heldout:
        paths = sorted(p for p in args.heldout.rglob("*.py") if p.is_file())
        print("heldout:", json.dumps(run_real(args.show_hits, args.heldout, paths, "HELDOUT")))
    ok = planted["recall"] >= 0.99 and stdlib["fp_per_10k_lines"] <= 1  # type: ignore[operator]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
