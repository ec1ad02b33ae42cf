#!/usr/bin/env bash
# `npm run lint:openapi`: writes the OpenAPI document the API serves (scripts/openapiDocument.ts,
# no running API or services needed) and lints it with Redocly's recommended rules (redocly.yaml).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

ensure_node_modules
document="$SHIPYARD_DATA/openapi/openapi.json"
mkdir -p "$(dirname "$document")"
node_modules/.bin/tsx scripts/openapiDocument.ts >"$document"
REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint --config redocly.yaml "$document"
