"""The preset store: built-in presets, ``[presets.<name>]`` in the config, and
``.librarian/presets/<name>.toml`` files saved in the workspace.

A name resolves workspace first, then config, then built-in; a preset that hides
another of the same name says so (``shadows``). Reading and writing files
happens here; turning text into programs is ``techniques.lcl`` (pure).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import NotFound, UsageError
from ..techniques.diagnostics import closest, raise_if_errors
from ..techniques.lcl import Program, programs_from_text
from ..techniques.lcl.presets import builtin_preset_texts, preset_toml, presets_from_config
from ..techniques.primitives import ID_PATTERN

__all__ = ["PresetEntry", "PresetStore", "load_program_file"]

_KINDS = ("workspace", "config", "builtin")


@dataclass(frozen=True, slots=True)
class PresetEntry:
    name: str
    kind: str
    source: str
    description: str
    program: Program
    shadows: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "description": self.description,
            "shadows": list(self.shadows),
        }


def load_program_file(path: Path, *, name: str | None = None, source: str | None = None) -> Program:
    """The program in a ``.toml``/``.json`` file (``name`` picks one of several)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", hint="Check the path.") from None
    programs, diags = programs_from_text(text, source or str(path))
    raise_if_errors(diags)
    if name is not None:
        for p in programs:
            if p.name == name:
                return p
        raise NotFound(
            f"{path} has no program named {name!r}",
            hint=f"Programs in it: {', '.join(p.name for p in programs) or 'none'}.",
        )
    if len(programs) != 1:
        raise UsageError(
            f"{path} holds {len(programs)} programs; name the one you mean",
            hint=f"Programs: {', '.join(p.name for p in programs)}. Pass --name.",
        )
    return programs[0]


def _check_name(name: str) -> None:
    if not ID_PATTERN.match(name):
        raise UsageError(
            f"preset name {name!r} must be lowercase snake_case",
            hint="Use letters, digits and underscores, starting with a letter.",
        )


class PresetStore:
    """Presets of one workspace (see the module docstring)."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self.dir = root / ".librarian" / "presets"

    def _workspace(self) -> list[PresetEntry]:
        out: list[PresetEntry] = []
        if not self.dir.is_dir():
            return out
        for path in sorted(self.dir.glob("*.toml")):
            rel = path.relative_to(self.root).as_posix()
            program = load_program_file(path, source=rel)
            out.append(PresetEntry(program.name, "workspace", rel, program.description, program))
        return out

    def _config(self) -> list[PresetEntry]:
        if not self.config.presets:
            return []
        source = self.config.source or "librarian.toml"
        path = self.root / source
        text = path.read_text(encoding="utf-8") if self.config.source and path.is_file() else ""
        programs, diags = presets_from_config(self.config.presets, source, text)
        raise_if_errors(diags)
        return [PresetEntry(p.name, "config", source, p.description, p) for p in programs]

    def _builtin(self) -> list[PresetEntry]:
        out = []
        for src in builtin_preset_texts():
            programs, diags = programs_from_text(src.text, src.source)
            raise_if_errors(diags)
            out += [PresetEntry(p.name, "builtin", src.source, p.description, p) for p in programs]
        return out

    def entries(self) -> tuple[PresetEntry, ...]:
        """Every visible preset by name; hidden ones are named in ``shadows``."""
        layers = {
            "workspace": self._workspace(),
            "config": self._config(),
            "builtin": self._builtin(),
        }
        chosen: dict[str, PresetEntry] = {}
        hidden: dict[str, list[str]] = {}
        for kind in _KINDS:
            for entry in layers[kind]:
                if entry.name in chosen:
                    hidden.setdefault(entry.name, []).append(f"{kind}:{entry.source}")
                else:
                    chosen[entry.name] = entry
        return tuple(
            PresetEntry(
                e.name, e.kind, e.source, e.description, e.program, tuple(hidden.get(n, ()))
            )
            for n, e in sorted(chosen.items())
        )

    def get(self, name: str) -> PresetEntry:
        entries = {e.name: e for e in self.entries()}
        if name not in entries:
            near = closest(name, entries)
            hint = f"Did you mean {', '.join(near)}? " if near else ""
            raise NotFound(
                f"no preset named {name!r}",
                hint=f"{hint}`librarian presets list` shows them all.",
            )
        return entries[name]

    def save(
        self, name: str, source: Path, *, force: bool = False, program_name: str | None = None
    ) -> Path:
        """Check ``source`` (it must compile) and write it as ``.librarian/presets/<name>.toml``."""
        _check_name(name)
        program = load_program_file(source, name=program_name)
        program.compile()  # raises LclError listing every problem
        out = preset_toml(source.read_text(encoding="utf-8"), str(source), program.name, name)
        return self._write(name, out, force=force)

    def save_text(self, name: str, text: str, *, force: bool = False) -> Path:
        """Check a program's TOML text (it must compile) and store it as preset ``name``."""
        _check_name(name)
        programs, diags = programs_from_text(text, f"{name}.toml")
        raise_if_errors(diags)
        if len(programs) != 1:
            raise UsageError(f"preset {name!r} must hold exactly one program")
        programs[0].compile()
        out = preset_toml(text, f"{name}.toml", programs[0].name, name)
        return self._write(name, out, force=force)

    def _write(self, name: str, out: str, *, force: bool) -> Path:
        target = self.dir / f"{name}.toml"
        if target.exists() and not force:
            raise UsageError(
                f"a preset named {name!r} already exists at {target.relative_to(self.root)}",
                hint="Pass --force to replace it.",
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".toml.tmp")
        tmp.write_text(out, encoding="utf-8")
        tmp.replace(target)
        return target
