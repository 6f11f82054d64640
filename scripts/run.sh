#!/usr/bin/env bash
# Runs the Analyst Desk with its embedded defaults: private PostgreSQL and Redis, the local model, the bundled
# real-data snapshot, demo users, RQ workers and the ASGI server. Ctrl-C stops everything it started.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STATE="${ADESK_STATE_DIR:-/var/tmp/analyst-desk-$(id -u)-$(printf '%s' "$ROOT" | sha256sum | cut -c1-8)}"
WEB_PORT="${PORT:-8000}"
PG_PORT="${ADESK_PG_PORT:-5433}"
REDIS_PORT="${ADESK_REDIS_PORT:-6380}"
LLAMA_PORT="${LOCAL_LLM_PORT:-8081}"
LOCAL_MODEL="${LOCAL_MODEL:-1.5b}"
mkdir -p "$STATE/logs"
chmod 755 "$STATE"

trap 'log "stopping"; stop_started; exit 0' INT TERM
trap 'stop_started' EXIT

ensure_apt_packages
ensure_venv requirements.txt

# No DATABASE_URL / REDIS_URL: the private services below, each with a password made once into the state
# directory (mode 600). Given ones are used as they are (with DATABASE_OWNER_URL, if given, for migrations).
PRIVATE_PG=false; [ -z "${DATABASE_URL:-}" ] && PRIVATE_PG=true
PRIVATE_REDIS=false; [ -z "${REDIS_URL:-}" ] && PRIVATE_REDIS=true
export LOCAL_LLM_PORT="$LLAMA_PORT"
export SITE_URL="${SITE_URL:-http://127.0.0.1:$WEB_PORT}"
if [ ! -s "$STATE/secret_key" ]; then
  "$PY" -c "import secrets; print(secrets.token_urlsafe(50))" > "$STATE/secret_key"
  chmod 600 "$STATE/secret_key"
fi
export DJANGO_SECRET_KEY="${DJANGO_SECRET_KEY:-$(cat "$STATE/secret_key")}"

if [ -z "${LLM_BASE_URL:-}" ]; then
  ensure_llama_server
  MODEL_PATH="$(ensure_model "$LOCAL_MODEL")" || die "the local model could not be prepared"
fi

# The desk connects as desk_app, which may read and write rows and nothing else; migrations run as desk_owner,
# which owns the tables (scripts/lib.sh ensure_pg_roles). Only the migrate command is given the owner's URL.
OWNER_URL="${DATABASE_OWNER_URL:-}"
unset DATABASE_OWNER_URL
if [ "$PRIVATE_PG" = true ]; then
  start_postgres "$STATE/pg" "$PG_PORT" run
  export DATABASE_URL="postgres://desk_app:$PG_APP_PASSWORD@127.0.0.1:$PG_PORT/analyst_desk"
  OWNER_URL="postgres://desk_owner:$PG_OWNER_PASSWORD@127.0.0.1:$PG_PORT/analyst_desk"
fi
if [ "$PRIVATE_REDIS" = true ]; then
  start_redis "$STATE/redis" "$REDIS_PORT" run
  export REDIS_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT/0"
fi

log "migrating the database"
DATABASE_OWNER_URL="$OWNER_URL" "$PY" manage.py migrate --noinput >"$STATE/logs/migrate.log" \
  || die "migrations failed; see $STATE/logs/migrate.log"
# A DATABASE_URL that names a superuser or the tables' owner could switch the freeze's triggers off: refused.
"$PY" manage.py check_database_role >/dev/null || die "refusing to start: see the line above"
log "storing the prompt and rubric files as versions (an admin's active choice is kept)"
"$PY" manage.py seed_governance >"$STATE/logs/governance.log" || die "prompt or rubric seeding failed; see $STATE/logs/governance.log"
log "creating groups and demo users, loading the bundled real-data snapshot"
"$PY" manage.py bootstrap_demo >"$STATE/logs/bootstrap.log" || die "bootstrap failed; see $STATE/logs/bootstrap.log"

