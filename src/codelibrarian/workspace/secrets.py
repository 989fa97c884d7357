"""Secret detection: sensitive paths and secrets inside text, with redaction.

Two questions, two functions:

* :func:`is_sensitive_path` — should this file be kept out of context entirely?
  Gitignore-style patterns (``.env*``, key files, keystores, credential files,
  Terraform state, kubeconfig, ...) answer with the name of the matching rule.
* :func:`scan_text` — where in this text are secrets? High-precision token
  formats (cloud keys, VCS tokens, private key blocks, JWTs, connection strings,
  ...) plus entropy-checked generic assignments (``password = "..."``). Each
  finding is a span; :func:`redact` replaces each span with
  ``[REDACTED:<rule>]`` so the rest of a useful file can still be shown.

Speed: each rule declares cheap lowercase keywords; the text is lowered once
and a rule's regex runs only when one of its keywords occurs. See
``benchmarks/bench_secrets.py`` for recall, false positives and throughput.

Placeholders (``xxx``, ``<token>``, ``${VAR}``, ``os.environ[...]``, values
containing example/dummy/changeme, runs of one character), lock-file hashes and
UUIDs are not reported.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

import pathspec

__all__ = [
    "DEFAULT_SENSITIVE_PATTERNS",
    "NOT_SENSITIVE_PATTERNS",
    "SECRET_RULES",
    "SecretFinding",
    "findings_of",
    "is_sensitive_path",
    "redact",
    "scan_terms",
    "scan_text",
    "scan_with_terms",
]

# ---------------------------------------------------------------------------------------
# sensitive paths
# ---------------------------------------------------------------------------------------

#: (rule name, gitignore-style patterns); checked in this order
DEFAULT_SENSITIVE_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("env_file", (".env", ".env.*", "*.env", ".envrc")),
    ("ssh_private_key", ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk",
                         "id_ed25519_sk", "*.ppk")),
    ("private_key_file", ("*.pem", "*.key", "*.p8")),
    ("keystore", ("*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.bks")),
    ("package_registry_credentials", (".npmrc", ".yarnrc.yml", ".pypirc", ".gem/credentials")),
    ("netrc", (".netrc", "_netrc")),
    ("git_credentials", (".git-credentials",)),
    ("cloud_credentials", ("credentials.json", "service-account*.json", "service_account*.json",
                           "application_default_credentials.json", "**/.aws/credentials",
                           "**/.azure/accessTokens.json", "**/.config/gcloud/credentials.db")),
    ("terraform_state", ("*.tfstate", "*.tfstate.backup", "*.tfvars", "*.tfvars.json")),
    ("kubeconfig", ("kubeconfig", "*.kubeconfig", "**/.kube/config")),
    ("docker_config", ("**/.docker/config.json", ".dockercfg")),
    ("htpasswd", ("htpasswd", ".htpasswd", ".pgpass", ".my.cnf")),
)  # fmt: skip

#: templates that document variables without values; never sensitive by path
NOT_SENSITIVE_PATTERNS: tuple[str, ...] = (
    ".env.example", ".env.sample", ".env.template", ".env.dist", "*.env.example",
    "*.env.sample", "*.env.template", "*.tfvars.example", "*.tfvars.sample",
)  # fmt: skip


@lru_cache(maxsize=1)
def _default_specs() -> tuple[
    pathspec.GitIgnoreSpec, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]
]:
    allow = pathspec.GitIgnoreSpec.from_lines(NOT_SENSITIVE_PATTERNS)
    rules = tuple(
        (name, pathspec.GitIgnoreSpec.from_lines(pats)) for name, pats in DEFAULT_SENSITIVE_PATTERNS
    )
    return allow, rules


@lru_cache(maxsize=1)
def _default_literals() -> tuple[str, ...]:
    """A string every path matched by each default pattern holds: the pattern's longest
    run of plain characters (outside ``* ? [...]`` and escapes), without the slashes at
    its ends (``**/`` may match no folder). A path holding none of them matches no
    default rule, and no spec needs to be asked."""
    out: set[str] = set()
    for _, patterns in DEFAULT_SENSITIVE_PATTERNS:
        for pattern in patterns:
            runs = re.split(r"[*?\\\[\]]", re.sub(r"\[[^\]]*\]", "*", pattern))
            out.add(max((r.strip("/") for r in runs), key=len))
    return tuple(sorted(out))


@lru_cache(maxsize=256)
def _extra_spec(patterns: tuple[str, ...]) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
    return tuple((f"custom:{p}", pathspec.GitIgnoreSpec.from_lines([p])) for p in patterns)


def is_sensitive_path(rel_path: str, extra_patterns: Sequence[str] = ()) -> str | None:
    """Name of the sensitive-path rule ``rel_path`` matches, or ``None``.

    ``rel_path`` is repo-relative (POSIX or Windows separators). Template files
    (``.env.example`` and friends) are never sensitive by path, although their
    content is still scanned. ``extra_patterns`` are gitignore-style patterns
    from configuration; a match is reported as ``custom:<pattern>``.
    """
    path = rel_path.replace("\\", "/").lstrip("/")
    while path.startswith("./"):
        path = path[2:]
    if not path:
        return None
    allow, rules = _default_specs()
    extra = _extra_spec(tuple(extra_patterns)) if extra_patterns else ()
    for name, spec in extra:
        if spec.match_file(path):
            return name
    if not any(literal in path for literal in _default_literals()):
        return None  # no default rule could match (most paths: no spec is asked)
    if allow.match_file(path):
        return None
    for name, spec in rules:
        if spec.match_file(path):
            return name
    return None


# ---------------------------------------------------------------------------------------
# findings and redaction
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A secret at ``text[start:end]`` found by ``rule``; ``line`` is 1-based, of ``start``.

    :func:`scan_text` returns findings sorted by ``(start, end)`` and non-overlapping.
    """

    rule: str
    start: int
    end: int
    line: int


