#!/usr/bin/env bash
# `npm run fuzz`: schemathesis (from PyPI, in a virtual environment under the cache folder)
# generates requests from our OpenAPI document and sends them to a real API with an admin
# token, with every check it has (`--checks all`) but the two excluded below; before that, it
# sends the hostile bodies of scripts/fuzzHostile.ts.
# It starts its own API and workers on the dev database (tenant `fuzz`), so it needs nothing
# running; extra arguments go to `schemathesis run` (`--exclude-checks …` to skip more).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

SCHEMATHESIS_VERSION="4.32.5"
FUZZ_PORT="${FUZZ_PORT:-18080}"
FUZZ_EXAMPLES="${FUZZ_EXAMPLES:-100}"
VENV="$SHIPYARD_CACHE/fuzz-venv-$SCHEMATHESIS_VERSION"

ensure_node_modules
if [ ! -x "$VENV/bin/schemathesis" ]; then
  say "installing schemathesis $SCHEMATHESIS_VERSION into $VENV…"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
fi
bash scripts/services up >/dev/null
node_modules/.bin/tsx scripts/migrate.ts latest >/dev/null

pids=()
cleanup() {
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap cleanup EXIT
export LOG_LEVEL=fatal PORT="$FUZZ_PORT" HOST=127.0.0.1
node_modules/.bin/tsx api/server.ts &
pids+=($!)
node_modules/.bin/tsx workers/main.ts &
pids+=($!)

token="$(node_modules/.bin/tsx scripts/cli/main.ts token --tenant fuzz --create-tenant --email fuzz@fuzz.test --roles admin --ttl 2h)"
base="http://127.0.0.1:$FUZZ_PORT"
wait_until api 60 curl -fsS -o /dev/null "$base/healthz"

# Hostile bodies first (test/support/hostileBodies.ts): each must get its 4xx while /healthz,
# probed back to back, never waits over FUZZ_HEALTHZ_BUDGET_MS (default 200).
node_modules/.bin/tsx scripts/fuzzHostile.ts "$base" "$token"

report="$SHIPYARD_DATA/fuzz"
mkdir -p "$report"
# A run's report (every request and response) takes 170–350 MB: only the latest is kept.
rm -f "$report"/ndjson-*.ndjson
# --max-examples per operation (about 200 operations: over twenty thousand requests in all). 100
# finds a NUL character that reaches the database (40 did not); the examples it finds are kept in
# $SHIPYARD_DATA/fuzz and tried first next time.
# Run from the report folder: schemathesis keeps its own state (.schemathesis/) in the cwd.
cd "$report"
cat >"$report/schemathesis.toml" <<'TOML'
# A body over BODY_LIMIT (a string past its maxLength can be) is refused before validation, as 413.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
TOML
exclusions=(
  # 400 by design for rules no schema can say: cursors we issued, rows a body names, future dates… (docs/testing.md)
  positive_data_acceptance
  # A 404 can be about a row the body names (a user to add to a team just made), not the linked resource.
  ensure_resource_availability
)
"$VENV/bin/schemathesis" --config-file "$report/schemathesis.toml" run "$base/api/v1/openapi.json" \
  --header "Authorization: Bearer $token" \
  --checks all --exclude-checks "$(IFS=,; echo "${exclusions[*]}")" \
  --max-examples "$FUZZ_EXAMPLES" \
  --seed "${FUZZ_SEED:-20261123}" \
  --generation-database "$report/examples" \
  --report ndjson --report-dir "$report" \
  "$@"