if [ -z "${LLM_BASE_URL:-}" ]; then
  log "starting the local model ($LOCAL_MODEL) on 127.0.0.1:$LLAMA_PORT"
  start_llama "$MODEL_PATH" "$LLAMA_PORT" "$STATE/logs/llama-server.log"
fi
# DeskWorker imports the pipeline and builds its LLM clients once, before it forks a work-horse per job. A run
# holds its worker from start to end, so a person's run must never wait for a worker a scheduled screen or
# refinement holds: people's runs go on the "default" queue, the desk's scheduled work (the week, the weekly
# screen, refinement cycles, weekly memos, daily SEC refreshes) on "scheduled" (memos.pipeline.driver).
# RQ_WORKERS (default 2) workers take only people's runs; SCHEDULED_WORKERS (default 1) more take "default"
# first, then "scheduled" (RQ empties the first queue it is given before it looks at the next), so spare
# capacity still serves people. The LLM's slots are shared by every worker (Redis), scheduled calls after
# people's (agents.llm.limiter), so more workers add no load the model server was not already bounded for.
RQ_WORKERS="${RQ_WORKERS:-2}"
[[ "$RQ_WORKERS" =~ ^[1-9][0-9]?$ ]] || die "RQ_WORKERS must be a whole number from 1 to 99 (it is '$RQ_WORKERS')"
SCHEDULED_WORKERS="${SCHEDULED_WORKERS:-1}"
[[ "$SCHEDULED_WORKERS" =~ ^[1-9][0-9]?$ ]] \
  || die "SCHEDULED_WORKERS must be a whole number from 1 to 99 (it is '$SCHEDULED_WORKERS')"
for n in $(seq 1 "$RQ_WORKERS"); do
  start_bg "RQ worker $n" "$STATE/logs/worker-$n.log" "$PY" manage.py rqworker default --worker-ttl 60 \
    --worker-class memos.pipeline.worker.DeskWorker
done
for n in $(seq 1 "$SCHEDULED_WORKERS"); do
  start_bg "RQ worker $n for scheduled work" "$STATE/logs/scheduled-worker-$n.log" "$PY" manage.py rqworker \
    default scheduled --worker-ttl 60 --worker-class memos.pipeline.worker.DeskWorker
done
# The watchdog re-enqueues a run whose worker died mid-stage (its heartbeat goes stale).
start_bg "watchdog" "$STATE/logs/watchdog.log" "$PY" manage.py watchdog --every 15
# RQ's cron scheduler queues the refinement check (memos.pipeline.deck.desk.schedule.tick) for the worker every 5 minutes:
# deck briefs set to refine once or twice a day start their cycles there.
start_bg "refinement scheduler" "$STATE/logs/refine-cycles.log" "$PY" manage.py refine_cycles --cron --every 300
# Uvicorn with WEB_WORKERS processes (agency/serve.py); a run page's socket may sit in any of them, and live
# events reach it through the channel layer in Redis.
start_bg "web server" "$STATE/logs/web.log" "$PY" -m agency.serve --host 127.0.0.1 --port "$WEB_PORT"
# The embedded model reads each role's constant system text now, not on a person's first run (one prompt
# at a time, the quick memo's five first, about two minutes for all nineteen on an idle machine; it stops
# once a person's run starts): memos/management/commands/warm_model.py.
if [ -z "${LLM_BASE_URL:-}" ]; then
  start_once "warming the local model's prompt cache" "$STATE/logs/warm-model.log" "$PY" manage.py warm_model
fi

cat >&2 <<MSG

  Analyst Desk is running at http://127.0.0.1:$WEB_PORT/   (admin: http://127.0.0.1:$WEB_PORT/admin/)

  Demo logins (user / password, until an admin changes them):
$("$PY" manage.py bootstrap_demo --list-users | sed 's/^/    /')

  Logs: $STATE/logs    Press Ctrl-C to stop everything this script started.
MSG

wait -n "${STARTED_PIDS[@]}" || true
log "a service exited; see $STATE/logs"
stop_started
exit 1
