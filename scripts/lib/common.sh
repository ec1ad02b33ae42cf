# Shared settings and helpers for scripts/services and the npm entry scripts. Sourced, not run.
# Every variable here is listed in the README's configuration table.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SHIPYARD_DATA="${SHIPYARD_DATA:-$ROOT/.data}"
SHIPYARD_CACHE="${SHIPYARD_CACHE:-$HOME/.cache/shipyard}"
RUN_DIR="$SHIPYARD_DATA/run"
LOG_DIR="$SHIPYARD_DATA/logs"

SHIPYARD_PG_PORT="${SHIPYARD_PG_PORT:-5432}"
SHIPYARD_ES_PORT="${SHIPYARD_ES_PORT:-9200}"
SHIPYARD_ES_HEAP="${SHIPYARD_ES_HEAP:-512m}"
SHIPYARD_TEMPORAL_PORT="${SHIPYARD_TEMPORAL_PORT:-7233}"
SHIPYARD_TEMPORAL_UI_PORT="${SHIPYARD_TEMPORAL_UI_PORT:-8233}"

ELASTICSEARCH_VERSION="8.19.21"

# PostgreSQL and Elasticsearch refuse to run as root. When we are root they run as this
# unprivileged system user; otherwise they run as the calling user. (Not plain "shipyard":
# the Elasticsearch 8 launcher misplaces its home when the user name occurs in its install path.)
SERVICE_USER="shipyard-svc"

say() { printf '%s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

apt_install() {
  is_root || die "missing $* — install it (sudo apt-get install $*) and run again"
  if [ -z "${APT_UPDATED:-}" ]; then
    apt-get update -qq >/dev/null || die "apt-get update failed"
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || die "apt-get install $* failed"
}

# Forge scripts run only inside bubblewrap (core/sandbox; README: Security → Script sandbox):
# without it every script step fails. The worker looks for it on /usr/local/bin:/usr/bin:/bin.
ensure_bubblewrap() {
  command -v bwrap >/dev/null || apt_install bubblewrap
}

ensure_service_user() {
  is_root || return 0
  id "$SERVICE_USER" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER" ||
    die "could not create system user $SERVICE_USER"
}

# SERVICE_PREFIX: the command prefix that runs a program as the service user (empty when we
# are not root). as_service runs a command that way.
service_prefix() {
  SERVICE_PREFIX=()
  if is_root; then
    SERVICE_PREFIX=(setpriv --reuid="$SERVICE_USER" --regid="$(id -g "$SERVICE_USER")" --init-groups)
  fi
}
as_service() {
  service_prefix
  "${SERVICE_PREFIX[@]}" "$@"
}

# The service user must reach folders that may sit below a private home (a clone under /root,
# a cache under ~/.cache). Grant it traverse-only rights on exactly the ancestors it lacks.
grant_traverse() {
  is_root || return 0
  local target dir="" part
  target="$(cd "$1" && pwd)"
  # Top-down: a folder below one the user cannot enter would look untraversable too, and an
  # ACL entry on it would replace the read rights the user already has there.
  local IFS=/
  for part in ${target#/}; do
    dir="$dir/$part"
    if ! as_service test -x "$dir"; then
      command -v setfacl >/dev/null || apt_install acl
      setfacl -m "u:$SERVICE_USER:x" "$dir" || die "cannot grant $SERVICE_USER access to $dir"
    fi
  done
}

# Waits up to $2 seconds for command "$3..." to succeed.
wait_until() {
  local what="$1" seconds="$2"
  shift 2
  local i
  for ((i = 0; i < seconds * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  say "$what did not become ready within ${seconds}s"
  return 1
}

# Prints the end of a service log after a failure, so the reason is on screen.
show_log_tail() {
  say "---- last lines of $1 ----"
  tail -n 25 "$1" >&2 2>/dev/null || true
  say "---- full log: $1 ----"
}

# Runs "$@" in a new session, so a terminal's Ctrl-C to `npm start` does not reach the service,
# with its pid in $1. The process writes its own pid before exec: setsid may fork, and then
# `$!` would be a parent that is already gone.
spawn_detached() {
  local pidfile="$1"
  shift
  setsid bash -c 'echo $$ >"$0" && exec "$@"' "$pidfile" "$@"
}

is_pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {
  local pidfile="$1" name="$2" i
  is_pid_alive "$pidfile" || { rm -f "$pidfile"; return 0; }
  kill "$(cat "$pidfile")" 2>/dev/null || true
  for ((i = 0; i < 60; i++)); do
    is_pid_alive "$pidfile" || break
    sleep 0.5
  done
  is_pid_alive "$pidfile" && kill -9 "$(cat "$pidfile")" 2>/dev/null
  rm -f "$pidfile"
  say "$name stopped"
}

# Installs node_modules when missing or older than the lock file.
ensure_node_modules() {
  if [ ! -d "$ROOT/node_modules" ] || [ "$ROOT/package-lock.json" -nt "$ROOT/node_modules/.package-lock.json" ]; then
    say "installing npm dependencies…"
    # `npm install`, not `npm ci`: the lock this npm writes lists only the Linux builds of
    # platform-specific optional packages (@swc/core-*), and `npm ci` then calls it out of sync.
    (cd "$ROOT" && npm install --no-audit --no-fund --loglevel=error) || die "npm install failed"
  fi
}
