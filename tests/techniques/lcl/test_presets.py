"""The preset store: precedence, shadowing, and saving canonical TOML that reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codelibrarian.config import load_config
from codelibrarian.errors import NotFound, UsageError
from codelibrarian.techniques.diagnostics import LclError
from codelibrarian.workspace.presets import PresetStore

SEED_JSON = {
    "preset_quick_debug": {
        "base": "pattern",
        "baseId": "pattern_bug_investigation",
        "overrides": {"corePrimitives": ["tp_hypothesis", "tp_bisect"]},
        "description": "Fast debugging without full root cause analysis",
    },
    "preset_security_review": {
        "base": "pattern",
        "baseId": "pattern_change_verification",
        "conditionals": [
            {"when": "change.touchesAuth", "then": "add", "primitiveId": "tp_threat_model"},
            {
                "when": "change.touchesInput",
                "then": "add",
                "primitiveId": "tp_security_abuse_cases",
            },
        ],
    },
}


def _store(root: Path) -> PresetStore:
    return PresetStore(root, load_config(root))


def test_builtins_are_listed(tmp_path: Path) -> None:
    names = [e.name for e in _store(tmp_path).entries()]
    assert names == [
        "preset_quick_debug",
        "preset_security_review",
        "preset_zero_knowledge_bootstrap",
    ]
    with pytest.raises(NotFound) as info:
        _store(tmp_path).get("preset_quick_debgu")
    assert "preset_quick_debug" in (info.value.hint or "")


def test_config_and_workspace_presets_take_precedence(tmp_path: Path) -> None:
    (tmp_path / "librarian.toml").write_text(
        '[presets.preset_quick_debug]\nbase = "composition"\nbase_id = "tc_root_cause_recovery"\n'
        'description = "ours"\n\n[presets.mine]\nbase = "primitives"\n'
        'primitive_ids = ["tp_arch_mapping"]\n',
        encoding="utf-8",
    )
    entries = {e.name: e for e in _store(tmp_path).entries()}
    quick = entries["preset_quick_debug"]
    assert quick.kind == "config" and quick.description == "ours"
    assert quick.shadows == ("builtin:techniques/data/presets/preset_quick_debug.toml",)
    assert entries["mine"].program.compile().stratum == "finite"


def test_bad_config_preset_is_positioned(tmp_path: Path) -> None:
    (tmp_path / "librarian.toml").write_text(
        '[presets.bad]\nbase = "primitives"\nprimitive_ids = ["tp_arch_mapping"]\ntemplte = "x"\n',
        encoding="utf-8",
    )
    with pytest.raises(LclError) as info:
        _store(tmp_path).entries()
    d = info.value.errors[0]
    assert d.loc.source == "librarian.toml" and d.loc.line == 4 and d.suggestions[0] == "template"


def test_save_from_the_seed_json_form(tmp_path: Path) -> None:
    src = tmp_path / "seed.json"
    src.write_text(json.dumps(SEED_JSON, indent=2), encoding="utf-8")
    store = _store(tmp_path)
    path = store.save("security", src, program_name="preset_security_review")
    text = path.read_text(encoding="utf-8")
    assert 'when = "change.touches_auth"' in text and "touchesAuth" not in text
    saved = store.get("security")
    assert saved.kind == "workspace" and saved.source == ".librarian/presets/security.toml"
    facts = {"change": {"touches_auth": True}}
    original = store.get("preset_security_review").program.compile(facts=facts).to_dict()["tree"]
    assert saved.program.compile(facts=facts).to_dict()["tree"] == original
    with pytest.raises(UsageError):
        store.save("security", src, program_name="preset_security_review")
    store.save("security", src, program_name="preset_quick_debug", force=True)
    assert store.get("security").description.startswith("Fast debugging")


def test_save_refuses_what_does_not_compile(tmp_path: Path) -> None:
    src = tmp_path / "p.toml"
    src.write_text('base = "pattern"\nbase_id = "pattern_nope"\n', encoding="utf-8")
    with pytest.raises(LclError):
        _store(tmp_path).save("p", src)
    assert not (tmp_path / ".librarian" / "presets" / "p.toml").exists()
    with pytest.raises(UsageError):
        _store(tmp_path).save("Bad-Name", src)
