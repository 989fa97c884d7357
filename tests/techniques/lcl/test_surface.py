"""The TOML and seed-JSON surfaces: one AST, every error positioned with alternatives."""

from __future__ import annotations

import textwrap

from codelibrarian.techniques import lcl
from codelibrarian.techniques.diagnostics import Diagnostic
from codelibrarian.techniques.tree import steps_of

GOOD = textwrap.dedent(
    """\
    name = "review_auth"
    description = "Change verification with a threat model for auth changes"
    base = "pattern"
    base_id = "pattern_change_verification"
    actions = ["review"]
    domains = ["auth"]
    scopes = ["Small"]
    stratum = "finite"

    [[conditionals]]
    when = "change.touches_auth"
    then = "add"
    primitive_id = "tp_threat_model"
    position = "start"
    [conditionals.else]
    then = "remove"
    primitive_id = "tp_secret_scan"

    [[operators]]
    type = "retry"
    inputs = ["tp_risk_scan"]
    parameters = { attempts = 2 }
    """
)


def _errors(text: str, source: str = "p.toml") -> list[Diagnostic]:
    programs, diags = lcl.programs_from_text(text, source)
    out = [d for d in diags if d.severity == "error"]
    for p in programs:
        out += [d for d in lcl.check(p) if d.severity == "error"]
    return out


def test_toml_program_compiles_both_ways() -> None:
    [program] = lcl.programs_from_text(GOOD, "review_auth.toml")[0]
    residual = program.compile()
    assert residual.composition.metadata.actions == ("review",)
    decided = program.compile(facts={"change": {"touches_auth": True}})
    steps = [s.primitive for s in steps_of(decided.root)]
    assert steps[0] == "tp_threat_model" and "tp_secret_scan" in steps
    other = program.compile(facts={"change": {"touches_auth": False}})
    assert "tp_secret_scan" not in [s.primitive for s in steps_of(other.root)]
    assert [d.value for d in decided.decisions][-1] is True


def test_builder_and_toml_give_the_same_composition() -> None:
    [program] = lcl.programs_from_text(GOOD, "review_auth.toml")[0]
    built = (
        lcl.compose("review_auth", description=program.description)
        .use("pattern_change_verification", kind="pattern")
        .when("change.touches_auth").add("tp_threat_model", position="start")
        .otherwise().remove("tp_secret_scan")
        .wrap("retry", ["tp_risk_scan"], attempts=2)
        .tag(actions=["review"], domains=["auth"], scopes=["Small"])
        .require_stratum("finite")
        .done()
    )  # fmt: skip
    a = program.compile().to_dict()
    b = built.compile().to_dict()
    a.pop("decisions"), b.pop("decisions")
    assert a == b


def test_misspelled_primitive_is_positioned_with_a_suggestion() -> None:
    text = GOOD.replace('primitive_id = "tp_threat_model"', 'primitive_id = "tp_threat_modle"')
    [d] = _errors(text)
    assert d.code == "lcl_primitive_not_found"
    assert (d.loc.source, d.loc.line, d.loc.column) == ("p.toml", 13, 16)
    assert d.suggestions[0] == "tp_threat_model"
    assert "did you mean `tp_threat_model`" in d.render()
    assert d.trace.code == "unverified_by_trace(lcl_primitive_not_found)"


def test_predicate_errors_point_inside_the_string() -> None:
    text = GOOD.replace('when = "change.touches_auth"', 'when = "change.touches_aut and x"')
    errs = _errors(text)
    first = errs[0]
    assert first.code == "lcl_predicate_type"
    assert (first.loc.line, first.loc.column) == (11, 9)
    assert "change.touches_auth" in first.suggestions
    syntax = _errors(
        GOOD.replace('when = "change.touches_auth"', 'when = "change.touches_auth =="')
    )
    assert syntax[0].code == "lcl_predicate_syntax"
    assert (syntax[0].loc.line, syntax[0].loc.column) == (11, 31)


def test_every_problem_is_reported_at_once() -> None:
    text = GOOD.replace(
        'base_id = "pattern_change_verification"', 'base_id = "pattern_change_verificaton"'
    )
    text = text.replace('then = "add"', 'then = "ad"').replace('type = "retry"', 'type = "retyr"')
    errs = _errors(text)
    codes = sorted(d.code for d in errs)
    assert codes == ["lcl_bad_value", "lcl_pattern_not_found"]
    assert all(d.loc.line > 0 for d in errs)


def test_unknown_keys_and_outputs() -> None:
    text = GOOD.replace("[[operators]]", '[[operators]]\noutputs = ["x"]').replace(
        'stratum = "finite"', 'stratum = "finite"\nbase_idd = "x"'
    )
    errs = _errors(text)
    assert {d.code for d in errs} == {"lcl_unknown_key", "lcl_outputs_unused"}
    unknown = next(d for d in errs if d.code == "lcl_unknown_key")
    assert unknown.suggestions[0] == "base_id"


def test_pattern_not_found() -> None:
    errs = _errors('base = "pattern"\nbase_id = "pattern_bug_investigaton"\n')
    [d] = errs
    assert d.code == "lcl_pattern_not_found"
    assert d.suggestions[0] == "pattern_bug_investigation"
    assert (d.loc.line, d.loc.column) == (2, 11)


def test_seed_json_form() -> None:
    text = textwrap.dedent(
        """\
        {
          "preset_security_review": {
            "base": "pattern",
            "baseId": "pattern_change_verification",
            "conditionals": [
              { "when": "change.touchesAuth", "then": "add", "primitiveId": "tp_threat_model" },
              { "when": "codebase.hasTests === false", "then": "add",
                "primitiveId": "tp_review_tests" }
            ]
          }
        }
        """
    )
    [program], diags = lcl.programs_from_text(text, "seed.json")
    assert not diags
    compiled = program.compile(
        facts={"change": {"touches_auth": True}, "codebase": {"has_tests": False}}
    )
    steps = [s.primitive for s in steps_of(compiled.root)]
    assert "tp_threat_model" in steps
    bad = text.replace("touchesAuth", "touchesAuht")
    [d] = _errors(bad, "seed.json")
    assert (d.loc.line, d.loc.column) == (6, 18)
    assert d.suggestions[0] == "change.touches_auth"


def test_several_programs_in_one_file() -> None:
    text = (
        '[presets.a]\nbase = "composition"\nbase_id = "tc_test_backfill"\n\n'
        '[presets.b]\nbase = "primitives"\nprimitive_ids = ["tp_arch_mapping"]\n'
    )
    programs, diags = lcl.programs_from_text(text, "many.toml")
    assert [p.name for p in programs] == ["a", "b"] and not diags