def redact(text: str, findings: Iterable[SecretFinding]) -> str:
    """``text`` with every finding's span replaced by ``[REDACTED:<rule>]``.

    Overlapping or touching spans are merged (the first rule names the marker)
    so no byte of any span survives.
    """
    spans = sorted((f.start, f.end, f.rule) for f in findings if f.end > f.start)
    merged = _merge(spans)
    out: list[str] = []
    pos = 0
    for start, end, rule in merged:
        out.append(text[pos:start])
        out.append(f"[REDACTED:{rule}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Merge sorted ``(start, end, rule)`` spans that overlap; the first rule names it."""
    merged: list[tuple[int, int, str]] = []
    for start, end, rule in spans:
        if merged and start < merged[-1][1]:
            p_start, p_end, p_rule = merged[-1]
            merged[-1] = (p_start, max(p_end, end), p_rule)
        else:
            merged.append((start, end, rule))
    return merged


# ---------------------------------------------------------------------------------------
# value checks
# ---------------------------------------------------------------------------------------

_PLACEHOLDER_MARKERS = (
    "example", "dummy", "changeme", "change_me", "change-me", "placeholder", "redacted",
    "xxxx", "****", "....", "<", ">", "${", "{{", "$(", "%(", "%s", "sample", "fake",
    "your_", "your-", "yourtoken", "yourkey", "yourpass", "insert", "replace_me", "replaceme",
    "not_a_real", "notreal", "not-real", "secret_here", "token_here", "key_here", "here",
    "os.environ", "getenv", "process.env", "env[", "env(", "secrets.", "vault:", "foobar",
    "lorem", "abcdef", "password", "foo", "123456", "qwerty", "test_", "_test", "-test", "test-",
    "mock",
)  # fmt: skip
_PLACEHOLDER_WORDS = frozenset(
    {
        "password", "passwd", "pass", "pwd", "secret", "token", "apikey", "api_key", "key",
        "user", "username", "admin", "root", "guest", "none", "null", "nil", "true", "false",
        "test", "testing", "default", "empty", "string", "value", "changeit", "hunter2",
        "letmein", "s3cr3t", "p@ssw0rd", "passw0rd", "secret123", "password123",
    }
)  # fmt: skip
_SAME_RUN = re.compile(r"(.)\1{5,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|->|::)[A-Za-z_$][A-Za-z0-9_$]*)*(?:\(\))?")
_FILENAME = re.compile(r"[\w.-]+\.(?:txt|json|pem|key|crt|cer|py|cfg|ini|ya?ml|env|toml|js|ts|md)")


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or len(set(low)) <= 2:
        return True
    if any(m in low for m in _PLACEHOLDER_MARKERS):
        return True
    return _SAME_RUN.search(value) is not None


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


_TOKEN_PLACEHOLDERS = (
    "example", "dummy", "placeholder", "xxxx", "fake", "sample", "redacted", "<", "${", "0000000",
)  # fmt: skip
#: parts of values published as examples everywhere: jwt.io's sample token (its
#: HS256 signature over {"sub":"1234567890","name":"John Doe","iat":1516239022})
_PUBLIC_SAMPLES = ("SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",)
#: a password hash in modular crypt format (bcrypt, argon2, pbkdf2, scrypt, sha-crypt):
#: what a system stores instead of the password, not a credential
_CRYPT_HASH = re.compile(r"\$(?:2[abxy]|argon2(?:id|i|d)|pbkdf2(?:-sha\d+)?|scrypt|[156]|y|gy)\$")


def _token_ok(token: str) -> bool:
    """Light placeholder check for high-precision token formats."""
    if _SAME_RUN.search(token) is not None:
        return False
    low = token.lower()
    if any(m in low for m in _TOKEN_PLACEHOLDERS):
        return False
    return not any(sample in token for sample in _PUBLIC_SAMPLES)


def _random_enough(value: str) -> bool:
    """Entropy and character-class test for free-form secret values."""
    n = len(value)
    if n < 8 or _classes(value) < 2:
        return False
    ent = _entropy(value)
    # the most a string of n characters can have is log2(n); ask for a large share of it
    need = min(3.3, math.log2(n) * 0.8)
    return ent >= need


# ---------------------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------------------

_Hit = tuple[str, int, int]
_Finder = Callable[[str, str], Iterator[_Hit]]
_Check = Callable[[str, "re.Match[str]"], bool]
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass(frozen=True, slots=True)
class _Rule:
    """``find(text, lowered_text)`` runs only when a ``gate`` string occurs in the
    lowered text: every match contains one of them (a token format's literal
    prefixes, lower-cased), so testing them (one substring search each) skips the
    rule exactly when it could not match, without running its finder. An empty
    gate: the finder always runs (``generic`` searches its own needles)."""

    name: str
    gate: tuple[str, ...]
    find: _Finder


def _regex_rule(
    name: str,
    gate: tuple[str, ...],
    pattern: str,
    *,
    group: int | str = 0,
    flags: int = 0,
    check: _Check | None = None,
    boundary: bool = True,
) -> _Rule:
    """A rule from one regex. ``boundary``: the match must not follow a word character
    (checked by hand: a look-behind would defeat the engine's literal-prefix search)."""
    rx = re.compile(pattern, flags)

    def find(text: str, _low: str) -> Iterator[_Hit]:
        for m in rx.finditer(text):
            if boundary and m.start() > 0 and text[m.start() - 1] in _WORD:
                continue
            token = m.group(group)
            if not token or not _token_ok(token):
                continue
            if check is not None and not check(token, m):
                continue
            yield name, m.start(group), m.end(group)

    return _Rule(name, gate, find)


def _jwt_ok(token: str, _m: re.Match[str]) -> bool:
    head = token.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return b'"alg"' in raw or b'"typ"' in raw


def _b64_pem_ok(token: str, _m: re.Match[str]) -> bool:
    """A base64-encoded PEM block (kubeconfig ``client-key-data``) holding a private key."""
    head = token[:96]
    try:
        raw = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in raw


def _mixed_ok(token: str, _m: re.Match[str]) -> bool:
    return _classes(token) >= 2 and _entropy(token) >= 3.0


_TELEGRAM = re.compile(r":AA[A-Za-z0-9_-]{33}" + r"(?![A-Za-z0-9_])")


def _find_telegram(text: str, _low: str) -> Iterator[_Hit]:
    """``<bot id>:AA<35 chars>``; the span includes the numeric bot id."""
    for m in _TELEGRAM.finditer(text):
        s = m.start()
        while s > 0 and text[s - 1].isdigit() and m.start() - s < 11:
            s -= 1
        if not 8 <= m.start() - s <= 10 or (s > 0 and text[s - 1] in _WORD):
            continue
        token = text[s : m.end()]
        if _token_ok(token) and _mixed_ok(token, m):
            yield "telegram_bot_token", s, m.end()


# ---- private key blocks ---------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----")
_PEM_END = re.compile(r"-----END ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----")
_PEM_TAIL = re.compile(r"(?:\\[nr]|[\s\"',+|]|[A-Za-z0-9+/=:]|-(?!----))*")
_B64_RUN = re.compile(r"[A-Za-z0-9+/=]{16,}")
_NO_END = re.compile(r"\Z")


def _find_private_keys(text: str, _low: str) -> Iterator[_Hit]:
    """PEM / OpenSSH / PGP private key blocks, from BEGIN to END (or the body's end).

    A block needs at least 64 base64 characters of body, so code that merely
    mentions the header (parsers, docs) is not reported.
    """
    pos = 0
    end_m: re.Match[str] | None = None
    while (m := _PEM_BEGIN.search(text, pos)) is not None:
        if end_m is None or end_m.start() < m.end():
            end_m = _PEM_END.search(text, m.end())  # once per END, not once per BEGIN
            if end_m is None:
                end_m = _NO_END.search(text, len(text))  # sentinel: no END anywhere after
        nxt_begin = text.find("-----BEGIN", m.end())
        if end_m is not None and end_m.group(0) and (nxt_begin < 0 or end_m.start() < nxt_begin):
            body, stop = text[m.end() : end_m.start()], end_m.end()
        else:  # a truncated block: the base64 lines that follow
            tail = _PEM_TAIL.match(text, m.end(), m.end() + 64_000)
            body = tail.group(0) if tail else ""
            stop = m.end() + len(body.rstrip())
        if sum(len(b) for b in _B64_RUN.findall(body)) >= 64:
            yield "private_key", m.start(), stop
            pos = stop
        else:
            pos = m.end()


# ---- credentials in URLs ----------------------------------------------------------------

_DB_SCHEMES = frozenset((
    "postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss",
    "amqp", "amqps", "mssql", "sqlserver", "oracle", "cockroachdb", "clickhouse", "neo4j",
    "neo4j+s", "nats", "kafka", "couchdb", "ldap", "ldaps", "smtp", "smtps",
))  # fmt: skip
_WEB_SCHEMES = frozenset(["http", "https", "ftp", "ftps", "sftp", "ssh", "git", "svn"])
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-:")
_USERINFO = re.compile(
    r"(?P<user>[^\s:/@'\"]{0,64}):(?P<pw>[^\s@'\"/]{1,128})@(?P<host>[^\s'\"/:@]+)"
)


def _find_url_credentials(text: str, low: str) -> Iterator[_Hit]:
    """``scheme://user:password@host``: the password is the secret."""
    pos = low.find("://")
    while pos >= 0:
        s = pos
        while s > max(0, pos - 40) and low[s - 1] in _SCHEME_CHARS:
            s -= 1
        scheme = low[s:pos].rpartition(":")[2]  # jdbc:postgresql -> postgresql
        rule = None
        if scheme in _DB_SCHEMES or scheme.split("+")[0] in _DB_SCHEMES:
            rule = "connection_string_password"
        elif scheme in _WEB_SCHEMES:
            rule = "url_basic_auth"
        if rule is not None:
            m = _USERINFO.match(text, pos + 3)
            if m is not None and _url_password_ok(m.group("pw"), m, web=rule == "url_basic_auth"):
                yield rule, m.start("pw"), m.end("pw")
        pos = low.find("://", pos + 3)


def _url_password_ok(password: str, m: re.Match[str], *, web: bool) -> bool:
    host = m.group("host").lower()
    if "example" in host or len(password) < 4 or any(c in password for c in "{}$<>:,[]\\"):
        return False
    if len(host) < 2 or not _printable_word(unquote(password)):
        return False  # "a%20secret": prose in documentation; URL-parser test vectors
    if re.search(r"%(?![0-9A-Fa-f]{2})", password):  # %s, %(name)s: a format string
        return False
    if web and not (len(password) >= 8 or _classes(password) >= 3):
        return False  # "http://user:pass@host" in docs; short web passwords are examples
    return not _is_placeholder(password) and password.lower() != m.group("user").lower()


# ---- generic assignments ----------------------------------------------------------------

_GENERIC_NEEDLES = (
    "pass", "pwd", "secret", "token", "_key", "-key", "apikey", "accesskey", "credential",
    "signingkey", "privatekey", "encryptionkey", "masterkey", "authkey",
)  # fmt: skip
_GENERIC_NAME = re.compile(
    r"passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key"
    r"|private[_-]?key|credential|signing[_-]?key|encryption[_-]?key|master[_-]?key"
)
#: names that say "this is a key": a bare hex value there is the key, not a digest
_KEY_NAME = re.compile(r"api[_-]?key|apikey|secret|access[_-]?key|auth[_-]?key|private[_-]?key")
_IDENT_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
_ASSIGN = re.compile(
    r"""(?P<op>["']?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w\[\]., |]{0,40}?[ \t]*)?"""
    r"""(?::=|=>|=(?!=)|:(?!:))|["']?[ \t]*\r?\n[ \t]*value[ \t]*:)[ \t]*"""
    r"""(?:[rbuRBU]?(?P<q>["'`])(?P<qv>[^"'`\r\n]{1,300}?)(?P=q)|(?P<uv>[^\s"'`,;)}\]]{1,300}))"""
)
_NAME_TAIL_SKIP = frozenset((
    "file", "path", "dir", "name", "type", "url", "uri", "field", "header", "prefix", "suffix",
    "length", "len", "size", "env", "var", "format", "fmt", "pattern", "regex", "re", "endpoint",
    "kind", "mode", "count", "hash", "id", "ids", "index", "idx", "label", "param", "arg",
    "attr", "policy", "class", "cls", "func", "fn", "method", "handler", "manager", "provider",
    "source", "store", "storage", "service", "chars", "bytes", "bits", "limit", "ttl", "expiry",
    "expires", "timeout", "max", "min", "required", "enabled", "valid", "validator", "regexp",
    "rx", "tokens", "hint", "help", "prompt", "text", "msg", "message", "error", "input",
    "widget", "form", "button", "column", "col", "table", "schema", "model", "spec", "config",
    "cfg", "setting", "settings", "option", "options", "encoding", "generator", "parser",
    "lexer", "stream", "list", "location", "loc", "ref", "reset", "url_path", "version",
))  # fmt: skip
_LOCK_HASH = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)[-:]", re.IGNORECASE)
_HEX_LENGTHS = frozenset({32, 40, 56, 64, 96, 128})


