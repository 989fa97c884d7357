"""Configuration: ``librarian.toml`` or ``[tool.librarian]`` in ``pyproject.toml``.

Validated with pydantic at the boundary; the rest of the library sees frozen
values. A bad file is an error naming the file, the key and the fix — never a
silent default. Unknown keys are rejected with the closest valid key.

Budget defaults and validation rules follow the Composer seed
(``DEFAULT_BUDGET_CONFIG`` / ``validateBudgetConfig``).
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import ConfigError

__all__ = [
    "LANES",
    "BudgetConfig",
    "BudgetProblem",
    "Config",
    "LaneBudget",
    "StateConfig",
    "WorkspaceConfig",
    "find_config_file",
    "load_config",
    "validate_budget",
]

LANES: tuple[str, ...] = ("policy", "rules", "local", "structure", "retrieved", "history")
Lane = Literal["policy", "rules", "local", "structure", "retrieved", "history"]


#: a TOML array of strings; strict mode would refuse the list TOML gives us for a tuple
Patterns = Annotated[tuple[str, ...], Field(strict=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class LaneBudget(_Strict):
    min: int = 0
    max: int
    priority: int


def _default_lanes() -> dict[str, LaneBudget]:
    return {
        "policy": LaneBudget(min=200, max=500, priority=0),
        "rules": LaneBudget(min=500, max=2000, priority=1),
        "local": LaneBudget(min=1000, max=3000, priority=2),
        "structure": LaneBudget(min=0, max=1500, priority=3),
        "retrieved": LaneBudget(min=0, max=2000, priority=4),
        "history": LaneBudget(min=0, max=1000, priority=5),
    }


class BudgetProblem(ValueError):
    """A budget rule is broken; ``key`` is the offending key, ``fix`` the next step."""

    def __init__(self, message: str, *, key: str, fix: str) -> None:
        super().__init__(message)
        self.key = key
        self.fix = fix


def validate_budget(total_tokens: int, lanes: dict[str, LaneBudget]) -> None:
    """The seed's ``validateBudgetConfig`` rules and messages, raising ``BudgetProblem``.

    Negative values are checked first (the seed checks them last, so a negative
    min could make a too-large sum of mins look fine), then min > max, then the
    sum of mins against the total.
    """
    order = sorted(lanes, key=lambda n: (lanes[n].priority, n))
    for name in order:
        lane = lanes[name]
        if lane.min < 0 or lane.max < 0:
            field = "min" if lane.min < 0 else "max"
            raise BudgetProblem(
                f"Lane {name}: negative budget",
                key=f"budget.lanes.{name}.{field}",
                fix=f"Set budget.lanes.{name}.{field} to 0 or more.",
            )
    for name in order:
        lane = lanes[name]
        if lane.min > lane.max:
            raise BudgetProblem(
                f"Lane {name}: min ({lane.min}) > max ({lane.max})",
                key=f"budget.lanes.{name}.min",
                fix=f"Lower budget.lanes.{name}.min to at most {lane.max}, or raise its max.",
            )
    sum_mins = sum(lane.min for lane in lanes.values())
    if sum_mins > total_tokens:
        raise BudgetProblem(
            f"Invalid budget: sum of lane mins ({sum_mins}) exceeds total ({total_tokens}). "
            "Reduce mins or increase total_tokens.",
            key="budget.total_tokens",
            fix=f"Set budget.total_tokens to at least {sum_mins}, or lower the lanes' min values.",
        )


def _unknown_lane(name: str) -> BudgetProblem:
    close = difflib.get_close_matches(name, LANES, n=1, cutoff=0.5)
    hint = f"Did you mean {close[0]!r}? " if close else ""
    return BudgetProblem(
        f"unknown lane {name!r}; lanes are {', '.join(LANES)}",
        key=f"budget.lanes.{name}",
        fix=f"{hint}Rename or remove the [budget.lanes.{name}] table.",
    )


def _merge_lane_defaults(value: Any) -> Any:
    """A partial ``[budget.lanes.X]`` table overrides only the fields it names."""
    if not isinstance(value, dict):
        return value
    unknown = sorted(str(name) for name in value if name not in LANES)
    if unknown:
        raise _unknown_lane(unknown[0])
    defaults = _default_lanes()
    merged: dict[str, Any] = {}
    for name, spec in value.items():
        if isinstance(spec, dict) and name in defaults:
            merged[name] = defaults[name].model_dump() | spec
        else:
            merged[name] = spec
    return merged


class BudgetConfig(_Strict):
    """Total budget and per-lane min/max/priority (the seed's ``BudgetConfig``)."""

    total_tokens: int = 8000
    lanes: dict[str, LaneBudget] = Field(default_factory=_default_lanes)

    @field_validator("lanes", mode="before")
    @classmethod
    def _partial_lanes(cls, value: Any) -> Any:
        return _merge_lane_defaults(value)

    @model_validator(mode="after")
    def _check(self) -> BudgetConfig:
        unknown = sorted(set(self.lanes) - set(LANES))
        if unknown:
            raise _unknown_lane(unknown[0])
        if self.total_tokens <= 0:
            raise BudgetProblem(
                f"total_tokens must be positive (got {self.total_tokens})",
                key="budget.total_tokens",
                fix="Set budget.total_tokens to a positive number of tokens, e.g. 8000.",
            )
        # lanes not named in the file keep their defaults
        merged = _default_lanes() | dict(self.lanes)
        object.__setattr__(self, "lanes", {k: merged[k] for k in LANES})
        validate_budget(self.total_tokens, self.lanes)
        return self

    def with_total(self, total_tokens: int) -> BudgetConfig:
        """The same lanes under another total; mins are scaled down if they no longer fit."""
        lanes = dict(self.lanes)
        sum_mins = sum(lane.min for lane in lanes.values())
        if sum_mins > total_tokens:
            lanes = {
                name: LaneBudget(
                    min=lane.min * total_tokens // sum_mins, max=lane.max, priority=lane.priority
                )
                for name, lane in lanes.items()
            }
        return BudgetConfig(total_tokens=total_tokens, lanes=lanes)


#: the largest file size the index reads whole (1 GiB); larger values overflow reads
MAX_FILE_BYTES_LIMIT = 1 << 30

#: the skips of ``workspace/skips.py`` (kept equal to ``skips.CONTENT_SKIPS`` by a test)
SkipKind = Literal["vendored", "generated", "minified", "long_lines"]


class WorkspaceConfig(_Strict):
    max_file_bytes: int = Field(default=1_048_576, gt=0, le=MAX_FILE_BYTES_LIMIT)
    #: extra gitignore-style patterns, on top of .gitignore and .librarianignore
    ignore: Patterns = ()
    #: which "cannot help" skips apply (see docs/index.md); [] indexes everything
    skip: Annotated[tuple[SkipKind, ...], Field(strict=False)] = (
        "vendored",
        "generated",
        "minified",
        "long_lines",
    )
    #: a line this long (characters) marks a file minified or long-lined
    max_line_chars: int = Field(default=5000, ge=200, le=100_000_000)


class IndexConfig(_Strict):
    chunk_max_tokens: int = Field(default=512, ge=64, le=8192)
    #: how many recent commits feed the co-change graph
    cochange_commits: int = Field(default=300, ge=0, le=100_000)
    #: commits touching more files than this are ignored for co-change (bulk edits)
    cochange_max_files: int = Field(default=30, ge=2, le=100_000)
    #: 0 = one per core; more than the machine's cores are capped at the cores
    workers: int = Field(default=0, ge=0, le=256)
    #: seconds to wait for another process's writer lock before giving up (IndexBusy)
    lock_timeout: int = Field(default=60, ge=0, le=86_400)
    #: compose/query on an index missing more than this many files parse this many
    #: (those the task needs most) first and answer; 0 always parses everything first
    first_files: int = Field(default=200, ge=0, le=1_000_000)
    #: finish a partial index in a background process (else on the next calls)
    background: bool = True


class PolicyConfig(_Strict):
    constraint_docs: Patterns = ("CONSTRAINTS.md",)
    danger_zones: Patterns = ()
    #: extra sensitive patterns, added to the built-in defaults
    sensitive_patterns: Patterns = ()
    protected: bool = False
    scan_secrets: bool = True


class RulesConfig(_Strict):
    #: extra rule files (gitignore-style patterns), added to the built-in list
    files: Patterns = ()


class ComposeConfig(_Strict):
    model: str = "gpt-4o"
    format: Literal["markdown", "xml", "json", "plain"] = "markdown"


class ModelProfileConfig(_Strict):
    """What a model can do, for models the built-in capability table does not know
    (``[[execution.models]]``; see docs/execution.md)."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    capabilities: list[str] = Field(default_factory=list)
    levels: dict[str, str] = Field(default_factory=dict)
    context_window: int = Field(default=8192, gt=0)
    latency_ms: int = Field(default=3000, gt=0)


class ExecutionConfig(_Strict):
    #: the provider that works agent steps of ``runs start --provider`` by default
    provider: str | None = None
    #: capability profiles of local models (matched against each step's requirements)
    models: list[ModelProfileConfig] = Field(default_factory=list)


class StateConfig(_Strict):
    """Caps on ``.librarian/`` (see ``persist/bounds.py``); ``doctor`` reports usage."""

    #: composition cache: size and entry caps (least recently used evicted first)
    cache_max_mb: int = Field(default=64, ge=1, le=1_048_576)
    cache_max_entries: int = Field(default=512, ge=1, le=1_000_000)
    #: decision logs and replay sidecars: size cap (oldest evicted first) and maximum age
    decisions_max_mb: int = Field(default=32, ge=1, le=1_048_576)
    decisions_max_age_days: int = Field(default=90, ge=1, le=36_500)


class CacheConfig(_Strict):
    """The per-user parse cache shared by every checkout (``index/blobcache.py``)."""

    #: its folder; "" = $LIBRARIAN_CACHE_DIR, else $XDG_CACHE_HOME/codelibrarian,
    #: else ~/.cache/codelibrarian
    dir: str = ""
    #: size cap in MiB, least recently used entries evicted first; 0 turns it off
    max_mb: int = Field(default=1024, ge=0, le=1_048_576)


class ResidentConfig(_Strict):
    """The resident server CLI calls reach (``cli/resident.py``; docs/cli.md)."""

    #: auto: start one on the first call and use it; manual: use one someone started
    #: (``serve --daemon``, the MCP server); off: always run in-process.
    #: ``LIBRARIAN_RESIDENT`` wins over this key.
    mode: Literal["auto", "manual", "off"] = "auto"
    #: seconds without a call after which an auto-started server ends
    idle_timeout: int = Field(default=600, ge=1, le=86_400)
    #: warm every file's span layout and secret scan in idle time (``service/warm.py``):
    #: first-time tasks then cost about 14% less CPU, for about 150 MB more server
    #: memory on a 2,000-file repository and a new warming run after each index change
    warm_files: bool = False


class Config(_Strict):
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    rules: RulesConfig = Field(default_factory=RulesConfig)
    compose: ComposeConfig = Field(default_factory=ComposeConfig)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    state: StateConfig = Field(default_factory=StateConfig)
    #: LCL programs by name (``[presets.<name>]``); checked by ``techniques.lcl`` when used,
    #: so one bad preset does not stop every other command
    presets: dict[str, dict[str, Any]] = Field(default_factory=dict)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    resident: ResidentConfig = Field(default_factory=ResidentConfig)

    #: where this config came from ("" for defaults); not a config key
    source: str = Field(default="", exclude=True)


def find_config_file(root: Path) -> tuple[Path, str] | None:
    """``(file, table)`` for the repository's config, or None for defaults."""
    toml = root / "librarian.toml"
    if toml.is_file():
        return toml, ""
    if toml.exists() or toml.is_symlink():  # a folder, a broken link, a device
        raise ConfigError(
            "is not a readable file.",
            file="librarian.toml",
            hint="Make librarian.toml a TOML file, or remove it to use the defaults.",
        )
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            text = pyproject.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None  # someone else's unreadable pyproject is not our config
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            # a broken pyproject is ours to report only when it holds our table
            return (pyproject, "tool.librarian") if "[tool.librarian" in text else None
        if isinstance(data.get("tool"), dict) and "librarian" in data["tool"]:
            return pyproject, "tool.librarian"
    return None


def _fields(model: type[BaseModel]) -> list[str]:
    return [k for k in model.model_fields if k != "source"]


def _valid_keys(loc: tuple[str | int, ...]) -> list[str]:
    """Keys that are valid beside the unknown key at ``loc``."""
    parent = tuple(str(p) for p in loc[:-1])
    if not parent:
        return _fields(Config)
    if parent == ("budget",):
        return _fields(BudgetConfig)
    if len(parent) == 3 and parent[:2] == ("budget", "lanes"):
        return _fields(LaneBudget)
    if len(parent) == 1:
        ann = (
            Config.model_fields[parent[0]].annotation if parent[0] in Config.model_fields else None
        )
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return _fields(ann)
    return []


_TYPE_ERRORS = frozenset(
    {
        "int_type",
        "int_from_float",
        "int_parsing",
        "bool_type",
        "bool_parsing",
        "string_type",
        "dict_type",
        "model_type",
        "tuple_type",
        "list_type",
    }
)


def _format_errors(err: ValidationError, file: str, table: str) -> ConfigError:
    first = err.errors()[0]
    loc = tuple(first["loc"])
    key = ".".join(str(p) for p in loc if p != "__root__")
    prefix = f"{table}." if table else ""
    kind = first["type"]
    if kind == "extra_forbidden":
        bad = str(loc[-1])
        valid = _valid_keys(loc)
        close = difflib.get_close_matches(bad, valid, n=1, cutoff=0.5)
        fix = f"Did you mean {close[0]!r}?" if close else ""
        listing = f" Valid keys here: {', '.join(valid)}." if valid else ""
        return ConfigError(
            f"unknown key {bad!r}.",
            file=file,
            key=prefix + key,
            hint=f"{fix}{listing} Remove or rename the key.".strip(),
        )
    problem = (first.get("ctx") or {}).get("error")
    if isinstance(problem, BudgetProblem):
        text = str(problem).rstrip(".")
        return ConfigError(f"{text}.", file=file, key=prefix + problem.key, hint=problem.fix)
    msg = str(first["msg"]).removeprefix("Value error, ").rstrip(".")
    got = first.get("input")
    if kind in {"dict_type", "model_type"}:
        msg = f"must be a TOML table such as [{key}]"
    elif kind in {"tuple_type", "list_type"}:
        msg = 'must be an array of strings, e.g. ["build/", "*.min.js"]'
    if kind in _TYPE_ERRORS:
        return ConfigError(
            f"wrong type: {msg} (got {got!r}).",
            file=file,
            key=prefix + key,
            hint="Fix the value's type; docs/configuration.md lists every key with its type.",
        )
    return ConfigError(
        f"{msg} (got {got!r}).",
        file=file,
        key=(prefix + key) or table or None,
        hint="Fix the value; docs/configuration.md lists every key and its rules.",
    )


def load_config(root: Path, *, explicit: Path | None = None) -> Config:
    """Load and validate the repository's configuration (defaults when there is none)."""
    found: tuple[Path, str] | None
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError("config file not found.", file=str(explicit), hint="Check the path.")
        found = (explicit, "tool.librarian" if explicit.name == "pyproject.toml" else "")
    else:
        found = find_config_file(root)
    if found is None:
        return Config()
    path, table = found
    try:
        rel = str(path.relative_to(root))
    except ValueError:
        rel = str(path)
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"not valid TOML: {exc}.", file=rel, hint="Fix the TOML syntax at that line."
        ) from None
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text.", file=rel, hint="Save the file as UTF-8.") from None
    except OSError as exc:  # unreadable: permissions, a folder, an I/O error
        raise ConfigError(
            f"cannot be read ({exc.strerror or type(exc).__name__}).",
            file=rel,
            hint="Make the file readable by you (chmod u+r), or remove it to use the defaults.",
        ) from None
    if table:
        data = data.get("tool", {}).get("librarian", {})
    if not isinstance(data, dict):
        raise ConfigError("the librarian table must be a TOML table.", file=rel, key=table or None)
    if "source" in data:  # an internal field, not a key users may set
        raise ConfigError(
            "unknown key 'source'.",
            file=rel,
            key=f"{table}.source" if table else "source",
            hint=f"Valid top-level keys: {', '.join(_fields(Config))}. Remove the key.",
        )
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise _format_errors(exc, rel, table) from None
    return config.model_copy(update={"source": rel})
