#!/usr/bin/env bash
# `npm test`: the same provisioning as `npm start`, then type check, lint and the whole jest
# suite (unit, integration, e2e) against the real services. Extra arguments go to jest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

ensure_node_modules
bash scripts/services up
say "type check and lint…"
node_modules/.bin/tsc --noEmit
node_modules/.bin/eslint .

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
exit "$status"