_MAX_NAME = 100  # longest variable name considered; bounds the work inside long blobs


def _find_generic(text: str, low: str, needles: Iterable[str] = _GENERIC_NEEDLES) -> Iterator[_Hit]:
    """``<name with password/secret/token/api_key/...> = "<random-looking value>"``.

    ``needles``: those of ``_GENERIC_NEEDLES`` to search for (the ones ``low`` holds,
    when the caller knows; a needle that does not occur finds nothing)."""
    seen: set[int] = set()
    for needle in needles:
        pos = low.find(needle)
        while pos >= 0:
            # the identifier around the needle, found by the regex engine (C speed)
            back = _IDENT_RUN.match(low[max(0, pos - _MAX_NAME - 1) : pos][::-1])
            s = pos - (back.end() if back else 0)
            fwd = _IDENT_RUN.match(text, pos + len(needle))
            e = fwd.end() if fwd else pos + len(needle)
            if e - s > 2 * _MAX_NAME or pos - s > _MAX_NAME:
                pos = low.find(needle, e)  # inside a blob, not a variable name: skip it
                continue
            if s not in seen:
                seen.add(s)
                hit = _generic_at(text, low, s, e)
                if hit is not None:
                    yield hit
            pos = low.find(needle, pos + 1)


def _generic_at(text: str, low: str, s: int, e: int) -> _Hit | None:
    name = low[s:e].strip(".-_")
    if not name or _GENERIC_NAME.search(name) is None:
        return None
    tail = re.split(r"[_.-]", name)[-1]
    if tail in _NAME_TAIL_SKIP:
        return None
    am = _ASSIGN.match(text, e)
    if am is None:
        return None
    quoted = am.group("qv") is not None
    value = am.group("qv") if quoted else am.group("uv")
    if not quoted:
        # a bare value must end its line (env, ini, yaml); "x: Type | None" is code
        eol = text.find("\n", am.end(), am.end() + 400)
        rest = text[am.end() : am.end() + 400 if eol < 0 else eol].strip()
        if rest and not rest.startswith("#"):
            return None
    if not _generic_value_ok(value, quoted=quoted, key_name=_KEY_NAME.search(name) is not None):
        return None
    vstart = am.start("qv") if quoted else am.start("uv")
    rule = "generic_password" if ("pass" in name or "pwd" in name) else "generic_secret"
    return rule, vstart, vstart + len(value)


