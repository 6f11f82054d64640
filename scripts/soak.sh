#!/usr/bin/env bash
# The crash soak: `bash scripts/soak.sh [STAGE] [N]` kills the worker and its work-horse (SIGKILL) N times in
# the middle of STAGE (data, specialists, synthesis, evaluation or memo; default specialists, 20 times),
# lets the watchdog and a fresh worker finish each run, and prints runs completed, calls repeated and
# artefacts duplicated. Private PostgreSQL and Redis, started and stopped by scripts/with-services.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export SOAK_STAGE="${1:-specialists}" SOAK_RUNS="${2:-20}"
bash scripts/with-services.sh python -m pytest -q -s -m bench tests/bench/test_crash_soak.py -p no:cacheprovider 2>&1 \
  | grep -E '^\[(bench|soak)\]|^E |passed|failed|error'
