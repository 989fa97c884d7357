"""Exact, offline token counting.

``bpe-openai`` ships the o200k_base and cl100k_base encodings inside the wheel, so
counting never touches the network. Models whose tokenizer is public map to their
encoding; for families whose tokenizer is not public (Claude, Gemini, local models)
we count with o200k_base and multiply by a documented safety factor, rounding up,
so a budget computed here is never smaller than what the model will see. The
factors and the evidence for them are in ``docs/tokenizers.md``.

Counts are cached by content hash: the same text is never encoded twice in a
process, which keeps the composer's render/shrink loop cheap.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
import warnings
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import UsageError

__all__ = [
    "ENCODINGS",
    "SAFETY_FACTORS",
    "BpeTokenizer",
    "ScaledTokenizer",
    "Tokenizer",
    "count_joined",
    "count_pieces",
    "encoding_for_model",
    "fit_prefix",
    "get_tokenizer",
    "is_known_model",
    "prefix_fits",
]

ENCODINGS = ("o200k_base", "cl100k_base")
DEFAULT_MODEL = "gpt-4o"

_CACHE_ENTRIES = 65_536
#: characters of text the piece memo keeps (``count_pieces``; about 4 MB of ASCII)
_PIECE_CHARS = 4_000_000


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens for one target model. Implementations must be pure."""

    @property
    def name(self) -> str:
        """Stable identifier, part of cache keys and decision records."""
        ...

    def count(self, text: str) -> int:
        """Exact number of tokens the target model sees for ``text``."""
        ...


@dataclass(frozen=True, slots=True)
class _Family:
    prefixes: tuple[str, ...]
    encoding: str
    factor_permille: int  # 1000 = exact


# Safety factors (per-mille) for tokenizers that are not public. Each is an upper
# bound of published measurements against o200k_base, with a margin; the sources
# and arithmetic are in docs/tokenizers.md. Change them only together with the doc.
_CLAUDE_LEGACY = 1350  # Claude 2 - 4.6: +16% prose, +21% math, +30% Python vs GPT-4o
_CLAUDE_CURRENT = 1800  # Claude 4.7+: up to 1.35-1.47x the 4.6 tokenizer, times the above
_GEMINI = 1200  # Gemini / Gemma SentencePiece: ~5-10% above o200k on English
_LOCAL = 1350  # Llama 2-class 32k vocabularies: ~1.25x Llama 3 (~ cl100k ~ o200k on code)
_UNKNOWN_FACTOR = 1800  # an unrecognised model gets the largest factor we use

#: model-name prefixes, checked in order (most specific first)
_FAMILIES: tuple[_Family, ...] = (
    _Family(("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss"), "o200k_base", 1000),
    _Family(("o1", "o3", "o4", "codex"), "o200k_base", 1000),
    _Family(("gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada"), "cl100k_base", 1000),
    _Family(("gemini", "gemma"), "o200k_base", _GEMINI),
    _Family(
        (
            "llama",
            "codellama",
            "qwen",
            "mistral",
            "mixtral",
            "codestral",
            "deepseek",
            "phi",
            "starcoder",
            "granite",
            "yi-",
        ),
        "o200k_base",
        _LOCAL,
    ),
)
_CLAUDE_PREFIXES = ("claude", "anthropic")
_UNKNOWN = _Family((), "o200k_base", _UNKNOWN_FACTOR)
#: hosting prefixes stripped before matching ("openrouter/anthropic/claude-3.5", "ollama:llama3")
_HOSTS = ("openai", "anthropic", "google", "ollama", "lmstudio", "azure", "bedrock", "vertex")

#: published per-family factors (per-mille), for docs and ``librarian doctor``
SAFETY_FACTORS: dict[str, int] = {
    "claude (up to 4.6)": _CLAUDE_LEGACY,
    "claude (4.7 and later, or version unknown)": _CLAUDE_CURRENT,
    "gemini / gemma": _GEMINI,
    "local (llama, qwen, mistral, deepseek, ...)": _LOCAL,
    "unknown": _UNKNOWN_FACTOR,
}

_VERSION = re.compile(r"(?<![0-9])(\d{1,2})(?:[-.](\d{1,2}))?(?![0-9])")