def _printable_word(value: str) -> bool:
    return value.isprintable() and not any(c.isspace() for c in value)


def _base64_prose(value: str) -> bool:
    """Base64 of prose or of a placeholder (Kubernetes ``Secret`` data is base64):

    ``bm90IG15IHJlYWwgcGFzc3dvcmQ=`` is "not my real password", ``cGFzc3dvcmQ=``
    is "password". Base64 of a random-looking value is still a secret.
    """
    if len(value) < 8 or len(value) % 4 or not re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", value):
        return False
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    if not raw.isascii() or not raw.decode("ascii").isprintable():
        return False
    plain = raw.decode("ascii")
    return " " in plain or _is_placeholder(plain) or _wordy(plain)


_CAMEL_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def _wordy(value: str) -> bool:
    """Words joined by case or punctuation ("IAmSensitive", "geheim$parole"): prose.

    Without digits, random letters split into segments of one or two
    characters; real words are longer.
    """
    if any(c.isdigit() for c in value):
        return False
    letters = [c for c in value if c.isalpha()]
    if letters and all(c.islower() for c in letters) and len(re.split(r"[^a-z]+", value)) >= 2:
        return True  # "i-am-the-worst", "geheim$parole"
    words = _CAMEL_WORD.findall(value)
    return bool(words) and sum(len(w) for w in words) >= 4 * len(words)


