#!/usr/bin/env bash
# The whole system as local background processes: Kafka, FerretDB, every stage, the gateway.
#
#   scripts/stack.sh up       # (make up)   start everything, wait until the gateway is ready
#   scripts/stack.sh down     # (make down) stop what `up` started, then Kafka and FerretDB
#   scripts/stack.sh status
#
# Env: PYTHON (the venv's python), TREERAG_RUN (state; default $TREERAG_CACHE/run),
#      TREERAG_KAFKA_PORT (9092), TREERAG_MONGO_PORT (27017), TREERAG_GATEWAY_PORT (8000),
#      TREERAG_GATEWAY_HOST (127.0.0.1), TREERAG_SCALE_<STAGE> replicas per stage (1), e.g.
#      TREERAG_SCALE_INDEXER=3; TREERAG_BLOB_DIR (uploaded files' bytes; default
#      $TREERAG_RUN/blobs-<mongo port>/<db>); any other TREERAG_* setting is passed to the services;
#      TREERAG_PROMETHEUS_PORT (9090).
# Replica i of a stage serves /metrics on the stage's default port + 10*i (indexer 9101, 9111...);
# the gateway on its own (9100), without a key.
# The gateway asks for API keys (TREERAG_AUTH=on): `up` creates an admin key of the default
# tenant once and prints it (kept in $TREERAG_RUN/stack/admin.key, readable by its owner only);
# `treerag keys` makes others. TREERAG_AUTH=off serves without keys.
# When the `prometheus` binary is on PATH (`make prometheus`), `up` also runs it with
# deploy/prometheus/prometheus.local.yml and one scrape target per replica (targets/<job>.json).
# Logs: $TREERAG_RUN/stack/logs/<service>-<n>.log, JSON lines written by the service itself and
#       rotated by size (TREERAG_LOG_MAX_BYTES, 20 MiB; TREERAG_LOG_BACKUPS older files, 3);
#       <service>-<n>.out holds what a process prints outside its logs (a crash at import).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INFRA_NAME=stack
# shellcheck source=infra/lib.sh
source "$ROOT/scripts/infra/lib.sh"

PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
export PYTHON
STACK="$TREERAG_RUN/stack"
LOGS="$STACK/logs"
PIDS="$STACK/pids"
KPORT="${TREERAG_KAFKA_PORT:-9092}"
MPORT="${TREERAG_MONGO_PORT:-27017}"
GPORT="${TREERAG_GATEWAY_PORT:-8000}"
GHOST="${TREERAG_GATEWAY_HOST:-127.0.0.1}"
PPORT="${TREERAG_PROMETHEUS_PORT:-9090}"
STAGES=(indexer navigator compressor verifier)
declare -A METRICS_PORTS # default metrics port of each stage, from its one definition
PROM="$STACK/prometheus"
READY_TIMEOUT="${TREERAG_STACK_READY_TIMEOUT:-240}"

replicas() { # stage
  local var="TREERAG_SCALE_${1^^}"
  local n="${!var:-1}"
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "$var='$n' must be a positive number"
  echo "$n"
}

start_service() { # name index args...
  local name="$1" index="$2"
  shift 2
  local pidfile="$PIDS/$name-$index.pid" log="$LOGS/$name-$index.log" out="$LOGS/$name-$index.out"
  if pid_alive "$pidfile" services. >/dev/null; then
    log "$name-$index already running (pid $(cat "$pidfile"))"
    return 0
  fi
  # The service rotates its own log file; a shell redirection could not be rotated under it.
  # Its supervisor restarts it whenever it exits (with backoff), and logs each restart to $out.
  (cd "$ROOT" && TREERAG_LOG_FILE="$log" exec nohup "$PYTHON" scripts/supervise.py "$name-$index" -- \
    "$PYTHON" "$@" >>"$out" 2>&1 </dev/null) &
  echo $! >"$pidfile"
  log "started $name-$index under its supervisor (pid $!, log $log)"
}

# The address to poll the gateway on: the host it binds, or loopback when it binds every interface.
poll_host() {
  case "$GHOST" in
    "" | 0.0.0.0) echo 127.0.0.1 ;;
    "::" | "[::]") echo "[::1]" ;;
    *:*) [[ "$GHOST" == \[* ]] && echo "$GHOST" || echo "[$GHOST]" ;; # IPv6 literal
    *) echo "$GHOST" ;;
  esac
}

