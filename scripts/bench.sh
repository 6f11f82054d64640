#!/usr/bin/env bash
# Runs the benchmarks and prints their numbers; benchmarks report, they never fail on a timing.
#   1. tests/bench: speed and memory of the hot paths (pages, live updates, the ledger...); their results are
#      also written to var/bench/results.json.
#   2. every workflow's whole run against the fake LLM server answering after BENCH_LATENCY_MS (200) ms a
#      call (manage.py bench_run --workflow memo|deck|agency|screen|week), on a scratch database with the
#      bundled snapshot loaded; each JSON goes to var/bench/workflows/<workflow>.json and one line a
#      workflow is printed (wall, critical path, ratio, render, CPU per call, calls).
# BENCH_ONLY=tests or BENCH_ONLY=workflows runs one of the two; extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_apt_packages
ensure_venv requirements-dev.txt
cd "$ROOT"
export ANALYST_DESK_TESTING=true
only="${BENCH_ONLY:-}"

if [ "$only" != workflows ]; then
  "$PY" -m pytest -q -s -m bench tests/bench "$@" 2>&1 | grep -E '^\[bench\]|passed|failed|error'
fi

if [ "$only" != tests ]; then
  out="$ROOT/var/bench/workflows"
  mkdir -p "$out"
  latency="${BENCH_LATENCY_MS:-200}"
  # One secret key for the bench's processes, as a desk's share one (scripts/run.sh): the shared cache's
  # entries are signed with it, and a process with a key of its own reads none of another's (each bench_run
  # then selected its first run's evidence again, 30-45 ms, where a worker reads it from the cache).
  DJANGO_SECRET_KEY="$("$PY" -c 'import secrets; print(secrets.token_urlsafe(50))')"
  export DJANGO_SECRET_KEY
  log "bench_run: each workflow at $latency ms a call (scratch database; a few minutes)"
  bash "$ROOT/scripts/with-services.sh" bash -c '
    set -e
    python manage.py migrate -v0
    python manage.py bootstrap_demo >/dev/null
    for workflow in memo deck agency screen week; do
      python manage.py bench_run --workflow "$workflow" --latency-ms "$1" --json > "$2/$workflow.json" \
        2> "$2/$workflow.log" || echo "bench_run --workflow $workflow failed; see $2/$workflow.log"
      python - "$workflow" "$2/$workflow.json" <<PY
import json, sys
workflow, path = sys.argv[1], sys.argv[2]
try:
    report = json.load(open(path))
except ValueError:
    sys.exit(0)
if "parallel" in report:  # the memo: the medians of its runs (a measure without one: as its first run gave it)
    runs = report["parallel"]
    report = {**runs["each"][0], **{k: v["median"] for k, v in runs.items() if isinstance(v, dict)}}
keys = ("wall_s", "critical_path_s", "ratio", "render_s", "cpu_ms_per_call", "calls")
print(f"[bench] {workflow:<7}", "  ".join(f"{key} {report.get(key)}" for key in keys))
PY
    done
  ' _ "$latency" "$out"
fi