def _generic_value_ok(value: str, *, quoted: bool, key_name: bool = False) -> bool:
    if len(value) < 8 or any(c.isspace() for c in value) or _CRYPT_HASH.match(value):
        return False
    if _is_placeholder(value) or _UUID.fullmatch(value) or _LOCK_HASH.match(value):
        return False
    if value.startswith(("http:", "https:", "/", "./", "~", "file:", "\\")):
        return False
    if _FILENAME.fullmatch(value) or "\\" in value or "(?" in value or "[^" in value:
        return False  # file names and regular expressions
    if _wordy(value) or _base64_prose(value) or not _printable_word(unquote(value)):
        return False
    if not quoted:
        if value[0] in "&*@!%" or any(c in value for c in "[](){}<>|\\"):
            return False
        if _HEX.fullmatch(value) and len(value) in _HEX_LENGTHS and not key_name:
            return False  # digests in lock files and manifests
        if _IDENT.fullmatch(value):
            # a bare identifier is code (token = tokenize.x); only a digit-mixed,
            # high-entropy bare word (config style: SECRET=a8Fk2...) counts
            digits = sum(c.isdigit() for c in value)
            if "." in value or "_" in value or len(value) < 10 or digits < 2:
                return False
    return _random_enough(value)


# ---- the rule table ---------------------------------------------------------------------