def _claude_factor(name: str) -> int:
    """Claude models before 4.7 share the older tokenizer; 4.7 and later are larger."""
    match = _VERSION.search(name)
    if match is None:
        return _CLAUDE_CURRENT
    major = int(match.group(1))
    minor = int(match.group(2) or 0)
    return _CLAUDE_LEGACY if (major, minor) < (4, 7) else _CLAUDE_CURRENT


def _normalise(model: str) -> str:
    lowered = model.strip().lower()
    for host in _HOSTS:
        if lowered.startswith(host + ":"):
            lowered = lowered[len(host) + 1 :]
            break
    if "/" in lowered:
        lowered = lowered.rsplit("/", 1)[1]
    return lowered


def _family_for(model: str) -> _Family:
    lowered = _normalise(model)
    if lowered in ENCODINGS:
        return _Family((lowered,), lowered, 1000)
    if lowered.startswith(_CLAUDE_PREFIXES):
        return _Family(_CLAUDE_PREFIXES, "o200k_base", _claude_factor(lowered))
    if lowered.startswith("meta-llama"):
        lowered = lowered.removeprefix("meta-")
    for fam in _FAMILIES:
        if lowered.startswith(fam.prefixes):
            return fam
    return _UNKNOWN


def is_known_model(model: str) -> bool:
    """Whether ``model`` names a known family (an unknown one counts with the largest factor)."""
    return _family_for(model) is not _UNKNOWN


def encoding_for_model(model: str) -> tuple[str, int]:
    """``(encoding, safety factor per-mille)`` for a model name."""
    fam = _family_for(model)
    return fam.encoding, fam.factor_permille


_ENCODERS: dict[str, Any] = {}
_ENC_LOCK = threading.Lock()


def _load_bindings() -> Any:
    """bpe-openai's compiled tokenizers, loaded without its Python wrapper.

    The wrapper's package ``__init__`` decodes the rank tables of three encodings
    into Python dicts for its tiktoken-compatible API (~2 s of CPU per process, and
    a DeprecationWarning). The Rust backend has the tables compiled in and counts
    without them, so we load just the extension module (~0.2 s). It also has no
    per-call size limit, so long texts are counted whole. Falls back to the public
    API if the package layout ever differs (the version is pinned).
    """
    spec = importlib.util.find_spec("bpe_openai")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        for binary in sorted(Path(folder).glob("_bindings*")):
            if binary.suffix not in {".so", ".pyd"}:
                continue
            ext_spec = importlib.util.spec_from_file_location("bpe_openai._bindings", binary)
            if ext_spec is None or ext_spec.loader is None:
                continue
            module = importlib.util.module_from_spec(ext_spec)
            ext_spec.loader.exec_module(module)
            return module
    with warnings.catch_warnings():  # pragma: no cover - only for another layout
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai


def _encoder(encoding: str) -> Any:
    """The Rust tokenizer for ``encoding`` (``count``, ``encode``, ``decode``)."""
    with _ENC_LOCK:
        enc = _ENCODERS.get(encoding)
        if enc is None:
            module = _load_bindings()
            if hasattr(module, "tokenizer_for_encoding"):
                enc = module.tokenizer_for_encoding(encoding)
            else:  # pragma: no cover - public-API fallback
                enc = module.get_encoding(encoding)._backend
            _ENCODERS[encoding] = enc
        return enc


#: a text of at most this many characters per token of its limit is counted whole
#: (Python source runs about four characters a token)
_WHOLE_CHARS_PER_TOKEN = 4


def _backend_count(enc: Any, text: str, limit: int | None) -> int | None:
    """The backend's count of ``text``, or None when ``limit`` is given and passed.

    The backend's bounded count stops once past the limit but runs about 1.5x the
    time of a plain count per token, so a text that is likely within the limit (by
    its length) is counted whole and compared: the same answer either way, only the
    time differs.
    """
    if limit is None or len(text) <= limit * _WHOLE_CHARS_PER_TOKEN:
        got: int = enc.count(text)
        return got if limit is None or got <= limit else None
    bounded: int | None = enc.count_till_limit(text, limit)
    return bounded


