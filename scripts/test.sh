#!/usr/bin/env bash
# `npm test`: the same provisioning as `npm start`, then type check, lint, format check, the
# OpenAPI document's lint (npm run lint:openapi), the whole jest suite (unit, integration, e2e)
# against the real services, and the schemathesis fuzz run. Extra
# arguments go to jest (and then the fuzz run is skipped).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

ensure_node_modules
bash scripts/services up
ensure_chromium
say "type check, lint and format check…"
node_modules/.bin/tsc --noEmit
node_modules/.bin/eslint .
node_modules/.bin/prettier --check --log-level warn .
bash scripts/openapiLint.sh

report="$SHIPYARD_DATA/test/jest-results.json"
mkdir -p "$(dirname "$report")"
status=0
# In band: integration tests share one Temporal namespace and its task queues.
node_modules/.bin/jest --runInBand --json --outputFile="$report" "$@" || status=$?
# One plain closing line that any CI reader understands.
node -e '
  const r = require(process.argv[1]);
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' "$report" || true

# The whole suite (no jest arguments) also fuzzes the API from its OpenAPI document.
if [ $# -eq 0 ]; then
  say "fuzzing the API with schemathesis (npm run fuzz)…"
  fuzz_log="$SHIPYARD_DATA/fuzz/last-run.log"
  mkdir -p "$(dirname "$fuzz_log")"
  fuzz_status=0
  bash scripts/fuzz.sh >"$fuzz_log" 2>&1 || fuzz_status=$?
  if [ "$fuzz_status" -ne 0 ]; then
    tail -n 80 "$fuzz_log"
    status=1
  fi
  echo "fuzz: $(grep -Eo '[0-9]+ generated, [0-9]+ passed( [^=]*)?' "$fuzz_log" | tail -n 1 || echo 'no summary') (exit $fuzz_status; log: $fuzz_log)"
fi
exit "$status"