# Pidfiles whose process is gone (an earlier run, maybe with more replicas) would otherwise
# fail the startup check below as services that "exited during startup".
clear_dead_pidfiles() {
  local pidfile
  for pidfile in "$PIDS"/*-*.pid; do
    [[ -f "$pidfile" ]] || continue
    pid_alive "$pidfile" services. >/dev/null || rm -f "$pidfile"
  done
  pid_alive "$PIDS/prometheus.pid" prometheus >/dev/null || rm -f "$PIDS/prometheus.pid"
}

# targets/<job>.json for Prometheus' file_sd: one "host:port" per replica.
write_targets() { # job host:port...
  local job="$1" list
  shift
  list="$(printf '"%s",' "$@")"
  mkdir -p "$PROM/targets"
  printf '[{"targets": [%s]}]\n' "${list%,}" >"$PROM/targets/$job.json.tmp"
  mv "$PROM/targets/$job.json.tmp" "$PROM/targets/$job.json" # file_sd reads whole files only
}

start_prometheus() {
  if ! command -v prometheus >/dev/null 2>&1; then
    log "prometheus not installed ('make prometheus' installs it): metrics are not collected"
    return 0
  fi
  local pidfile="$PIDS/prometheus.pid"
  if pid_alive "$pidfile" prometheus >/dev/null; then
    log "prometheus already running (pid $(cat "$pidfile"))"
    return 0
  fi
  # The config's relative paths (rules/, targets/) resolve beside the link, in the run folder.
  mkdir -p "$PROM/data"
  ln -sfn "$ROOT/deploy/prometheus/prometheus.local.yml" "$PROM/prometheus.yml"
  ln -sfn "$ROOT/deploy/prometheus/rules" "$PROM/rules"
  nohup prometheus --config.file="$PROM/prometheus.yml" --storage.tsdb.path="$PROM/data" \
    --storage.tsdb.retention.time=7d --web.listen-address="127.0.0.1:$PPORT" \
    >>"$LOGS/prometheus.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  log "started prometheus (pid $!, http://127.0.0.1:$PPORT, log $LOGS/prometheus.log)"
  local i
  for ((i = 0; i < 50; i++)); do
    pid_alive "$pidfile" prometheus >/dev/null || break
    # Still alive a moment after the port answers: the port is its own, not another server's.
    port_open "$PPORT" && sleep 1 && pid_alive "$pidfile" prometheus >/dev/null && return 0
    sleep 0.2
  done
  tail -n 5 "$LOGS/prometheus.log" >&2 || true
  # Optional: the services run without it. A taken port is the usual cause (another Prometheus,
  # e.g. the Debian package's own service): TREERAG_PROMETHEUS_PORT picks another.
  log "WARNING: prometheus did not start on 127.0.0.1:$PPORT (log above); set TREERAG_PROMETHEUS_PORT to a free port"
}

cmd_up() {
  [[ -x "$PYTHON" ]] || die "no python at $PYTHON; run 'make venv' first or set PYTHON"
  mkdir -p "$LOGS" "$PIDS"
  clear_dead_pidfiles
  "$ROOT/scripts/infra/up.sh"
  export TREERAG_KAFKA_BOOTSTRAP="127.0.0.1:$KPORT" TREERAG_MONGO_URL="mongodb://127.0.0.1:$MPORT/"
  # Uploaded files' bytes: a folder the gateway and the indexers share, beside the store's data
  # (FerretDB on SQLite would keep them as base64 JSON; see docs/deploy.md "Uploaded files").
  export TREERAG_BLOB_DIR="${TREERAG_BLOB_DIR:-$TREERAG_RUN/blobs-$MPORT/${TREERAG_MONGO_DB:-treerag}}"
  eval "$(cd "$ROOT" && "$PYTHON" -c 'from shared.adapters.metrics import STAGE_METRICS_PORTS as ports
print(" ".join(f"METRICS_PORTS[{stage}]={port}" for stage, port in ports.items()))')"
  export PYTHONUNBUFFERED=1
  # The gateway's pipeline page reads the per-stage figures from the Prometheus started below.
  export TREERAG_PROMETHEUS_URL="${TREERAG_PROMETHEUS_URL:-http://127.0.0.1:$PPORT}"
  for stage in "${STAGES[@]}"; do
    local n i port targets=()
    n="$(replicas "$stage")"
    for ((i = 0; i < n; i++)); do
      # Each replica is its own scrape target, so Prometheus sees (and sums) every one.
      port=$((METRICS_PORTS[$stage] + 10 * i))
      targets+=("127.0.0.1:$port")
      TREERAG_METRICS_PORT="$port" start_service "$stage" "$i" -m "services.$stage"
    done
    write_targets "$stage" "${targets[@]}"
  done
  TREERAG_METRICS_PORT="${METRICS_PORTS[gateway]}" start_service gateway 0 -m services.gateway --host "$GHOST" --port "$GPORT"
  write_targets gateway "127.0.0.1:${METRICS_PORTS[gateway]}"
  start_prometheus

  local url deadline=$((SECONDS + READY_TIMEOUT))
  declare -A REPORTED=()
  url="http://$(poll_host):$GPORT"
  log "waiting for $url/readyz (up to ${READY_TIMEOUT}s)"
  until "$PYTHON" - "$url/readyz" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
  do
    for pidfile in "$PIDS"/*-*.pid; do
      [[ -f "$pidfile" ]] || continue
      local name
      name="$(basename "$pidfile" .pid)"
      # A service that exits during startup is restarted by its supervisor: say so, once, and go on waiting.
      if ! pid_alive "$pidfile" services. >/dev/null || grep -q "service exited; restarting" "$LOGS/$name.out" 2>/dev/null; then
        if [[ -z "${REPORTED[$name]:-}" ]]; then
          REPORTED[$name]=1
          tail -n 20 "$LOGS/$name.log" "$LOGS/$name.out" >&2 || true
          log "$name exited during startup (log: $LOGS/$name.log); its supervisor restarts it"
        fi
      fi
    done
    ((SECONDS < deadline)) || die "the gateway did not become ready within ${READY_TIMEOUT}s; logs in $LOGS"
    sleep 1
  done
  local key_line="API key:  none asked for (TREERAG_AUTH=off)"
  if [[ "${TREERAG_AUTH:-on}" != off ]]; then
    admin_key || die "could not create the admin key; see the message above"
    key_line="API key:  $(cat "$STACK/admin.key")   (admin, tenant default; the web app asks for it once per tab, or once per device when remembered)"
  fi
  cat <<MSG
TreeRAG is up.
  gateway:  http://$GHOST:$GPORT   (API docs: http://$GHOST:$GPORT/docs)
  $key_line
            curl -H "Authorization: Bearer \$(cat $STACK/admin.key)" http://$(poll_host):$GPORT/v1/documents
  metrics:  gateway :${METRICS_PORTS[gateway]} (and /metrics with an admin key); indexer :${METRICS_PORTS[indexer]}, navigator :${METRICS_PORTS[navigator]}, compressor :${METRICS_PORTS[compressor]}, verifier :${METRICS_PORTS[verifier]} (replica i: +10*i)
  prometheus: $(command -v prometheus >/dev/null 2>&1 && echo "http://127.0.0.1:$PPORT (alerts: /alerts)" || echo "not installed (make prometheus)")
  logs:     $LOGS
  stop:     make down
MSG
}

# The admin key of the default tenant, created on the first `up` (only its hash is in MongoDB,
# so the key itself is kept here for the operator; `treerag keys revoke` ends it).
admin_key() {
  if [[ -s "$STACK/admin.key" ]]; then
    # Still valid? (A wiped database forgets every key.)
    "$PYTHON" - "http://$(poll_host):$GPORT/v1/documents" "$STACK/admin.key" <<'PY' && return 0
import sys, urllib.error, urllib.request
key = open(sys.argv[2]).read().strip()
try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={"Authorization": f"Bearer {key}"}), timeout=10)
except urllib.error.HTTPError as exc:
    sys.exit(1 if exc.code == 401 else 0)
PY
    log "the saved admin key is not known to this database: creating a new one"
  fi
  local key
  key="$(cd "$ROOT" && "$PYTHON" -m services.gateway.keys create --tenant default --admin)" || return 1
  (umask 077 && printf '%s\n' "$key" >"$STACK/admin.key")
}

cmd_down() {
  local rc=0
  if [[ -d "$PIDS" ]]; then
    # The gateway first (no new work), then the stages.
    for pidfile in "$PIDS"/gateway-*.pid "$PIDS"/*-*.pid; do
      [[ -f "$pidfile" ]] || continue
      stop_pidfile "$pidfile" "$(basename "$pidfile" .pid)" 40 services. || rc=1
    done
    stop_pidfile "$PIDS/prometheus.pid" prometheus 30 prometheus || rc=1
  fi
  "$ROOT/scripts/infra/down.sh" || rc=1
  return $rc
}

cmd_status() {
  local any=0
  for pidfile in "$PIDS"/*-*.pid; do
    [[ -f "$pidfile" ]] || continue
    any=1
    if pid="$(pid_alive "$pidfile" services.)"; then
      echo "$(basename "$pidfile" .pid): running (pid $pid)"
    else
      echo "$(basename "$pidfile" .pid): stopped"
    fi
  done
  ((any)) || echo "no services started from $STACK"
  if pid="$(pid_alive "$PIDS/prometheus.pid" prometheus)"; then
    echo "prometheus: running (pid $pid, http://127.0.0.1:$PPORT)"
  fi
  "$ROOT/scripts/infra/kafka.sh" status || true
  "$ROOT/scripts/infra/ferretdb.sh" status || true
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 {up|down|status}" >&2; exit 2 ;;
esac
