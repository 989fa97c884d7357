#!/usr/bin/env bash
# Run the history-mined context-quality benchmark (see benchmarks/ctxbench.md) with
# codelibrarian plugged in as a command system named "librarian", next to the baselines.
#
#   benchmarks/run_ctxbench.sh SCRATCH [TAG] [extra run.py arguments...]
#
# SCRATCH is the folder that holds the harness copy `ctxbench/` (with its repositories
# in ctxbench/.data/repos/, its venvs in ctxbench/.data/ and tasks in ctxbench/tasks/),
# prepared as described in benchmarks/ctxbench.md. TAG defaults to "librarian".
# Results land in SCRATCH/ctxbench/results/TAG.md, TAG.json and TAG-raw.jsonl.
#
# Environment overrides (all optional):
#   CTXBENCH_REPOS      comma list; default: every repo with both a task file and a clone
#   CTXBENCH_SYSTEMS    default: naive,bm25,aider-fit,librarian
#   CTXBENCH_BUDGETS    default: 2000,8000
#   CTXBENCH_MODES      default: intent,diff
#   CTXBENCH_MAX_TASKS  cap per repo and mode (deterministic, history-spread subsample)
#   CTXBENCH_PYTHON     interpreter that starts run.py (default: python3; run.py re-executes
#                       itself with ctxbench/.data/venv-bench when that exists)
#   LIBRARIAN_PYTHON    interpreter for the adapter (default: <project>/.venv/bin/python)
set -euo pipefail

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
[[ $# -ge 1 ]] || usage 2
[[ "$1" == "-h" || "$1" == "--help" ]] && usage 0

SCRATCH=$(cd "$1" && pwd)
shift
TAG=librarian
if [[ $# -ge 1 && "$1" != -* ]]; then
  TAG=$1
  shift
fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
PY=${LIBRARIAN_PYTHON:-$ROOT/.venv/bin/python}
ADAPTER=$HERE/ctxbench_adapter.py
BENCH=$SCRATCH/ctxbench

[[ -f "$BENCH/run.py" ]] || { echo "no harness at $BENCH/run.py (see benchmarks/ctxbench.md)" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "no interpreter at $PY (create the project venv, or set LIBRARIAN_PYTHON)" >&2; exit 2; }
[[ -f "$ADAPTER" ]] || { echo "no adapter at $ADAPTER" >&2; exit 2; }

if [[ -z "${CTXBENCH_REPOS:-}" ]]; then
  repos=()
  for t in "$BENCH"/tasks/*.jsonl; do
    [[ -e "$t" ]] || continue
    name=$(basename "$t" .jsonl)
    [[ -d "$BENCH/.data/repos/$name" ]] && repos+=("$name")
  done
  [[ ${#repos[@]} -gt 0 ]] || { echo "no tasks/NAME.jsonl with a clone in .data/repos/NAME" >&2; exit 2; }
  CTXBENCH_REPOS=$(IFS=,; echo "${repos[*]}")
fi

# The templates are run through the shell; run.py shell-quotes the values it substitutes,
# so only our own paths need quoting here. The prepare template may use {repo} only.
qpy=$(printf '%q' "$PY")
qad=$(printf '%q' "$ADAPTER")
COMMAND="librarian=$qpy $qad --repo {repo} --query-file {query_file} --budget {budget} --diff-file {diff_file}"
PREPARE="librarian=$qpy $qad --prepare --repo {repo}"

max_tasks=()
[[ -n "${CTXBENCH_MAX_TASKS:-}" ]] && max_tasks=(--max-tasks "$CTXBENCH_MAX_TASKS")

cd "$SCRATCH"
set -x
exec "${CTXBENCH_PYTHON:-python3}" ctxbench/run.py \
  --systems "${CTXBENCH_SYSTEMS:-naive,bm25,aider-fit,librarian}" \
  --repos "$CTXBENCH_REPOS" \
  --budgets "${CTXBENCH_BUDGETS:-2000,8000}" \
  --modes "${CTXBENCH_MODES:-intent,diff}" \
  --tag "$TAG" \
  "${max_tasks[@]}" \
  --command "$COMMAND" \
  --prepare "$PREPARE" \
  "$@"
