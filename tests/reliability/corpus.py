# ruff: noqa: E501 -- file templates read best one line of the planted file per line
"""The planted-secret corpus: a small but realistic repository full of fake secrets.

``build(root)`` writes a git repository (a shop web app with services, deploy files,
docs and CI) in which 80 secrets of the kinds users leak most — AWS keys, GitHub,
Slack, Stripe and Google tokens, PEM and PGP private key blocks, JWTs, database URLs
with passwords, ``.env`` files, kubeconfigs, 32-hex API keys in YAML — are planted
in module-level constants, default arguments, class attributes, config files, docs
and uncommitted changes. Every value is generated from a seeded RNG with the shape of
the real thing and is not a real credential.

``Planted.fragments`` are the strings that must never appear in any output: the
secret cut into 12-character pieces (so a partial leak is caught too; for a JWT its
signature), and every line of a key block's body.

Run ``python tests/reliability/corpus.py DIR`` to write the corpus to DIR.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    from tests.helpers import make_repo, write_files
except ImportError:  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.helpers import make_repo, write_files

__all__ = ["SEED", "Planted", "build", "leaks"]

SEED = 17_2026
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
B32 = string.ascii_uppercase + "234567"
DIGITS = "0123456789"
PIECE = 12


@dataclass(frozen=True, slots=True)
class Planted:
    """One planted secret: its kind, the file it is in and the value."""

    kind: str
    path: str
    value: str
    sensitive_file: bool = False

    @property
    def fragments(self) -> tuple[str, ...]:
        """Pieces of the secret that no output may contain."""
        lines = [ln.strip() for ln in self.value.splitlines() if ln.strip()]
        if len(lines) > 1:  # a key block: every body line of 16+ characters
            body = [ln for ln in lines if not ln.startswith("-----") and len(ln) >= 16]
            return tuple(dict.fromkeys(body))
        v = self.value
        if self.kind == "jwt":  # the header ({"alg":...,"typ":"JWT"}) is not secret
            v = v.rsplit(".", 1)[1]
        if len(v) <= PIECE:
            return (v,)
        cuts = list(range(0, len(v) - PIECE + 1, PIECE))
        if cuts[-1] + PIECE < len(v):
            cuts.append(len(v) - PIECE)
        return tuple(dict.fromkeys(v[i : i + PIECE] for i in cuts))


def leaks(text: str, planted: list[Planted]) -> list[tuple[Planted, str]]:
    """(secret, fragment) for every fragment of a planted secret found in ``text``."""
    out = []
    for p in planted:
        for frag in p.fragments:
            if frag in text:
                out.append((p, frag))
                break
    return out


class _Gen:
    """Fake values of the right shapes, from one seeded RNG."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def aws_key_id(self) -> str:
        return self.rng.choice(["AKIA", "ASIA"]) + self.s(B32, 16)

    def aws_secret(self) -> str:
        return self.s(B64, 40)

    def github(self) -> str:
        return self.rng.choice(["ghp_", "gho_", "ghs_"]) + self.s(ALNUM, 36)

    def github_pat(self) -> str:
        return "github_pat_" + self.s(ALNUM, 22) + "_" + self.s(ALNUM, 59)

    def slack_bot(self) -> str:
        return f"xoxb-{self.s(DIGITS, 12)}-{self.s(DIGITS, 13)}-{self.s(ALNUM, 24)}"

    def slack_user(self) -> str:
        return (
            f"xoxp-{self.s(DIGITS, 11)}-{self.s(DIGITS, 12)}-{self.s(DIGITS, 12)}-{self.s(HEX, 32)}"
        )

    def slack_webhook(self) -> str:
        return f"https://hooks.slack.com/services/T{self.s(B32, 8)}/B{self.s(B32, 10)}/{self.s(ALNUM, 24)}"

    def stripe(self) -> str:
        return self.rng.choice(["sk_live_", "rk_live_"]) + self.s(
            ALNUM, 24 + self.rng.randrange(0, 75)
        )

    def google(self) -> str:
        return "AIza" + self.s(B64URL, 35)

    def jwt(self) -> str:
        def enc(obj: object) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

        head = enc({"alg": self.rng.choice(["HS256", "RS256"]), "typ": "JWT"})
        body = enc(
            {
                "sub": self.s(HEX, 16),
                "iat": self.rng.randrange(1_600_000_000, 1_800_000_000),
                "role": "service",
            }
        )
        return f"{head}.{body}.{self.s(B64URL, 43)}"

    def hex32(self) -> str:
        return self.s(HEX, 32)

    def password(self, n: int = 18) -> str:
        pool = ALNUM + "!^*-_+~"
        while True:
            pw = self.s(pool, n)
            if (
                any(c.isdigit() for c in pw)
                and any(c.isupper() for c in pw)
                and any(c.islower() for c in pw)
            ):
                return pw

    def app_secret(self) -> str:
        return self.s(ALNUM + "-_", 48)

    def pem(self, label: str = "RSA ", n_bytes: int = 640) -> str:
        raw = base64.b64encode(self.rng.randbytes(n_bytes)).decode()
        body = "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))
        return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----"

    def pgp(self) -> str:
        raw = base64.b64encode(self.rng.randbytes(900)).decode()
        body = "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))
        return (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            f"{body}\n={self.s(B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
        )


