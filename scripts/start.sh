#!/usr/bin/env bash
# `npm start`: installs what is missing, brings the services up, migrates, then runs the API
# and all three worker pools in the foreground. Ctrl-C stops API and workers; services stay up
# (scripts/services down stops them).
set -euo pipefail
started_ms=$(date +%s%3N)
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

api_port="${PORT:-8080}"
# Before anything starts: a port that is taken would otherwise end the API with a stack trace.
if (exec 3<>"/dev/tcp/127.0.0.1/$api_port") 2>/dev/null; then
  die "port $api_port is already in use (another npm start?): stop that process or set PORT"
fi

ensure_node_modules
bash scripts/services up
node_modules/.bin/tsx scripts/migrate.ts latest

# Readable logs on a terminal, JSON lines otherwise.
pretty() {
  if [ -t 1 ]; then node_modules/.bin/pino-pretty --colorize --translateTime SYS:HH:MM:ss.l --ignore pid,hostname; else cat; fi
}

pids=()
stop() {
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap 'stop; exit 0' INT TERM

# The log pipes ignore Ctrl-C: they end when their process does, after its last (shutdown) lines.
# The API's young generation as deployed (docs/operations.md, "The API's memory").
NODE_OPTIONS=--max-semi-space-size=16 node_modules/.bin/tsx api/server.ts > >(trap '' INT; pretty) 2>&1 &
pids+=($!)
# The workers' log also marks the moment they poll ("workers running").
workers_ready="$RUN_DIR/workers.ready"
rm -f "$workers_ready"
node_modules/.bin/tsx workers/main.ts > >(trap '' INT; tee >(grep -q -m1 '"workers running"' && touch "$workers_ready") | pretty) 2>&1 &
pids+=($!)
# The addresses once the API answers and the workers poll, with how long the start took.
(
  wait_until api 120 curl -fsS -o /dev/null "http://127.0.0.1:$api_port/healthz" || exit 0
  wait_until workers 120 test -f "$workers_ready" || exit 0
  ms=$(($(date +%s%3N) - started_ms))
  say "ready in $((ms / 1000)).$(((ms % 1000) / 100)) s: API on http://localhost:$api_port/api/v1 (reference: /api/v1/reference), Temporal UI on http://localhost:${SHIPYARD_TEMPORAL_UI_PORT:-8233}"
) &

# If either process dies, stop the other and report failure.
wait -n "${pids[@]}"
status=$?
stop
exit "$status"
