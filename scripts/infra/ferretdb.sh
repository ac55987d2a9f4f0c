#!/usr/bin/env bash
# Build and run FerretDB 1.24.2 (MongoDB wire protocol on SQLite) on loopback.
#
# The build applies ferretdb/sqlite-id-index.patch: FerretDB 1.24 compares `_id` with an SQLite
# expression that differs from the one its unique `_id` index is built on, so every `_id` lookup,
# update and delete scanned the whole table; patched, they search the index (`explain` shows
# `SEARCH ... USING INDEX`), and their cost no longer grows with what the collection holds.
# Existing data folders work unchanged (the index itself is the same).
#
#   scripts/infra/ferretdb.sh build    # build into $TREERAG_CACHE/ferretdb-1.24.2/ferretdb (skipped if present)
#   scripts/infra/ferretdb.sh start    # build if needed, start on 127.0.0.1:$TREERAG_MONGO_PORT, wait for ping
#   scripts/infra/ferretdb.sh stop
#   scripts/infra/ferretdb.sh status
#   scripts/infra/ferretdb.sh path     # print the binary path
#
# Env: TREERAG_MONGO_PORT (27017), TREERAG_CACHE, TREERAG_RUN, PYTHON (pymongo ping check),
#      FERRETDB_LOG_LEVEL (error), TREERAG_FERRETDB_START_TIMEOUT (60 s), TREERAG_FERRETDB_GOMAXPROCS (1).
# State: $TREERAG_RUN/ferretdb-<port>/{data/,ferretdb.log,ferretdb.pid}
set -euo pipefail
INFRA_NAME=ferretdb
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FERRETDB_VERSION=1.24.2
PORT="${TREERAG_MONGO_PORT:-27017}"
check_port_var TREERAG_MONGO_PORT "$PORT"
SOURCES=(main.go go.mod go.sum sqlite-id-index.patch)
STATE="$TREERAG_RUN/ferretdb-$PORT"
PIDFILE="$STATE/ferretdb.pid"
LOGFILE="$STATE/ferretdb.log"
START_TIMEOUT="${TREERAG_FERRETDB_START_TIMEOUT:-60}"

# The stamp records which sources built the binary: editing any of them triggers a rebuild.
src_stamp() {
  (cd "$INFRA_DIR/ferretdb" && cat "${SOURCES[@]}") | sha256sum | cut -d' ' -f1
}
# One folder per set of sources: checkouts of different revisions sharing the cache do not
# rebuild over each other's binary.
BIN_DIR="$TREERAG_CACHE/ferretdb-$FERRETDB_VERSION-$(src_stamp | cut -c1-12)"
BIN="$BIN_DIR/ferretdb"

is_built() {
  [[ -x "$BIN" && -f "$BIN.stamp" ]] && [[ "$(cat "$BIN.stamp")" == "$(src_stamp)" ]]
}

cmd_build() {
  if is_built; then
    log "cached: $BIN"
    return 0
  fi
  need_cmd go "Install Go >= 1.24 (https://go.dev/doc/install) or use your distro's golang package."
  mkdir -p "$BIN_DIR"
  remove_stale_tmp "$BIN_DIR" 'build.*'
  local work
  work="$(mktemp -d "$BIN_DIR/build.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  cp "$INFRA_DIR/ferretdb/main.go" "$INFRA_DIR/ferretdb/go.mod" "$INFRA_DIR/ferretdb/go.sum" "$work/"
  log "building FerretDB $FERRETDB_VERSION (first build compiles modernc SQLite: several minutes on 2 cores)"
  log "build dir: $work"
  local t0=$SECONDS
  (
    cd "$work"
    export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
    # FerretDB's own sources, patched, replace the module (see the top of this file).
    src="$(go mod download -json "github.com/FerretDB/FerretDB@v$FERRETDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -d "$src" ]] || exit 1
    cp -r "$src" "$work/ferretdb-src"
    chmod -R u+w "$work/ferretdb-src"
    # git apply works outside a repository too, and git is there wherever the checkout is.
    (cd "$work/ferretdb-src" && GIT_CEILING_DIRECTORIES="$work" git apply "$INFRA_DIR/ferretdb/sqlite-id-index.patch")
    go mod edit -replace "github.com/FerretDB/FerretDB=./ferretdb-src"
    go build -trimpath -ldflags='-s -w' -o "$work/ferretdb" .
  ) || die "go build failed. Check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY)) and Go >= 1.24; re-run '$0 build'."
  src_stamp >"$work/ferretdb.stamp"
  # Binary first, then the stamp: each mv is atomic, and a binary without a matching stamp is rebuilt.
  mv -f "$work/ferretdb" "$BIN"
  mv -f "$work/ferretdb.stamp" "$BIN.stamp"
  log "built $BIN in $((SECONDS - t0))s"
}

