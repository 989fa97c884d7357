from __future__ import annotations

from pathlib import Path

from codelibrarian.composer.constraints import matches
from codelibrarian.config import Config, PolicyConfig
from codelibrarian.policy_engine import PolicyEngine
from codelibrarian.sources.local import LocalSource
from codelibrarian.sources.policy import PolicySource
from codelibrarian.sources.violations import RECENT_SECONDS, add_violation
from codelibrarian.workspace.state import State
from tests.helpers import make_repo, write_files
from tests.sources.conftest import MakeCtx
from tests.sources.repo_fixture import AS_OF, AWS_KEY_ID, AWS_SECRET, PRIVATE_KEY


def _repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "r",
        {
            "CONSTRAINTS.md": "Never log tokens.\n",
            "billing/charge.py": "def charge():\n    return 1\n",
            "app.py": "print('hi')\n",
        },
    )


def test_constraint_docs_danger_zones_and_violations(tmp_path: Path, make_ctx: MakeCtx) -> None:
    root = _repo(tmp_path)
    write_files(root, {"billing/charge.py": "def charge():\n    return 2\n"})
    state = State(root).ensure()
    add_violation(state.violations_path, rule="r1", message="recent", recorded_at=AS_OF - 100)
    add_violation(
        state.violations_path, rule="r2", message="old", recorded_at=AS_OF - RECENT_SECONDS - 1
    )
    add_violation(
        state.violations_path,
        rule="r3",
        message="old but on the changed file",
        file="billing/charge.py",
        recorded_at=AS_OF - RECENT_SECONDS - 1,
        severity="high",
    )
    add_violation(state.violations_path, rule="r4", message="future", recorded_at=AS_OF + 10)
    config = Config(policy=PolicyConfig(danger_zones=("billing/",)))
    cands = PolicySource().gather(make_ctx(root, config=config))
    assert {c.lane for c in cands} == {"policy"}
    docs = [c for c in cands if c.title == "CONSTRAINTS.md"]
    assert docs and docs[0].kind == "constraint" and docs[0].risk == 1000
    zone = [c for c in cands if c.title == "Danger zones"]
    assert zone and "billing/charge.py" in zone[0].text()
    violations = {c.text().split(":")[0]: c for c in cands if c.kind == "violation"}
    assert set(violations) == {"[medium] r1", "[high] r3 at billing/charge.py"}
    high = violations["[high] r3 at billing/charge.py"]
    assert high.relevance == 1000 and high.risk == 1000
    assert violations["[medium] r1"].recency_bucket == 4  # 100 s old


def test_policy_engine_constraints(tmp_path: Path, make_ctx: MakeCtx) -> None:
    root = _repo(tmp_path)
    write_files(
        root,
        {
            "app.py": f'KEY = "{AWS_KEY_ID}"\nSECRET = "{AWS_SECRET}"\n',
            ".env": "TOKEN=abc\n",
        },
    )
    from tests.helpers import git

    git(root, "add", ".env")
    state = State(root).ensure()
    add_violation(state.violations_path, rule="r1", message="m", recorded_at=AS_OF - 5)
    config = Config(policy=PolicyConfig(protected=True))
    ctx = make_ctx(root, config=config)
    cands = [*LocalSource().gather(ctx), *PolicySource().gather(ctx)]
    outcome = PolicyEngine(config).apply(cands, budget=4000)
    cons = outcome.constraints
    env = [c for c in outcome.candidates if c.path == ".env"]
    assert env and all(c.text() == "(content withheld: sensitive file)\n" for c in env)
    assert [r for _, r in outcome.excluded_rules] == ["env_file"]
    assert cons.must_exclude[0].reason == "sensitive file (env_file)"
    assert any(matches(c, cons.must_exclude[0].match) for c in env)
    pinned_ids = {p.match.value for p in cons.pinned}
    app_diff = [c for c in outcome.candidates if c.kind == "local_diff" and c.path == "app.py"]
    assert {c.id for c in app_diff} <= pinned_ids
    assert cons.must_include[0].match.value == "violation"
    assert cons.lane_requirements[0].lane == "rules"
    assert cons.lane_requirements[0].min_tokens == 300
    # secrets in the useful file are redacted span by span, counted by rule
    for cand in outcome.candidates:
        if cand.path == "app.py":
            assert AWS_KEY_ID not in cand.text() and AWS_SECRET not in cand.text()
            assert all(AWS_KEY_ID not in "\n".join(h.lines) for h in cand.hunks)
    assert outcome.redactions
    for r in outcome.redactions:
        assert r.reason == "secret_redacted" and r.spans == sum(n for _, n in r.rules)
        assert "app.py" not in repr(r.to_dict())


def test_large_changes_are_pinned_only_up_to_half_the_budget(
    tmp_path: Path, make_ctx: MakeCtx
) -> None:
    root = _repo(tmp_path)
    write_files(root, {f"m{i}.py": "x = 1\n" for i in range(4)})
    from tests.helpers import commit_all

    commit_all(root, "more")
    write_files(root, {f"m{i}.py": "".join(f"y{j} = {j}\n" for j in range(60)) for i in range(4)})
    ctx = make_ctx(root)
    cands = LocalSource().gather(ctx)
    diffs = [c for c in cands if c.kind == "local_diff"]
    outcome = PolicyEngine(Config()).apply(cands, budget=900)
    pinned = {p.match.value for p in outcome.constraints.pinned}
    assert 0 < len(pinned) < len(diffs)
    assert sum(c.token_estimate for c in diffs if c.id in pinned) <= 450


def test_private_key_file_in_the_change_is_never_read(tmp_path: Path, make_ctx: MakeCtx) -> None:
    root = _repo(tmp_path)
    write_files(root, {"keys/server.pem": PRIVATE_KEY})
    from tests.helpers import git

    git(root, "add", "keys/server.pem")
    cands = LocalSource().gather(make_ctx(root))
    pem = [c for c in cands if c.path == "keys/server.pem"]
    assert len(pem) == 1 and "PRIVATE KEY" not in pem[0].text()
    assert not pem[0].hunks
