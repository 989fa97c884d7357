"""The benchmarks are code: each script imports, answers ``--help``, keeps to the rules
of ``benchmarks/README.md`` (no script borrows another's helpers, nothing reaches into
the library's privates or patches its modules) and is listed in the README."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


def _files(suffix: str) -> list[str]:
    """The benchmarks' files ending in ``suffix``, relative to ``benchmarks/``; hidden
    folders (``.data``, where fetched repositories go) and caches are not walked."""
    out: list[str] = []
    for folder, dirs, names in os.walk(BENCHMARKS):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        base = Path(folder).relative_to(BENCHMARKS)
        out += [(base / n).as_posix() for n in names if n.endswith(suffix)]
    return sorted(out)


#: every Python file of the benchmarks
PY_FILES = _files(".py")
#: the scripts: every Python file outside the shared harness package
SCRIPTS = [rel for rel in PY_FILES if not rel.startswith("harness/")]
HARNESS = [
    rel for rel in PY_FILES if rel.startswith("harness/") and not rel.endswith("__init__.py")
]
SHELL = _files(".sh")
#: the module names a script could import another script by
SCRIPT_NAMES = {Path(rel).stem for rel in SCRIPTS}
#: ``x._name`` reads allowed, with why: the context benchmark's harness (another
#: project's file, loaded by ``harness/ctxbench.py``) names its line normalisation
#: ``_norm``; the edit-recall score must use exactly that function
PRIVATE_READS_ALLOWED = {("harness/ctxbench.py", "run._norm")}


def _load(rel: str) -> ModuleType:
    path = BENCHMARKS / rel
    name = "benchmark_" + rel.removesuffix(".py").replace("/", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bench_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``benchmarks/`` and the repository first on ``sys.path``, as a script run from a
    checkout has them (``harness``; ``tests`` for the few that reuse fixtures)."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.syspath_prepend(str(BENCHMARKS))


def test_the_benchmarks_are_found() -> None:
    assert "check_same_packs.py" in SCRIPTS
    assert any(rel.startswith("lab/") for rel in SCRIPTS)
    assert "harness/procs.py" in HARNESS
    assert SHELL == ["run_ctxbench.sh"]


@pytest.mark.usefixtures("bench_path")
@pytest.mark.parametrize("rel", SCRIPTS)
def test_a_script_imports_and_answers_help(rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = _load(rel)
    assert module.__doc__, f"{rel} has no docstring saying what it measures and how to run it"
    with pytest.raises(SystemExit) as stopped:
        module.main(["--help"])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: "), out[:200]


@pytest.mark.usefixtures("bench_path")
@pytest.mark.parametrize("rel", HARNESS)
def test_a_harness_module_imports(rel: str) -> None:
    module = importlib.import_module("harness." + Path(rel).stem)
    assert module.__doc__
    for name in getattr(module, "__all__", ()):
        assert hasattr(module, name), f"{rel} exports {name} but has none"


@pytest.mark.parametrize("rel", SCRIPTS)
def test_a_script_runs_as_a_script(rel: str) -> None:
    text = (BENCHMARKS / rel).read_text(encoding="utf-8")
    tree = ast.parse(text)
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains, f"{rel} has no main()"
    assert [a.arg for a in mains[0].args.args] == ["argv"], f"{rel}: main(argv) takes the args"
    assert text.rstrip().endswith('if __name__ == "__main__":\n    sys.exit(main())'), rel
    # warning filters are set in main, not on import: importing a script (as the tests
    # do) must not change how the importing process treats warnings
    on_import = [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func).startswith("warnings.")
    ]
    assert on_import == [], rel


def test_the_shell_scripts_parse_and_answer_help() -> None:
    for rel in SHELL:
        path = BENCHMARKS / rel
        subprocess.run(["bash", "-n", str(path)], check=True, timeout=30)
        done = subprocess.run(
            ["bash", str(path), "--help"], capture_output=True, text=True, timeout=30, check=False
        )
        assert done.returncode == 0, done.stderr
        assert "Run the" in done.stdout


def _violations(rel: str, text: str) -> list[str]:
    """What the file ``rel`` (its ``text``) does that the benchmark rules forbid."""
    tree = ast.parse(text)
    imported: set[str] = set()
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported.add((alias.asname or alias.name).split(".")[0])
                if alias.name.split(".")[0] in SCRIPT_NAMES:
                    out.append(f"imports the script {alias.name}")
                if alias.name.startswith("codelibrarian") and _private(alias.name):
                    out.append(f"imports the private module {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            imported.update(alias.asname or alias.name for alias in node.names)
            if node.module.split(".")[0] in SCRIPT_NAMES:
                out.append(f"imports from the script {node.module}")
            if node.module.startswith("codelibrarian"):
                if _private(node.module):
                    out.append(f"imports from the private module {node.module}")
                out += [
                    f"imports the private name {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_")
                ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if (rel, ast.unparse(node)) not in PRIVATE_READS_ALLOWED:
                out.append(f"reads the private attribute {ast.unparse(node)}")
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id in imported
            ):
                out.append(f"patches {ast.unparse(target)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
        ):
            out.append(f"calls {ast.unparse(node)}")
    return out


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


@pytest.mark.parametrize("rel", PY_FILES)
def test_no_script_borrows_a_script_reaches_into_privates_or_patches_a_module(rel: str) -> None:
    assert _violations(rel, (BENCHMARKS / rel).read_text(encoding="utf-8")) == []


def test_the_rules_check_catches_each_kind_of_breach() -> None:
    """The check above can fail: a file that breaks every rule is caught once per rule."""
    bad = (
        "import bench_index\n"
        "from ctxbench_fast import main as run\n"
        "from codelibrarian.tokens import _encoder\n"
        "from codelibrarian.providers.probes._common import x\n"
        "from codelibrarian.query import retrieval\n"
        "retrieval.DENSE_WEIGHT_PERMILLE = 1\n"
        "setattr(retrieval, 'X', 2)\n"
        "session = object()\n"
        "session._watchable = False\n"
    )
    assert _violations("lab/breach.py", bad) == [
        "imports the script bench_index",
        "imports from the script ctxbench_fast",
        "imports the private name codelibrarian.tokens._encoder",
        "imports from the private module codelibrarian.providers.probes._common",
        "patches retrieval.DENSE_WEIGHT_PERMILLE",
        "calls setattr(retrieval, 'X', 2)",
        "reads the private attribute session._watchable",
    ]


def test_the_readme_lists_every_script_once_and_nothing_else() -> None:
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    listed = [
        name for line in rows for name in re.findall(r"`([\w/]+\.(?:py|sh))`", line.split("|")[1])
    ]
    files = [rel for rel in [*PY_FILES, *SHELL] if not rel.endswith("__init__.py")]
    assert sorted(listed) == sorted(files)
    assert len(listed) == len(set(listed))


def test_the_lab_holds_what_the_readme_calls_concluded() -> None:
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    assert "## `lab/`" in readme
    lab = {rel for rel in SCRIPTS if rel.startswith("lab/")}
    section = readme.split("## `lab/`", 1)[1].split("\n## ", 1)[0]
    assert lab == set(re.findall(r"`(lab/[\w]+\.py)`", section))
