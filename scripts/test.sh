#!/usr/bin/env bash
# Runs the whole default test suite (plus ruff and mypy --strict) against real, private PostgreSQL, Redis and
# the embedded 0.5B model, then stops everything it started.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE="$(mktemp -d /var/tmp/analyst-desk-test.XXXXXX)"
chmod 755 "$STATE"
trap 'stop_started; rm -rf "$STATE"' EXIT
trap 'exit 130' INT TERM

# Chromium (Debian's, no download) and fonts for the browser tests.
ensure_apt_packages chromium fonts-liberation libreoffice-impress-nogui
ensure_venv requirements-dev.txt
ensure_llama_server
MODEL_PATH="$(ensure_model 0.5b)" || die "the 0.5B test model could not be prepared"

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
# The end-to-end test of the embedded path starts llama-server itself with these.
export ADESK_LLAMA_SERVER="$LLAMA_SERVER"
export ADESK_TEST_MODEL="$MODEL_PATH"

cd "$ROOT"
log "ruff"
"$VENV/bin/ruff" check . && "$VENV/bin/ruff" format --check .
log "mypy --strict"
"$VENV/bin/mypy" .
# The default suite in parallel worker processes (pytest-xdist): most tests wait on processes, sockets and
# timeouts rather than compute, so more workers than cores pays. Each worker has its own test database and
# Redis databases (tests/testenv.py); worksteal hands a finished worker the tests another has not begun.
# ADESK_TEST_WORKERS=0 runs it in this one process.
WORKERS="${ADESK_TEST_WORKERS:-3}"
log "pytest (default suite, $WORKERS workers)"
"$PY" -m pytest -q -n "$WORKERS" --dist worksteal "$@"
log "pytest (browser, end to end: its own process, see FIELD-NOTES on Playwright and asyncio)"
"$PY" -m pytest -q -m e2e
log "pytest (embedded local model, end to end)"
"$PY" -m pytest -q -m local_model
