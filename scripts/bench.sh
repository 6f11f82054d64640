#!/usr/bin/env bash
# Runs the benchmarks in tests/bench (speed and memory of the hot paths) and prints their numbers; results
# are also written to var/bench/results.json. Benchmarks report, they never fail on a timing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_apt_packages
ensure_venv requirements-dev.txt
cd "$ROOT"
export ANALYST_DESK_TESTING=true
"$PY" -m pytest -q -s -m bench tests/bench "$@" 2>&1 | grep -E '^\[bench\]|passed|failed|error'