_B64URL = r"[A-Za-z0-9_-]"
_UUID_RX = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_END = r"(?![A-Za-z0-9_])"


def _rules() -> tuple[_Rule, ...]:
    r = _regex_rule
    return (
        _Rule("private_key", ("private key",), _find_private_keys),
        _Rule("url_credentials", ("://",), _find_url_credentials),
        r("private_key", ("ls0tls1crudjti",),
          r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{60,}={0,2}", check=_b64_pem_ok),
        r("aws_access_key_id", ("akia", "asia", "abia", "acca"),
          r"A(?:KIA|SIA|BIA|CCA)[A-Z2-7]{16}" + _END),
        r("aws_secret_access_key", ("secret",),
          r"(?i)aws.{0,20}?secret.{0,20}?[\"']?\s*(?:=|:|=>)\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
          group=1, check=_mixed_ok, boundary=False),
        r("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
          r"gh[pousr]_[A-Za-z0-9]{36,251}" + _END),
        r("github_token", ("github_pat_",), r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _END),
        r("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-"),
          r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,64}" + _END, check=_mixed_ok),
        r("slack_token", ("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"),
          r"xox[baprs]-[0-9]{6,}-[A-Za-z0-9-]{10,200}" + _END),
        r("slack_webhook", ("https://hooks.slack.com/",),
          r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"),
        r("stripe_key", ("sk_live_",), r"sk_live_[A-Za-z0-9]{20,247}" + _END, check=_mixed_ok),
        r("stripe_key", ("rk_live_",), r"rk_live_[A-Za-z0-9]{20,247}" + _END, check=_mixed_ok),
        r("google_api_key", ("aiza",), r"AIza[0-9A-Za-z_-]{35}" + _END),
        r("gcp_service_account_key", ("private key",),
          r"\"private_key\"\s*:\s*\"(-----BEGIN [A-Z ]*PRIVATE KEY-----[^\"]{64,}?"
          r"-----END [A-Z ]*PRIVATE KEY-----(?:\\n)?)\"",
          group=1, boundary=False),
        r("azure_storage_key", ("accountkey",),
          r"(?i)AccountKey\s*=\s*([A-Za-z0-9+/]{80,100}={0,2})", group=1),
        r("azure_shared_access_key", ("sharedaccesskey",),
          r"(?i)SharedAccessKey\s*=\s*([A-Za-z0-9+/]{40,50}={0,2})", group=1, check=_mixed_ok),
        r("azure_sas_token", ("sig=",),
          r"[?&]sv=\d{4}-\d\d-\d\d[^\s\"']*?"
          r"&sig=([A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})",
          group=1, boundary=False),
        r("jwt", ("eyj",),
          r"eyJ" + _B64URL + r"{10,}\.eyJ" + _B64URL + r"{10,}\." + _B64URL + "{16,}" + _END,
          check=_jwt_ok),
        r("npm_token", ("npm_",), r"npm_[A-Za-z0-9]{36}" + _END, check=_mixed_ok),
        r("npm_token", ("_authtoken",), r"_authToken\s*=\s*([A-Za-z0-9_./+=-]{20,})",
          group=1, check=_mixed_ok),
        r("pypi_token", ("pypi-age",), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
        r("twilio_api_key", ("sk",), r"SK[0-9a-f]{32}" + _END, check=_mixed_ok),
        r("twilio_auth_token", ("twilio",),
          r"(?i)twilio\w{0,20}?(?:auth)?_?token\w*[\"']?\s*(?:=|:)\s*[\"']?([0-9a-f]{32})\b",
          group=1),
        r("sendgrid_api_key", ("sg.",), r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END),
        r("openai_api_key", ("sk-",),
          r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
          r"|[A-Za-z0-9]{48})" + _END, check=_mixed_ok),
        r("anthropic_api_key", ("sk-ant-",),
          r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,120}" + _END),
        r("huggingface_token", ("hf_",), r"hf_[A-Za-z0-9]{34,40}" + _END, check=_mixed_ok),
        r("discord_bot_token", ("discord",),
          r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _END,
          check=_mixed_ok),
        r("discord_webhook", ("discord",),
          r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/[A-Za-z0-9_-]{60,70}"),
        _Rule("telegram_bot_token", (":aa",), _find_telegram),
        r("mailgun_api_key", ("key-",), r"key-[0-9a-f]{32}" + _END, check=_mixed_ok),
        r("mailgun_api_key", ("mailgun",),
          r"(?i)mailgun.{0,40}?\b([0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})\b", group=1),
        r("shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"),
          r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END),
        r("square_token", ("sq0atp-", "sq0csp-"),
          r"sq0(?:atp-[A-Za-z0-9_-]{22}|csp-[A-Za-z0-9_-]{43})" + _END),
        r("square_token", ("eaaa",), r"EAAA[A-Za-z0-9_-]{60}" + _END, check=_mixed_ok),
        r("heroku_api_key", ("hrku-",), r"HRKU-[A-Za-z0-9_-]{60}" + _END),
        r("heroku_api_key", ("heroku",), r"(?i)heroku[^\n]{0,40}?\b(" + _UUID_RX + r")\b",
          group=1, boundary=False),
        r("bearer_token", ("bearer",), r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)", group=1,
          check=lambda t, m: not _is_placeholder(t) and _random_enough(t)),
        _Rule("generic", (), _find_generic),
    )  # fmt: skip


@lru_cache(maxsize=1)
def _compiled_rules() -> tuple[_Rule, ...]:
    return _rules()


@lru_cache(maxsize=1)
def _gate_literals() -> tuple[str, ...]:
    """Every rule's gate strings, once each: a text is searched for each of them once."""
    return tuple(sorted({g for rule in _compiled_rules() for g in rule.gate}))


@lru_cache(maxsize=1)
def _scan_terms() -> tuple[str, ...]:
    """Every string whose presence a scan tests: the rules' gates and the generic
    rule's needles. None holds a line break, so each occurrence lies within one line."""
    return tuple(sorted({*_gate_literals(), *_GENERIC_NEEDLES}))


def scan_terms(text: str) -> frozenset[str]:
    """The scan terms (gate strings and generic needles) that occur in ``text``
    lower-cased: what decides which rules a scan of ``text`` runs."""
    low = _lower_aligned(text)
    return frozenset(g for g in _scan_terms() if g in low)


#: names of every content rule, for docs and configuration
SECRET_RULES: tuple[str, ...] = (
    "anthropic_api_key", "aws_access_key_id", "aws_secret_access_key", "azure_sas_token",
    "azure_shared_access_key", "azure_storage_key", "bearer_token", "connection_string_password",
    "discord_bot_token", "discord_webhook", "gcp_service_account_key", "generic_password",
    "generic_secret", "github_token", "gitlab_token", "google_api_key", "heroku_api_key",
    "huggingface_token", "jwt", "mailgun_api_key", "npm_token", "openai_api_key", "private_key",
    "pypi_token", "sendgrid_api_key", "shopify_token", "slack_token", "slack_webhook",
    "square_token", "stripe_key", "telegram_bot_token", "twilio_api_key", "twilio_auth_token",
    "url_basic_auth",
)  # fmt: skip


def _lower_aligned(text: str) -> str:
    """Lowercase with offsets that match ``text`` (ASCII fast path)."""
    if text.isascii():
        return text.encode("ascii").lower().decode("ascii")
    low = text.lower()
    if len(low) == len(text):
        return low
    # a few characters (e.g. U+0130) lower to two; keep those as they are
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def scan_text(text: str, *, terms: Iterable[str] | None = None) -> tuple[SecretFinding, ...]:
    """Every secret in ``text``: findings sorted by position, overlapping spans merged.

    ``terms``: scan terms that may occur in ``text`` (a superset of
    ``scan_terms(text)``, e.g. those of a text holding every line of this one); only
    they are searched for. The findings are the same as without it."""
    return scan_with_terms(text, terms=terms)[0]


def scan_with_terms(
    text: str, *, terms: Iterable[str] | None = None
) -> tuple[tuple[SecretFinding, ...], frozenset[str]]:
    """:func:`scan_text`'s findings and the scan terms ``text`` holds
    (:func:`scan_terms`; with ``terms`` given, those of them it holds)."""
    if not text:
        return (), frozenset()
    low = _lower_aligned(text)
    # one pass over the distinct gate strings and needles, then a set test per rule: the
    # same substring searches as testing each rule's gates, without a generator per rule
    present = _present(low, _scan_terms() if terms is None else frozenset(terms))
    return _scan(text, low, present), present


#: short strings that many scan terms hold (``key``: 13 of them): when one is not in a
#: text, no term holding it is, and those terms are not searched for
_PROBES = ("key", "sk", "token", "://", "gh", "gl", "xox", "shp", "sq0")


@lru_cache(maxsize=1024)
def _search_plan(
    terms: tuple[str, ...] | frozenset[str],
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``terms`` grouped under the first of ``_PROBES`` each holds ("" for a term that
    holds none: always searched for), in a fixed order."""
    groups: dict[str, list[str]] = {}
    for term in sorted(terms):
        probe = next((p for p in _PROBES if p in term), "")
        groups.setdefault(probe, []).append(term)
    return tuple((probe, tuple(group)) for probe, group in sorted(groups.items()))


def _present(low: str, terms: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """Those of ``terms`` that occur in ``low``: the terms under a probe only when the
    probe occurs (a term holding an absent string is absent too)."""
    found: list[str] = []
    for probe, group in _search_plan(terms):
        if not probe or probe in low:
            found.extend(filter(low.__contains__, group))
    return frozenset(found)


@lru_cache(maxsize=4096)
def _plan(present: frozenset[str]) -> tuple[tuple[_Rule, tuple[str, ...] | None], ...]:
    """The rules a text holding exactly the scan terms ``present`` runs, in table
    order: those with no gate or a gate string among them (the rest could not
    match); with the generic rule, the needles it searches for (those present: the
    others would find nothing). Texts hold few distinct sets of terms, so a scan
    looks its rules up instead of testing every rule's gate."""
    plan: list[tuple[_Rule, tuple[str, ...] | None]] = []
    for rule in _compiled_rules():
        if rule.gate and present.isdisjoint(rule.gate):
            continue
        if rule.find is _find_generic:
            plan.append((rule, tuple(n for n in _GENERIC_NEEDLES if n in present)))
        else:
            plan.append((rule, None))
    return tuple(plan)


def _scan(text: str, low: str, present: frozenset[str]) -> tuple[SecretFinding, ...]:
    hits: list[_Hit] = []
    for rule, needles in _plan(present):
        hits.extend(rule.find(text, low) if needles is None else _find_generic(text, low, needles))
    if not hits:
        return ()
    # earliest first; at one start the longest span; then a specific rule over a generic one
    hits.sort(key=lambda h: (h[1], -h[2], h[0].startswith("generic_"), h[0]))
    return findings_of(text, [(start, end, name) for name, start, end in hits])


def findings_of(text: str, spans: Sequence[tuple[int, int, str]]) -> tuple[SecretFinding, ...]:
    """Findings for ``(start, end, rule)`` spans of ``text`` given in the order they
    should win (the first of overlapping spans names the merged one), with lines."""
    out: list[SecretFinding] = []
    line, at = 1, 0
    for start, end, name in _merge(sorted(spans, key=lambda s: s[0])):
        line += text.count("\n", at, start)
        at = start
        out.append(SecretFinding(name, start, end, line))
    return tuple(out)