class _Writer:
    """Collects files and the secrets planted in them."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.later: dict[str, str] = {}  # uncommitted changes, written after the commit
        self.planted: list[Planted] = []

    def plant(self, kind: str, path: str, value: str, *, sensitive: bool = False) -> str:
        self.planted.append(Planted(kind, path, value, sensitive))
        return value


def _files(g: _Gen, w: _Writer) -> None:
    p = w.plant
    # --- Python: module-level constants, default arguments, class attributes -------------
    w.files["shop/settings.py"] = f'''"""Settings for the shop service."""

import os

DEBUG = False
AWS_ACCESS_KEY_ID = "{p("aws_access_key_id", "shop/settings.py", g.aws_key_id())}"
AWS_SECRET_ACCESS_KEY = "{p("aws_secret_access_key", "shop/settings.py", g.aws_secret())}"
GITHUB_TOKEN = "{p("github_token", "shop/settings.py", g.github())}"
STRIPE_SECRET_KEY = "{p("stripe_key", "shop/settings.py", g.stripe())}"
SECRET_KEY = "{p("generic_secret", "shop/settings.py", g.app_secret())}"
DATABASE_URL = "postgresql://shop:{p("dsn_password", "shop/settings.py", g.password())}@db.internal:5432/shop"
TIME_ZONE = os.environ.get("TZ", "UTC")


def load_settings(env: str = "production") -> dict[str, str]:
    """Settings for one environment."""
    return {{"env": env, "tz": TIME_ZONE}}
'''
    w.files["shop/clients/github.py"] = f'''"""A tiny GitHub client."""

import urllib.request


class GitHubClient:
    """Calls the GitHub REST API."""

    TOKEN = "{p("github_token", "shop/clients/github.py", g.github())}"
    BASE = "https://api.github.com"

    def __init__(self, token: str = "{p("github_token", "shop/clients/github.py", g.github_pat())}") -> None:
        self.token = token

    def repos(self, org: str) -> bytes:
        req = urllib.request.Request(f"{{self.BASE}}/orgs/{{org}}/repos")
        req.add_header("Authorization", f"token {{self.token}}")
        return urllib.request.urlopen(req).read()
'''
    w.files["shop/clients/slack.py"] = f'''"""Post order notifications to Slack."""

import json
import urllib.request

SLACK_BOT_TOKEN = "{p("slack_token", "shop/clients/slack.py", g.slack_bot())}"
SLACK_WEBHOOK_URL = "{p("slack_webhook", "shop/clients/slack.py", g.slack_webhook())}"


def notify(text: str, webhook: str = SLACK_WEBHOOK_URL) -> None:
    """Send ``text`` to the orders channel."""
    body = json.dumps({{"text": text}}).encode()
    urllib.request.urlopen(urllib.request.Request(webhook, data=body))
'''
    w.files["shop/payments/stripe_gateway.py"] = f'''"""Card payments through Stripe."""

from dataclasses import dataclass

RESTRICTED_KEY = "{p("stripe_key", "shop/payments/stripe_gateway.py", g.stripe())}"


@dataclass
class Charge:
    amount: int
    currency: str = "eur"


def charge(order_id: str, amount: int, api_key: str = "{p("stripe_key", "shop/payments/stripe_gateway.py", g.stripe())}") -> Charge:
    """Charge the card of an order."""
    return Charge(amount)
'''
    w.files["shop/geo.py"] = f'''"""Address lookups."""

GOOGLE_MAPS_API_KEY = "{p("google_api_key", "shop/geo.py", g.google())}"
FALLBACK_KEYS = ["{p("google_api_key", "shop/geo.py", g.google())}", "{p("google_api_key", "shop/geo.py", g.google())}"]


def geocode(address: str) -> tuple[float, float]:
    """Latitude and longitude of an address."""
    return (0.0, 0.0)
'''
    w.files["shop/db.py"] = f'''"""Database connections."""

MONGO_URI = "mongodb+srv://reporting:{p("dsn_password", "shop/db.py", g.password())}@cluster0.q8x2m.mongodb.net/shop"
REDIS_URL = "redis://:{p("dsn_password", "shop/db.py", g.password(22))}@cache.internal:6379/0"
MYSQL_DSN = "mysql://legacy:{p("dsn_password", "shop/db.py", g.password())}@10.0.4.12:3306/orders"


def connect(url: str = MONGO_URI) -> object:
    """Open a connection."""
    return object()
'''
    w.files["shop/auth/tokens.py"] = f'''"""Service-to-service tokens."""

SERVICE_JWT = "{p("jwt", "shop/auth/tokens.py", g.jwt())}"
ADMIN_JWT = "{p("jwt", "shop/auth/tokens.py", g.jwt())}"
JWT_SIGNING_SECRET = "{p("generic_secret", "shop/auth/tokens.py", g.app_secret())}"


def bearer(token: str = SERVICE_JWT) -> dict[str, str]:
    """The Authorization header for a token."""
    return {{"Authorization": "Bearer " + token}}
'''
    w.files["shop/crypto.py"] = f'''"""Signing with the shop's key."""

