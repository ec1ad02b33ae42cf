#!/usr/bin/env bash
# `npm run bench:NAME`: the services up, the schema migrated and the build compiled (the HTTP
# benchmarks run the API as deployed, from dist/), then scripts/bench/NAME.ts on the supported
# Node.js LTS. Figures print to stdout; docs/benchmarks.md keeps the current table.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"
[ $# -eq 1 ] && [ -f "scripts/bench/$1.ts" ] || die "usage: scripts/bench.sh NAME (a file scripts/bench/NAME.ts)"
ensure_node_modules
bash scripts/services up >/dev/null
node_modules/.bin/tsx scripts/migrate.ts latest >/dev/null
node_modules/.bin/tsc -p tsconfig.build.json
exec node_modules/.bin/tsx "scripts/bench/$1.ts"
