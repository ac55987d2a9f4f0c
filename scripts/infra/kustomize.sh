#!/usr/bin/env bash
# Build kustomize (renders deploy/k8s) from its Go module into the cache, once.
#
#   scripts/infra/kustomize.sh build   # into $TREERAG_CACHE/kustomize-<ver>/kustomize (skipped if present)
#   scripts/infra/kustomize.sh path    # print the binary path
#
# Env: TREERAG_CACHE. Needs Go >= 1.22 and the Go module proxy (about a minute on 2 cores).
set -euo pipefail
INFRA_NAME=kustomize
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUSTOMIZE_VERSION=5.7.1
BIN_DIR="$TREERAG_CACHE/kustomize-$KUSTOMIZE_VERSION"
BIN="$BIN_DIR/kustomize"

cmd_build() {
  if [[ -x "$BIN" ]]; then
    log "cached: $BIN"
    return 0
  fi
  need_cmd go "Install Go >= 1.22 (your distro's golang package) to build kustomize."
  mkdir -p "$BIN_DIR"
  remove_stale_tmp "$BIN_DIR" 'build.*'
  local work
  work="$(mktemp -d "$BIN_DIR/build.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  log "building kustomize $KUSTOMIZE_VERSION"
  local t0=$SECONDS
  GOBIN="$work" CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' \
    "sigs.k8s.io/kustomize/kustomize/v5@v$KUSTOMIZE_VERSION" \
    || die "go install failed. Check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY)); re-run '$0 build'."
  mv -f "$work/kustomize" "$BIN"
  log "built $BIN in $((SECONDS - t0))s"
}

case "${1:-}" in
  build) cmd_build ;;
  path) echo "$BIN" ;;
  *) echo "usage: $0 {build|path}" >&2; exit 2 ;;
esac
