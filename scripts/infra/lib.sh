# shellcheck shell=bash
# Shared helpers for scripts/infra/*.sh. Source it; do not run it.
#
# Environment:
#   TREERAG_CACHE  cache for downloaded/built servers (default ~/.cache/treerag)
#   TREERAG_RUN    state dirs, logs and pidfiles (default $TREERAG_CACHE/run)
#   PYTHON         optional python with aiokafka/pymongo: enables protocol-level readiness checks

# shellcheck disable=SC2034  # used by the sourcing scripts
INFRA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TREERAG_CACHE="${TREERAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/treerag}"
TREERAG_RUN="${TREERAG_RUN:-$TREERAG_CACHE/run}"
export TREERAG_CACHE TREERAG_RUN

log() { printf '[%s] %s\n' "${INFRA_NAME:-infra}" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "${INFRA_NAME:-infra}" "$*" >&2; exit 1; }

need_cmd() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH. $2"
}

check_port_var() { # name value
  [[ "$2" =~ ^[0-9]+$ ]] && (($2 > 0 && $2 < 65535)) && return 0
  die "$1='$2' is not a valid TCP port"
}

# pid_alive PIDFILE [CMDLINE_SUBSTRING] -> prints pid and returns 0 if the process in
# PIDFILE is alive (and, if given, its command line contains the substring, so a stale
# pidfile whose pid was reused by an unrelated process is not mistaken for our server).
pid_alive() {
  local pf="$1" want="${2:-}" pid cmdline
  [[ -f "$pf" ]] || return 1
  pid="$(cat "$pf" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -n "$want" && -r "/proc/$pid/cmdline" ]]; then
    cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
    [[ "$cmdline" == *"$want"* ]] || return 1
  fi
  echo "$pid"
}

# remove_stale_tmp DIR GLOB: delete leftovers of killed fetch/build runs (older than 2 h)
remove_stale_tmp() {
  if [[ -d "$1" ]]; then
    find "$1" -mindepth 1 -maxdepth 1 -name "$2" -mmin +120 -exec rm -rf {} + 2>/dev/null || true
  fi
}

# port_open PORT -> 0 if something accepts TCP connections on 127.0.0.1:PORT
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# stop_pidfile PIDFILE NAME TIMEOUT_S CMDLINE_SUBSTRING: SIGTERM, wait, then SIGKILL
stop_pidfile() {
  local pf="$1" name="$2" t="${3:-30}" want="${4:-}" pid i
  if ! pid="$(pid_alive "$pf" "$want")"; then
    log "$name is not running (no live pid in $pf)"
    rm -f "$pf"
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < t * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pf"; log "$name stopped"; return 0; }
    sleep 0.1
  done
  log "$name did not stop within ${t}s, sending SIGKILL"
  # A supervisor leads its own process group: the group goes with it (no orphaned service).
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  rm -f "$pf"
}

python_ok() { # returns 0 if $PYTHON is set and can import the given module
  [[ -n "${PYTHON:-}" ]] && "$PYTHON" -c "import $1" >/dev/null 2>&1
}
