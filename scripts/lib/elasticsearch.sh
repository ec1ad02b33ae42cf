# Elasticsearch 8: Elastic's own distribution published on Maven Central
# (org.elasticsearch.distribution.integ-test-zip), run on the machine's Java 17 as one
# single-node cluster on loopback with security off.

ES_HOME="$SHIPYARD_CACHE/elasticsearch-$ELASTICSEARCH_VERSION"
ES_DATA="$SHIPYARD_DATA/elasticsearch"
ES_PID="$RUN_DIR/elasticsearch.pid"
ES_LOG="$LOG_DIR/elasticsearch.log"
ES_URL="http://127.0.0.1:$SHIPYARD_ES_PORT"

es_java_home() { dirname "$(dirname "$(readlink -f "$(command -v java)")")"; }

es_install() {
  [ -x "$ES_HOME/bin/elasticsearch" ] && return 0
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  command -v mvn >/dev/null || apt_install maven
  command -v unzip >/dev/null || apt_install unzip
  say "fetching Elasticsearch $ELASTICSEARCH_VERSION from Maven Central (once)…"
  local downloads="$SHIPYARD_CACHE/downloads"
  mkdir -p "$downloads"
  # Maven's output (terminal control codes even when quiet) is shown only when it fails.
  mvn -q -B dependency:copy \
    -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ELASTICSEARCH_VERSION:zip" \
    -DoutputDirectory="$downloads" >"$downloads/maven.log" 2>&1 ||
    { cat "$downloads/maven.log"; die "maven could not fetch Elasticsearch $ELASTICSEARCH_VERSION"; }
  local staging
  staging="$(mktemp -d "$SHIPYARD_CACHE/es-unpack.XXXXXX")"
  unzip -q "$downloads/elasticsearch-$ELASTICSEARCH_VERSION.zip" -d "$staging" || die "unzip failed"
  mv "$staging/elasticsearch-$ELASTICSEARCH_VERSION" "$ES_HOME"
  rm -rf "$staging" "$downloads/elasticsearch-$ELASTICSEARCH_VERSION.zip"
  chmod -R a+rX "$ES_HOME"
}

es_answers() { curl -fsS "$ES_URL/_cluster/health?wait_for_status=yellow&timeout=1s"; }

es_start() {
  es_install
  is_pid_alive "$ES_PID" && return 0
  es_answers >/dev/null 2>&1 && die "port $SHIPYARD_ES_PORT is held by another Elasticsearch; stop it or set SHIPYARD_ES_PORT"
  mkdir -p "$ES_DATA/data" "$ES_DATA/tmp" "$LOG_DIR/elasticsearch"
  # The node writes its keystore next to its config, so it gets a private copy.
  [ -d "$ES_DATA/config" ] || cp -r "$ES_HOME/config" "$ES_DATA/config"
  if is_root; then
    chown -R "$SERVICE_USER:" "$ES_DATA" "$LOG_DIR/elasticsearch"
    grant_traverse "$ES_HOME"
  fi
  service_prefix
  spawn_detached "$ES_PID" "${SERVICE_PREFIX[@]}" \
    env ES_JAVA_HOME="$(es_java_home)" ES_PATH_CONF="$ES_DATA/config" ES_TMPDIR="$ES_DATA/tmp" \
    ES_JAVA_OPTS="-Xms$SHIPYARD_ES_HEAP -Xmx$SHIPYARD_ES_HEAP" "$ES_HOME/bin/elasticsearch" \
    -E discovery.type=single-node -E network.host=127.0.0.1 -E http.port="$SHIPYARD_ES_PORT" \
    -E path.data="$ES_DATA/data" -E path.logs="$LOG_DIR/elasticsearch" \
    -E xpack.security.enabled=false -E action.destructive_requires_name=false \
    -E cluster.routing.allocation.disk.threshold_enabled=false \
    >"$ES_LOG" 2>&1 </dev/null &
}

es_wait() {
  wait_until elasticsearch 180 es_answers || { show_log_tail "$ES_LOG"; die "elasticsearch did not start"; }
}

es_stop() { stop_pidfile "$ES_PID" elasticsearch; }

es_status() {
  if es_answers >/dev/null 2>&1; then
    echo "elasticsearch  up    $ES_URL  version $ELASTICSEARCH_VERSION"
  else
    echo "elasticsearch  down  $ES_URL  log: $ES_LOG"
  fi
}