SIGNING_KEY_PEM = """{p("private_key", "shop/crypto.py", g.pem("EC ", 220))}
"""


def sign(payload: bytes, key: str = SIGNING_KEY_PEM) -> bytes:
    """Sign ``payload``."""
    return payload[::-1]
'''
    # --- JavaScript / TypeScript ------------------------------------------------------
    w.files["web/src/config.js"] = f"""// Front-end configuration
export const SLACK_TOKEN = "{p("slack_token", "web/src/config.js", g.slack_user())}";
export const GOOGLE_API_KEY = '{p("google_api_key", "web/src/config.js", g.google())}';
export const STRIPE_PUBLISHABLE = "pk_live_notsecret";

export function apiBase(env) {{
  return env === "prod" ? "https://api.shop.internal" : "http://localhost:8000";
}}
"""
    w.files["web/src/api.ts"] = f"""// Typed API client
const SERVICE_TOKEN: string = "{p("jwt", "web/src/api.ts", g.jwt())}";
const AWS_KEY = "{p("aws_access_key_id", "web/src/api.ts", g.aws_key_id())}";

export class ApiClient {{
  private readonly githubToken = "{p("github_token", "web/src/api.ts", g.github())}";

  constructor(private baseUrl: string) {{}}

  async get(path: string): Promise<unknown> {{
    const res = await fetch(this.baseUrl + path, {{ headers: {{ Authorization: `Bearer ${{SERVICE_TOKEN}}` }} }});
    return res.json();
  }}
}}
"""
    # --- Go, Java, Ruby, Rust -----------------------------------------------------------
    w.files["services/auth/main.go"] = f"""package main

import "fmt"

const jwtSigningKey = "{p("generic_secret", "services/auth/main.go", g.app_secret())}"

var awsSecretAccessKey = "{p("aws_secret_access_key", "services/auth/main.go", g.aws_secret())}"

var githubToken = "{p("github_token", "services/auth/main.go", g.github())}"

func main() {{
	fmt.Println("auth service", len(jwtSigningKey))
}}
"""
    w.files["services/billing/Billing.java"] = f"""package shop.billing;

public class Billing {{
    private static final String STRIPE_KEY = "{p("stripe_key", "services/billing/Billing.java", g.stripe())}";
    private static final String DB_URL = "jdbc:postgresql://billing:{p("dsn_password", "services/billing/Billing.java", g.password())}@db.internal:5432/billing";

    public long total(long[] amounts) {{
        long sum = 0;
        for (long a : amounts) sum += a;
        return sum;
    }}
}}
"""
    w.files["services/notify/notify.rb"] = f"""# Order notifications
module Notify
  SLACK_WEBHOOK = "{p("slack_webhook", "services/notify/notify.rb", g.slack_webhook())}"
  SENDGRID_KEY = "SG.{p("sendgrid_api_key", "services/notify/notify.rb", g.s(B64URL, 22) + "." + g.s(B64URL, 43))}"

  def self.deliver(message)
    puts message
  end
end
"""
    w.files["services/store/src/lib.rs"] = f"""//! Inventory store
pub const DATABASE_URL: &str = "postgres://inventory:{p("dsn_password", "services/store/src/lib.rs", g.password())}@db.internal/inventory";
pub const AWS_ACCESS_KEY: &str = "{p("aws_access_key_id", "services/store/src/lib.rs", g.aws_key_id())}";

pub fn count(items: &[u32]) -> u32 {{
    items.iter().sum()
}}
"""
    # --- configuration files -----------------------------------------------------------
    w.files["config/app.yaml"] = f"""service: shop
payments:
  provider: stripe
  api_key: {p("hex32_api_key", "config/app.yaml", g.hex32())}
mail:
  api_key: {p("hex32_api_key", "config/app.yaml", g.hex32())}
  from: orders@shop.invalid
analytics:
  token: "{p("generic_secret", "config/app.yaml", g.app_secret())}"
database:
  url: mysql://app:{p("dsn_password", "config/app.yaml", g.password())}@mysql.internal:3306/app
"""
    w.files["config/settings.toml"] = f"""[aws]
region = "eu-west-1"
access_key_id = "{p("aws_access_key_id", "config/settings.toml", g.aws_key_id())}"
secret_access_key = "{p("aws_secret_access_key", "config/settings.toml", g.aws_secret())}"

[github]
token = "{p("github_token", "config/settings.toml", g.github())}"
"""
    w.files["config/production.json"] = f"""{{
  "stripe_secret_key": "{p("stripe_key", "config/production.json", g.stripe())}",
  "google_api_key": "{p("google_api_key", "config/production.json", g.google())}",
  "session_jwt": "{p("jwt", "config/production.json", g.jwt())}",
  "log_level": "info"
}}
"""
    w.files["config/database.yml"] = f"""production:
  adapter: postgresql
  host: db.internal
  username: shop
  password: {p("generic_password", "config/database.yml", g.password())}
"""
    w.files["config/service-settings.ini"] = f"""[smtp]
host = smtp.internal
password = {p("generic_password", "config/service-settings.ini", g.password())}

[api]
api_key = {p("hex32_api_key", "config/service-settings.ini", g.hex32())}
"""
    # --- deployment: Kubernetes, Docker, Terraform, CI, shell -----------------------------
    w.files["deploy/k8s/secret.yaml"] = f"""apiVersion: v1
kind: Secret
metadata:
  name: shop
stringData:
  DATABASE_PASSWORD: "{p("generic_password", "deploy/k8s/secret.yaml", g.password())}"
  STRIPE_SECRET_KEY: "{p("stripe_key", "deploy/k8s/secret.yaml", g.stripe())}"
  SLACK_BOT_TOKEN: "{p("slack_token", "deploy/k8s/secret.yaml", g.slack_bot())}"
"""
    kube_key = base64.b64encode(g.pem("RSA ", 400).encode()).decode()
    w.files["deploy/kubeconfig"] = f"""apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://k8s.shop.internal:6443
  name: prod
users:
- name: deployer
  user:
    token: {p("jwt", "deploy/kubeconfig", g.jwt(), sensitive=True)}
    client-key-data: {p("kube_client_key", "deploy/kubeconfig", kube_key, sensitive=True)}
contexts:
- context:
    cluster: prod
    user: deployer
  name: prod
current-context: prod
"""
    w.files["deploy/staging.kubeconfig"] = f"""apiVersion: v1
kind: Config
users:
- name: ci
  user:
    token: {p("kube_token", "deploy/staging.kubeconfig", g.s(ALNUM, 52), sensitive=True)}
    password: {p("generic_password", "deploy/staging.kubeconfig", g.password(), sensitive=True)}
"""
    w.files["Dockerfile"] = f"""FROM python:3.12-slim
WORKDIR /app
ENV STRIPE_SECRET_KEY={p("stripe_key", "Dockerfile", g.stripe())}
ENV GITHUB_TOKEN={p("github_token", "Dockerfile", g.github())}
COPY . .
RUN pip install -r requirements.txt
CMD ["python", "-m", "shop"]
"""
    w.files["terraform/main.tf"] = f"""provider "aws" {{
  region     = "eu-west-1"
  access_key = "{p("aws_access_key_id", "terraform/main.tf", g.aws_key_id())}"
  secret_key = "{p("aws_secret_access_key", "terraform/main.tf", g.aws_secret())}"
}}

resource "aws_db_instance" "shop" {{
  engine   = "postgres"
  username = "shop"
  password = "{p("generic_password", "terraform/main.tf", g.password())}"
}}
"""
    w.files[
        "terraform/prod.tfvars"
    ] = f"""db_password = "{p("generic_password", "terraform/prod.tfvars", g.password(), sensitive=True)}"
aws_secret_access_key = "{p("aws_secret_access_key", "terraform/prod.tfvars", g.aws_secret(), sensitive=True)}"
"""
    w.files[".github/workflows/deploy.yml"] = f"""name: deploy
on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    env:
      GH_TOKEN: {p("github_token", ".github/workflows/deploy.yml", g.github())}
      AWS_ACCESS_KEY_ID: {p("aws_access_key_id", ".github/workflows/deploy.yml", g.aws_key_id())}
    steps:
      - run: ./scripts/deploy.sh
"""
    w.files["scripts/deploy.sh"] = f"""#!/bin/sh
set -eu
export AWS_ACCESS_KEY_ID={p("aws_access_key_id", "scripts/deploy.sh", g.aws_key_id())}
export AWS_SECRET_ACCESS_KEY={p("aws_secret_access_key", "scripts/deploy.sh", g.aws_secret())}
curl -H "Authorization: Bearer {p("bearer_token", "scripts/deploy.sh", g.s(B64URL, 40))}" https://deploy.shop.internal/v1/release
psql "postgresql://deploy:{p("dsn_password", "scripts/deploy.sh", g.password())}@db.internal/shop" -c 'select 1'
"""
    # --- env files, keys, registry credentials (sensitive by path) ------------------------
    w.files[".env"] = f"""DEBUG=false
AWS_ACCESS_KEY_ID={p("aws_access_key_id", ".env", g.aws_key_id(), sensitive=True)}
AWS_SECRET_ACCESS_KEY={p("aws_secret_access_key", ".env", g.aws_secret(), sensitive=True)}
STRIPE_SECRET_KEY={p("stripe_key", ".env", g.stripe(), sensitive=True)}
DATABASE_URL=postgres://shop:{p("dsn_password", ".env", g.password(), sensitive=True)}@localhost/shop
SESSION_SECRET={p("generic_secret", ".env", g.s(ALNUM, 20), sensitive=True)}
"""
    w.files[
        ".env.production"
    ] = f"""GITHUB_TOKEN={p("github_token", ".env.production", g.github(), sensitive=True)}
SLACK_BOT_TOKEN={p("slack_token", ".env.production", g.slack_bot(), sensitive=True)}
"""
    w.files[".env.example"] = f"""# copy to .env and fill in
DEBUG=true
AWS_ACCESS_KEY_ID=
GOOGLE_API_KEY={p("google_api_key", ".env.example", g.google())}
"""
    w.files["keys/deploy_key.pem"] = (
        p("private_key", "keys/deploy_key.pem", g.pem("RSA "), sensitive=True) + "\n"
    )
    w.files[".npmrc"] = (
        f"//registry.npmjs.org/:_authToken={p('npm_token', '.npmrc', 'npm_' + g.s(ALNUM, 36), sensitive=True)}\n"
    )
    # --- docs: a tutorial that pastes real values, a key in a fenced block ---------------
    pgp = g.pgp()
    w.files["docs/signing.md"] = f"""# Signing releases

Releases are signed with the release key. Import it on the build machine:

```
gpg --import <<'EOF'
{p("private_key", "docs/signing.md", pgp)}
EOF
```

Then run `make release`.
"""
    w.files["docs/setup.md"] = f"""# Local setup

1. Export a token: `export GITHUB_TOKEN={p("github_token", "docs/setup.md", g.github())}`
2. Call the API:

```bash
curl -H "Authorization: Bearer {p("bearer_token", "docs/setup.md", g.s(B64URL, 40))}" https://api.shop.internal/v1/orders
```

3. The staging database is `postgresql://staging:{p("dsn_password", "docs/setup.md", g.password())}@staging-db.internal/shop`.
"""
    w.files["README.md"] = """# shop

An online shop: `shop/` is the Python service, `web/` the front end, `services/` the
back-office services. See docs/setup.md.
"""
    w.files["CONSTRAINTS.md"] = """# Constraints

- Never log payment data.
- Every client goes through `shop/clients`.
"""
    # --- tests with fixtures ------------------------------------------------------------
    w.files["tests/test_tokens.py"] = f"""from shop.auth.tokens import bearer

FIXTURE_JWT = "{p("jwt", "tests/test_tokens.py", g.jwt())}"


def test_bearer() -> None:
    assert bearer(FIXTURE_JWT)["Authorization"].startswith("Bearer ")
"""
    # --- uncommitted changes: the current diff carries secrets ---------------------------
    w.later["shop/settings.py"] = w.files["shop/settings.py"] + (
        f'\nSENTRY_AUTH_TOKEN = "{p("generic_secret", "shop/settings.py", g.app_secret())}"\n'
        f'OPENAI_API_KEY = "sk-proj-{p("openai_api_key", "shop/settings.py", g.s(B64URL, 74))}"\n'
    )
    w.later[".env"] = w.files[".env"] + (
        f"GOOGLE_API_KEY={p('google_api_key', '.env', g.google(), sensitive=True)}\n"
    )
    w.later["shop/clients/slack.py"] = w.files["shop/clients/slack.py"].replace(
        "import urllib.request\n",
        f'import urllib.request\n\nALERTS_TOKEN = "{p("slack_token", "shop/clients/slack.py", g.slack_bot())}"\n',
    )


def build(root: Path, *, seed: int = SEED) -> list[Planted]:
    """Write the corpus repository at ``root`` (committed, plus uncommitted changes)."""
    g = _Gen(seed)
    w = _Writer()
    _files(g, w)
    make_repo(root, w.files)
    write_files(root, w.later)
    return list(w.planted)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    planted = build(Path(argv[0]))
    files = {p.path for p in planted}
    print(f"{len(planted)} secrets in {len(files)} files at {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