def _clean(text: str) -> str:
    """Lone surrogates cannot cross into Rust; replace them as bpe-openai does."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class BpeTokenizer:
    """Exact counts with one of bpe-openai's encodings."""

    def __init__(self, encoding: str = "o200k_base", *, remember: bool = True) -> None:
        if encoding not in ENCODINGS:
            raise UsageError(
                f"unknown encoding {encoding!r}",
                hint=f"Use one of: {', '.join(ENCODINGS)}.",
            )
        self._encoding = encoding
        self._remembers = remember
        self._cache: OrderedDict[bytes, int] = OrderedDict()
        self._lock = threading.Lock()
        #: exact texts -> counts, for :meth:`count_pieces`: a lookup hashes the text in
        #: C (no encoding, no digest); bounded by the characters it holds
        self._pieces: OrderedDict[str, int] = OrderedDict()
        self._piece_chars = 0

    def uncached(self) -> BpeTokenizer:
        """The same counts without the cache: for a caller that counts each text once.

        The indexer counts every chunk once per parse, so a cache there costs a hash
        per text and ~20 MiB per pool worker for almost no hits.
        """
        return BpeTokenizer(self._encoding, remember=False)

    @property
    def name(self) -> str:
        return self._encoding

    def encode(self, text: str) -> list[int]:
        tokens: list[int] = _encoder(self._encoding).encode(_clean(text))
        return tokens

    def decode(self, tokens: list[int]) -> str:
        result: str = _encoder(self._encoding).decode(tokens)
        return result

    def count_till_limit(self, text: str, limit: int) -> int | None:
        """The exact count of ``text`` if it is at most ``limit`` tokens, else None.

        The backend stops once past the limit, so testing a long text against a cap
        costs about the cap, not the text. Shares :meth:`count`'s cache: a text whose
        count is known is answered from it, and an exact answer (within the limit) is
        the text's count, kept for later calls of either (a candidate's excerpt is
        fitted with this, then counted whole).
        """
        if not text:
            return 0
        if not self._remembers:
            return _backend_count(_encoder(self._encoding), _clean(text), limit)
        key = _key(text)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit if hit <= limit else None
        return self._count_new(text, key, limit)

    def count_pieces(self, text: str) -> int:
        """The exact count of ``text``, summed from the remembered counts of its pieces.

        A piece ends at a newline followed by neither whitespace nor ``/``: no token
        spans such a point (see :meth:`count_joined`), so the sum is the count of the
        whole. A block of a pack repeats the pieces of the excerpts it shows (an
        excerpt's elision marks and unindented lines start pieces), so a block new to
        the render encodes only the pieces new to it: its header, and runs that
        joined another. The text, and the text before its last piece, are remembered
        too: a block followed by a separator (a piece of a pack, ``count_joined``)
        adds only its last piece again.
        """
        if not text:
            return 0
        if not self._remembers:
            return self.count(text)
        memo = self._pieces
        hit = memo.get(text)  # one call in C: no lock needed to read
        if hit is not None:
            return hit
        cuts = [m.end() for m in _PIECE_START.finditer(text)]
        if not cuts:
            return self._piece(text)
        last = cuts.pop()
        head = text[:last]
        before = memo.get(head)
        if before is None:
            before = 0
            start = 0
            for end in cuts:
                before += self._piece(text[start:end])
                start = end
            before += self._piece(text[start:last])
            self._keep(head, before)
        total = before + self._piece(text[last:])
        self._keep(text, total)
        return total

    def bounded(self, text: str, limit: int) -> int | None:
        """:meth:`count_till_limit` without the cache: for a text counted once."""
        return _backend_count(_encoder(self._encoding), _clean(text), limit)

    def recount(self, text: str) -> int:
        """The count of ``text`` encoded whole, never from the cache or from pieces: the
        check a count summed from pieces is held to."""
        if not text:
            return 0
        exact = _backend_count(_encoder(self._encoding), _clean(text), None)
        assert exact is not None
        return exact

    def _piece(self, piece: str) -> int:
        """The count of one piece: remembered, else encoded and kept."""
        hit = self._pieces.get(piece)
        if hit is None:
            hit = self.recount(piece)
            self._keep(piece, hit)
        return hit

    def _keep(self, text: str, total: int) -> None:
        with self._lock:
            if text in self._pieces:
                return
            self._pieces[text] = total
            self._piece_chars += len(text)
            while self._piece_chars > _PIECE_CHARS:
                old, _ = self._pieces.popitem(last=False)
                self._piece_chars -= len(old)

    def _count_new(self, text: str, key: bytes, limit: int | None) -> int | None:
        """Count ``text`` with the backend (up to ``limit`` when given) and keep an exact
        answer under ``key``."""
        got = _backend_count(_encoder(self._encoding), _clean(text), limit)
        if got is not None:
            self._remember(key, got)
        return got

    def _remember(self, key: bytes, total: int) -> None:
        with self._lock:
            self._cache[key] = total
            if len(self._cache) > _CACHE_ENTRIES:
                self._cache.popitem(last=False)

    def count(self, text: str) -> int:
        if not text:
            return 0
        if not self._remembers:
            exact: int = _encoder(self._encoding).count(_clean(text))
            return exact
        key = _key(text)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        total: int = _encoder(self._encoding).count(_clean(text))
        self._remember(key, total)
        return total

    def count_joined(self, parts: Sequence[str], sep: str) -> int:
        """Exact count of ``sep.join(parts)``, summed from cached counts of its pieces.

        Both encodings' pre-tokenizers end a piece at a newline that is followed by
        neither whitespace nor ``/`` (o200k lets a run of punctuation take the
        newlines and slashes after it: ``)`` newline ``//`` is one piece), and no
        token spans two pieces. So the text is cut just before each part that
        starts with such a character when what precedes it ends with a newline, and
        the count of the whole is the sum of the cut pieces' counts. Each piece's
        count is cached (:meth:`count_pieces`, which cuts a piece not met before at
        its own inner points): a render loop that changes one block of a pack counts
        only that block's piece again, and of it only what is new.
        """
        total = 0
        piece: list[str] = []
        after_newline = False  # whether the text so far ends with a newline
        for n, part in enumerate(parts):
            if n and sep:
                piece.append(sep)
                after_newline = sep.endswith("\n")
            if part and after_newline and _starts_piece(part[0]):
                total += self.count_pieces("".join(piece))
                piece = []
            if part:
                piece.append(part)
                after_newline = part.endswith("\n")
        return total + self.count_pieces("".join(piece))


