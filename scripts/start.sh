#!/usr/bin/env bash
# `npm start`: installs what is missing, brings the services up, migrates, then runs the API
# and all three worker pools in the foreground. Ctrl-C stops API and workers; services stay up
# (scripts/services down stops them).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

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
node_modules/.bin/tsx api/server.ts > >(trap '' INT; pretty) 2>&1 &
pids+=($!)
node_modules/.bin/tsx workers/main.ts > >(trap '' INT; pretty) 2>&1 &
pids+=($!)
say "API on http://localhost:${PORT:-8080}/api/v1 (reference: /api/v1/reference), Temporal UI on http://localhost:${SHIPYARD_TEMPORAL_UI_PORT:-8233}"

# If either process dies, stop the other and report failure.
wait -n "${pids[@]}"
status=$?
stop
exit "$status"
