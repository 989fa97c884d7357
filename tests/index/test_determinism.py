"""Equal inputs, equal ranks and maps: whatever the order, the process or PYTHONHASHSEED."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codelibrarian.index.graph import cochange_edges, combine, pagerank, reference_edges
from tests.helpers import git, run_cli, write_files

from .samples import ALL


def _all_samples() -> dict[str, str]:
    files: dict[str, str] = {}
    for lang, sample in sorted(ALL.items()):
        for rel, text in sample.items():
            files[f"{lang}/{rel}"] = text
    return files


def _build(root: Path, files: dict[str, str], order: list[str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for rel in order:
        write_files(root, {rel: files[rel]})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one", date="2026-01-01T00:00:00+00:00")
    return root


_RANKS = (
    "import json, sys; from pathlib import Path; "
    "from codelibrarian.index.store import open_store; "
    "from codelibrarian.index.repomap import rank_files; "
    "print(json.dumps(rank_files(open_store(Path(sys.argv[1]), readonly=True)), sort_keys=True))"
)


@pytest.mark.slow
def test_same_tree_in_different_orders_and_hash_seeds_gives_identical_output(
    tmp_path: Path,
) -> None:
    import subprocess

    files = _all_samples()
    order = sorted(files)
    shuffled = list(order)
    random.Random(7).shuffle(shuffled)
    a = _build(tmp_path / "a", files, order)
    b = _build(tmp_path / "b", files, list(reversed(shuffled)))
    outputs = []
    for repo, seed in ((a, "0"), (b, "4242")):
        env = {"PYTHONHASHSEED": seed}
        res = run_cli("index", str(repo), "--json", env=env)
        assert res.returncode == 0, res.stderr
        stats = json.loads(res.stdout)
        assert stats["parse_errors"] == []
        maps = []
        for budget in ("120", "400", "4000"):
            m = run_cli("map", "--budget", budget, "-C", str(repo), env=env)
            assert m.returncode == 0, m.stderr
            maps.append(m.stdout)
        ranks = subprocess.run(
            [sys.executable, "-c", _RANKS, str(repo)],
            env={**__import__("os").environ, "PYTHONHASHSEED": str(int(seed) + 1)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        outputs.append((stats["symbols"], stats["edges"], maps, ranks))
    assert outputs[0] == outputs[1]
    ranks = json.loads(outputs[0][3])
    assert len(ranks) == len(files)
    assert all(isinstance(v, int) for v in ranks.values())
    assert abs(sum(ranks.values()) - 1_000_000) <= len(ranks)
    # the map is ranked: a file others use outranks its users
    assert ranks["python/src/shop/models.py"] > ranks["python/src/shop/checkout.py"]


edge = st.tuples(
    st.sampled_from([f"f{i}" for i in range(12)]),
    st.sampled_from([f"f{i}" for i in range(12)]),
    st.integers(min_value=1, max_value=1000),
)


@given(st.lists(edge, max_size=60), st.randoms(use_true_random=False))
def test_pagerank_ignores_input_order(
    edges: list[tuple[str, str, int]], rnd: random.Random
) -> None:
    pers = {"f1": 3, "f5": 1}
    expected = pagerank(edges, pers, nodes=["f0", "f11"])
    shuffled = list(edges)
    rnd.shuffle(shuffled)
    assert pagerank(shuffled, dict(reversed(list(pers.items()))), nodes=["f11", "f0"]) == expected
    assert all(isinstance(v, int) and v >= 0 for v in expected.values())
    assert abs(sum(expected.values()) - 1_000_000) <= len(expected)


def test_personalization_pulls_rank_towards_its_nodes() -> None:
    edges = [("a", "b", 1), ("b", "c", 1), ("c", "a", 1), ("d", "a", 1)]
    plain = pagerank(edges)
    biased = pagerank(edges, {"d": 1})
    assert biased["d"] > plain["d"]
    assert pagerank([]) == {}


def test_reference_weights_follow_the_repo_map_rules() -> None:
    defs = [("parse_config_file", "cfg.py"), ("run", "a.py"), ("_hidden", "b.py")]
    defs += [("get", f"g{i}.py") for i in range(60)]  # defined everywhere: no signal
    refs = [("main.py", "parse_config_file", 1), ("main.py", "run", 1), ("main.py", "_hidden", 1)]
    refs += [("main.py", "get", 9)]
    w = {dst: weight for src, dst, weight in reference_edges(defs, refs)}
    assert w["cfg.py"] > w["a.py"] > w["b.py"]  # specific > plain > private
    assert not any(k.startswith("g") for k in w)


def test_cochange_skips_bulk_commits_and_is_symmetric() -> None:
    commits = [("a.py", "b.py"), ("a.py", "b.py", "c.py"), tuple(f"x{i}" for i in range(40))]
    edges = cochange_edges(commits, max_files=30)
    as_dict = {(a, b): w for a, b, w in edges}
    assert as_dict[("a.py", "b.py")] == as_dict[("b.py", "a.py")] == 2
    assert as_dict[("a.py", "c.py")] == 1
    assert not any(a.startswith("x") for a, _ in as_dict)
    assert combine({"ref": [("a", "b", 5)], "import": [("a", "b", 1)]})[0] == ("a", "b", 105)
