#!/usr/bin/env bash
# Runs one command (by default a pytest selection) against a private, throw-away PostgreSQL and Redis, then
# stops them. For working on a part of the suite without scripts/test.sh's ruff, mypy and browser runs:
#   bash scripts/with-services.sh python -m pytest -q tests/memos/memo/test_pipeline.py
# Each invocation has its own ports and state directory, so several can run side by side.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE="$(mktemp -d /var/tmp/analyst-desk-dev.XXXXXX)"
chmod 755 "$STATE"
trap 'stop_started; rm -rf "$STATE"' EXIT
trap 'exit 130' INT TERM

ensure_venv requirements-dev.txt
PG_PORT="$(free_port)"
REDIS_PORT="$(free_port)"
start_postgres "$STATE/pg" "$PG_PORT" test
start_redis "$STATE/redis" "$REDIS_PORT"

export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/analyst_desk"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export ANALYST_DESK_TESTING=true
# Compiled modules are cached in __pycache__ (git-ignored). Where the environment switches that off
# (PYTHONDONTWRITEBYTECODE), every process a test starts (a worker, a watchdog, a command) compiled the
# desk's modules again: about 1.2 s of its 3-4 s of CPU to start Django, in some 80 such processes a run.
unset PYTHONDONTWRITEBYTECODE
export PATH="$VENV/bin:$PATH"

cd "$ROOT"
if [ "$#" -eq 0 ]; then set -- python -m pytest -q; fi
"$@"
