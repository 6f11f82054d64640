#!/usr/bin/env bash
# Reader text on the embedded model: runs quick memos and decks (CASES) inline against a private PostgreSQL,
# Redis and llama-server, then prints manage.py reader_report for those runs (withheld sentences out of all,
# what each lever repaired, empty sections, calls and wall time). Takes tens of minutes on two cores.
#   bash scripts/reader-bench.sh [STATE_DIR]           run CASES into STATE_DIR (kept), then report
#   bash scripts/reader-bench.sh --report STATE_DIR    only report the runs already in STATE_DIR
# CASES defaults to "memo:AAPL memo:NVDA memo:TSLA deck:AAPL deck:NVDA"; LOCAL_MODEL to 1.5b. A case
# "agency:TICKER" runs a quick agency; "stability:TICKER" three quick agency reruns in rotated move orders
# (bench_run --reruns 3 --configured-model), written to STATE_DIR/stability-TICKER.json; "screen:demo" the
# demo strategy's weekly screen, its files in STATE_DIR/screen.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPORT_ONLY=false
if [ "${1:-}" = "--report" ]; then REPORT_ONLY=true; shift; fi
STATE="${1:-$(mktemp -d /var/tmp/analyst-desk-reader.XXXXXX)}"
mkdir -p "$STATE/logs"
chmod 755 "$STATE"
trap 'stop_started' EXIT
trap 'exit 130' INT TERM
CASES="${CASES:-memo:AAPL memo:NVDA memo:TSLA deck:AAPL deck:NVDA}"
LOCAL_MODEL="${LOCAL_MODEL:-1.5b}"

ensure_apt_packages
ensure_venv requirements-dev.txt
PG_PORT="$(free_port)"
REDIS_PORT="$(free_port)"
start_postgres "$STATE/pg" "$PG_PORT" test
start_redis "$STATE/redis" "$REDIS_PORT"
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/analyst_desk"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export PATH="$VENV/bin:$PATH"
unset LLM_BASE_URL
cd "$ROOT"
"$PY" manage.py migrate --noinput >"$STATE/logs/migrate.log"

if [ "$REPORT_ONLY" = false ]; then
  ensure_llama_server
  MODEL_PATH="$(ensure_model "$LOCAL_MODEL")" || die "the local model could not be prepared"
  LLAMA_PORT="$(free_port)"
  export LOCAL_LLM_PORT="$LLAMA_PORT"
  "$PY" manage.py seed_governance >"$STATE/logs/governance.log"
  "$PY" manage.py bootstrap_demo >"$STATE/logs/bootstrap.log"
  log "starting the local model ($LOCAL_MODEL) on 127.0.0.1:$LLAMA_PORT"
  start_llama "$MODEL_PATH" "$LLAMA_PORT" "$STATE/logs/llama-server.log"
  for item in $CASES; do
    workflow="${item%%:*}" ticker="${item#*:}"
    if [ "$workflow" = screen ]; then
      # The weekly screen of the demo strategy (the ticker part is ignored): its summary and criteria printed,
      # its files written to STATE_DIR/screen.
      log "screen of the demo strategy (embedded $LOCAL_MODEL)"
      started=$(date +%s)
      "$PY" manage.py screen --inline --out "$STATE/screen" 2>&1 | grep -v WARNING | tail -n 20 || true
      log "screen wall time: $(( $(date +%s) - started )) s"
      continue
    fi
    if [ "$workflow" = stability ]; then
      # The agency's rank stability: three reruns of one brief, the moves' order rotated each time.
      log "agency rank stability on $ticker (quick, embedded $LOCAL_MODEL, three reruns)"
      "$PY" manage.py bench_run --workflow agency --configured-model --reruns 3 --profile quick \
        --ticker "$ticker" --json >"$STATE/stability-$ticker.json" || true
      continue
    fi
    command=analyze; [ "$workflow" = memo ] || command="$workflow"
    log "$workflow $ticker (quick, embedded $LOCAL_MODEL)"
    "$PY" manage.py "$command" "$ticker" --profile quick --inline \
      --brief "Is the position worth holding over the next year?" 2>&1 | tail -n 3 || true
  done
fi
"$PY" manage.py reader_report --json >"$STATE/report.json"
"$PY" manage.py reader_report
