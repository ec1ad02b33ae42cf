# PostgreSQL from Debian's packages: our own cluster under $SHIPYARD_DATA/postgres, superuser
# reached only over a private Unix socket, Shipyard roles and databases from db/init/.

PG_DATA="$SHIPYARD_DATA/postgres"
PG_LOG="$LOG_DIR/postgres.log"
PG_DATABASES=(shipyard shipyard_test shipyard_test_restore)

pg_bindir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$dir" ] && echo "$dir"
}

pg_install() {
  pg_bindir >/dev/null && return 0
  say "installing PostgreSQL from Debian's packages…"
  # Only our own cluster should exist: stop the package from creating and starting one.
  apt_install postgresql-common
  sed -i 's/^#\?\s*create_main_cluster.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf
  apt_install postgresql
}

pg_answers() { "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$SHIPYARD_PG_PORT"; }
pg_ours() { [ -f "$PG_DATA/postmaster.pid" ] && pg_answers; }

pg_superuser_psql() {
  as_service "$(pg_bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h "$RUN_DIR" -p "$SHIPYARD_PG_PORT" -U postgres "$@"
}

pg_start() {
  pg_install
  local bin
  bin="$(pg_bindir)"
  if pg_answers && ! pg_ours; then
    die "port $SHIPYARD_PG_PORT is held by another PostgreSQL; stop it or set SHIPYARD_PG_PORT"
  fi
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    say "postgres: creating cluster in $PG_DATA"
    mkdir -p "$PG_DATA" && chmod 700 "$PG_DATA"
    is_root && chown "$SERVICE_USER:" "$PG_DATA"
    as_service "$bin/initdb" -D "$PG_DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --encoding=UTF8 --locale=C.UTF-8 >"$LOG_DIR/postgres-initdb.log" 2>&1 ||
      { show_log_tail "$LOG_DIR/postgres-initdb.log"; die "initdb failed"; }
  fi
  pg_ours && return 0
  as_service "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start \
    -o "-p $SHIPYARD_PG_PORT -k $RUN_DIR -c listen_addresses=127.0.0.1" >/dev/null ||
    { show_log_tail "$PG_LOG"; die "postgres did not start"; }
}

# Idempotent: roles, databases and default privileges. Cheap enough to run on every `up`.
pg_bootstrap() {
  pg_superuser_psql -d postgres -f "$ROOT/db/init/roles.sql" || die "postgres: creating roles failed"
  local db
  for db in "${PG_DATABASES[@]}"; do
    if [ -z "$(pg_superuser_psql -d postgres -tAc "select 1 from pg_database where datname = '$db'")" ]; then
      pg_superuser_psql -d postgres -c "create database $db owner shipyard_owner" || die "postgres: create database $db failed"
    fi
    pg_superuser_psql -d "$db" -f "$ROOT/db/init/database.sql" || die "postgres: setting up $db failed"
  done
}

pg_stop() {
  pg_ours || return 0
  as_service "$(pg_bindir)/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null && say "postgres stopped"
}

pg_status() {
  if pg_bindir >/dev/null && pg_answers; then
    echo "postgres       up    127.0.0.1:$SHIPYARD_PG_PORT  databases: ${PG_DATABASES[*]}"
  else
    echo "postgres       down  127.0.0.1:$SHIPYARD_PG_PORT  log: $PG_LOG"
  fi
}