def _starts_piece(char: str) -> bool:
    return not char.isspace() and char != "/"


#: where a piece starts: just after a newline followed by neither whitespace nor ``/``
#: (``[^\s/]`` is ``not ch.isspace() and ch != "/"``: both use Unicode's whitespace)
_PIECE_START = re.compile(r"\n(?=[^\s/])")


def _key(text: str) -> bytes:
    """The cache key of a text: a digest, so the cache holds no source text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def count_joined(tokenizer: Tokenizer, parts: Sequence[str], sep: str) -> int:
    """``tokenizer.count(sep.join(parts))``, from the pieces where the tokenizer allows
    (:meth:`BpeTokenizer.count_joined`), else by counting the joined text."""
    joined = getattr(tokenizer, "count_joined", None)
    if joined is not None and isinstance(tokenizer, BpeTokenizer | ScaledTokenizer):
        result: int = joined(parts, sep)
        return result
    return tokenizer.count(sep.join(parts))


def count_pieces(tokenizer: Tokenizer, text: str) -> int:
    """``tokenizer.count(text)``, summed from remembered pieces where the tokenizer
    allows (:meth:`BpeTokenizer.count_pieces`), else by counting the text."""
    pieces = getattr(tokenizer, "count_pieces", None)
    if pieces is not None and isinstance(tokenizer, BpeTokenizer | ScaledTokenizer):
        result: int = pieces(text)
        return result
    return tokenizer.count(text)


class ScaledTokenizer:
    """o200k counts times a safety factor, rounded up, for non-public tokenizers."""

    def __init__(self, base: BpeTokenizer, factor_permille: int) -> None:
        if factor_permille < 1000:
            raise UsageError("a safety factor below 1.0 would under-count tokens")
        self._base = base
        self._factor = factor_permille

    @property
    def name(self) -> str:
        return f"{self._base.name}x{self._factor}"

    @property
    def factor_permille(self) -> int:
        return self._factor

    def count(self, text: str) -> int:
        return -(-self._base.count(text) * self._factor // 1000)  # integer ceiling

    def count_joined(self, parts: Sequence[str], sep: str) -> int:
        """``count(sep.join(parts))``: the base count is exact from its pieces, and the
        factor is applied once to the whole (a ceiling per piece would over-count)."""
        return -(-self._base.count_joined(parts, sep) * self._factor // 1000)

    def count_pieces(self, text: str) -> int:
        """``count(text)`` from the base's pieces, the factor applied once to the sum."""
        return -(-self._base.count_pieces(text) * self._factor // 1000)

    def recount(self, text: str) -> int:
        """``count(text)`` with the base's text encoded whole (:meth:`BpeTokenizer.recount`)."""
        return -(-self._base.recount(text) * self._factor // 1000)


_TOKENIZERS: dict[tuple[str, int], Tokenizer] = {}


def get_tokenizer(model: str | None = None) -> Tokenizer:
    """The tokenizer to count with for ``model`` (default ``gpt-4o``)."""
    encoding, factor = encoding_for_model(model or DEFAULT_MODEL)
    key = (encoding, factor)
    tok = _TOKENIZERS.get(key)
    if tok is None:
        base = _TOKENIZERS.get((encoding, 1000))
        if base is None:
            base = BpeTokenizer(encoding)
            _TOKENIZERS[(encoding, 1000)] = base
        assert isinstance(base, BpeTokenizer)
        tok = base if factor == 1000 else ScaledTokenizer(base, factor)
        _TOKENIZERS[key] = tok
    return tok


#: where a line of code starts a piece: after a newline followed by a character that is
#: neither whitespace nor "/" (the cut of ``count_joined``), or by spaces or tabs and
#: then any character that is not whitespace (an indented line: the pre-token holding
#: the newline ends at it, as no newline follows in that run of whitespace)
_LINE_START = re.compile(r"\n(?=[^\s/]|[ \t]+\S)")


def prefix_fits(tokenizer: Tokenizer, text: str, limit: int) -> Callable[[int], bool]:
    """``f(end)``: whether ``text[:end]`` counts at most ``limit`` tokens, for ``end`` just
    after a newline (or the text's end): the same answers as counting each prefix.

    With a BPE tokenizer the text's line pieces (``_LINE_START``: no token spans
    their starts) are counted once each, in order, as far as a question needs and
    never past the point where their sum passes ``limit``; a prefix's count is the
    sum of the pieces before its last piece start plus that last, partial piece.
    A search over many prefixes of one long text (cutting an excerpt to a cap)
    then encodes about ``limit`` tokens in all instead of up to ``limit`` per trial.
    """
    if not isinstance(tokenizer, BpeTokenizer):
        return lambda end: tokenizer.count(text[:end]) <= limit
    starts = [0, *(m.end() for m in _LINE_START.finditer(text))]
    sums = [0]  # sums[i]: the count of text[: starts[i]]

    def fits(end: int) -> bool:
        if end <= 0:
            return True  # an empty text counts nothing
        k = bisect_right(starts, end) - 1  # the last piece start at or before ``end``
        while len(sums) <= k:
            if sums[-1] > limit:
                return False  # the pieces before ``end`` already pass the limit
            i = len(sums)
            sums.append(sums[-1] + tokenizer.recount(text[starts[i - 1] : starts[i]]))
        before = sums[k]
        if before > limit:
            return False
        if end == starts[k]:
            return True
        return tokenizer.bounded(text[starts[k] : end], limit - before) is not None

    return fits


def fit_prefix(tokenizer: Tokenizer, text: str, max_tokens: int) -> str:
    """Longest prefix of ``text`` ending at a line (else word) boundary within ``max_tokens``.

    Binary search over boundaries, so it needs O(log n) counts. Returns "" when
    not even the first line fits.
    """
    if max_tokens <= 0 or not text:
        return ""
    if tokenizer.count(text) <= max_tokens:
        return text
    cuts = [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    if not cuts or tokenizer.count(text[: cuts[0]]) > max_tokens:
        cuts = [i for i, ch in enumerate(text) if ch in " \t\n"] or []
    lo, hi, best = 0, len(cuts) - 1, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if tokenizer.count(text[: cuts[mid]]) <= max_tokens:
            best = cuts[mid]
            lo = mid + 1
        else:
            hi = mid - 1
    return text[:best]