ping_ok() {
  if python_ok pymongo; then
    "$PYTHON" - "$PORT" <<'PY' >/dev/null 2>&1
import sys
from pymongo import MongoClient
c = MongoClient(f"mongodb://127.0.0.1:{sys.argv[1]}/", serverSelectionTimeoutMS=1000, connectTimeoutMS=1000)
c.admin.command("ping")
PY
  else
    port_open "$PORT"
  fi
}

cmd_start() {
  local pid
  if pid="$(pid_alive "$PIDFILE" "$STATE/data")"; then
    log "already running (pid $pid) on 127.0.0.1:$PORT; log: $LOGFILE"
    return 0
  fi
  if port_open "$PORT"; then
    die "port 127.0.0.1:$PORT is already in use by another process. Stop it or set TREERAG_MONGO_PORT."
  fi
  cmd_build
  mkdir -p "$STATE/data"
  [[ -f "$LOGFILE" ]] && mv -f "$LOGFILE" "$LOGFILE.prev"
  log "starting FerretDB on 127.0.0.1:$PORT (data: $STATE/data, log: $LOGFILE)"
  # One Go scheduler thread: SQLite serialises the writes anyway, and with more the idle threads
  # spin for work on a small machine (FerretDB CPU per query 27-32 ms with the default, 16-18 ms
  # with one; bench/bus_query.py). TREERAG_FERRETDB_GOMAXPROCS sets another number.
  GOMAXPROCS="${TREERAG_FERRETDB_GOMAXPROCS:-1}" nohup "$BIN" -listen-addr "127.0.0.1:$PORT" -data-dir "$STATE/data" \
    -log-level "${FERRETDB_LOG_LEVEL:-error}" >>"$LOGFILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PIDFILE"
  local deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      tail -n 20 "$LOGFILE" >&2 || true
      die "FerretDB exited during startup; see $LOGFILE"
    fi
    if ping_ok; then
      log "FerretDB ready: mongodb://127.0.0.1:$PORT/ (pid $pid)"
      return 0
    fi
    sleep 0.2
  done
  tail -n 20 "$LOGFILE" >&2 || true
  die "FerretDB did not answer on 127.0.0.1:$PORT within ${START_TIMEOUT}s; see $LOGFILE (still running as pid $pid: '$0 stop' to kill it)"
}

cmd_status() {
  local pid
  if pid="$(pid_alive "$PIDFILE" "$STATE/data")"; then
    if ping_ok; then
      echo "ferretdb: running (pid $pid) mongodb://127.0.0.1:$PORT/ log=$LOGFILE"
    else
      echo "ferretdb: process alive (pid $pid) but not answering on 127.0.0.1:$PORT log=$LOGFILE"
      return 1
    fi
  else
    echo "ferretdb: stopped (port $PORT)$(is_built && echo ", binary cached at $BIN" || echo ", not built")"
    return 3
  fi
}

case "${1:-}" in
  build) cmd_build ;;
  start) cmd_start ;;
  stop) stop_pidfile "$PIDFILE" "FerretDB (port $PORT)" 30 "$STATE/data" ;;
  status) cmd_status ;;
  path) echo "$BIN" ;;
  *) echo "usage: $0 {build|start|stop|status|path}" >&2; exit 2 ;;
esac
