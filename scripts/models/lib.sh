#!/usr/bin/env bash
# What the model fetch scripts share: the completeness marker, the temporary folder and the
# atomic swap into the cache. Sourced after scripts/infra/lib.sh (log, remove_stale_tmp, TREERAG_CACHE).

# Where fetched models live, and the Python 3 that unpacks (and, for wheels, downloads) them.
MODELS="$TREERAG_CACHE/models"
PYTHON_BIN="${PYTHON:-python3}"

# model_is_fetched FOLDER SOURCE: the folder is complete and came from SOURCE.
model_is_fetched() {
  [[ -f "$1/.treerag-complete" ]] && [[ "$(cat "$1/.treerag-complete")" == "$2" ]]
}

# model_verify FOLDER REMEDY NAME=SHA256...: each NAME in FOLDER has its pinned SHA-256, or the
# script stops, naming the file, both hashes and REMEDY (what to do about it).
model_verify() {
  local folder="$1" remedy="$2" pin name want got
  shift 2
  for pin in "$@"; do
    name="${pin%%=*}"
    want="${pin#*=}"
    [[ -f "$folder/$name" ]] || die "$folder/$name is missing; $remedy"
    got="$(sha256sum "$folder/$name" | cut -d' ' -f1)"
    [[ "$got" == "$want" ]] || die "$folder/$name has SHA-256 $got, not the pinned $want; $remedy"
  done
}

# model_tmp MODELS: a new temporary folder inside MODELS, after removing stale ones (prints it).
model_tmp() {
  mkdir -p "$1"
  remove_stale_tmp "$1" 'fetch.*'
  mktemp -d "$1/fetch.XXXXXX"
}

# model_install STAGED FOLDER SOURCE TMP: mark STAGED as complete from SOURCE and swap it in as
# FOLDER atomically (an interrupted fetch never leaves a folder with a marker; the old one goes to TMP).
model_install() {
  printf '%s' "$3" >"$1/.treerag-complete"
  if [[ -e "$2" ]]; then
    mv "$2" "$4/old"
  fi
  mv "$1" "$2"
  log "fetched into $2"
}
