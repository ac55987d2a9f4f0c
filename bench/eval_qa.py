"""Answer quality and query latency: every ../shared/data/qa/*.jsonl through the tree systems and
the BM25 baselines in one run, plus the traversal and whole-query latency targets.

    python -m bench.eval_qa [--store DIR]

Writes bench/results/eval_<dataset>.json (+ .md) and bench/results/eval_latency.json.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import (
    RESULTS,
    configure_bench_logging,
    latency_summary,
    run_in_store,
    shared_data,
    write_result,
)
from services.navigator import resolver
from services.navigator import walk as walk_module
from services.navigator.index import DocumentIndex
from services.navigator.models import configured_models
from services.navigator.navigate import navigate
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.query import QuerySettings
from shared.settings import get_settings
from shared.text import lexical
from shared.text import question as question_module
from treerag.engine import QueryEngine
from treerag.evaluation.dataset import QAItem, load_dataset
from treerag.evaluation.runner import (
    DocumentBundle,
    ensure_indexed,
    evaluate,
    markdown_table,
)

logger = logging.getLogger("bench.eval_qa")

TRAVERSAL_NODES = 500
TRAVERSAL_PASSES = 10
STORE_DOCUMENTS = 50


def verdicts(systems: dict[str, Any], has_unanswerable: bool) -> dict[str, Any]:
    auto, pages, chunks = systems["treerag-auto"], systems["bm25-pages"], systems["bm25-chunks"]
    out = {
        "hit_at_1 >= bm25-pages + 0.10": {
            "value": round(auto["hit_at_1"] - pages["hit_at_1"], 4),
            "met": auto["hit_at_1"] >= pages["hit_at_1"] + 0.10 - 1e-9,
        },
        "evidence_page_precision >= 0.5": {
            "value": auto["evidence_page_precision"], "met": auto["evidence_page_precision"] >= 0.5,
        },
        "context tokens <= 60% of bm25-chunks": {
            "value": round(auto["context_tokens_mean"] / chunks["context_tokens_mean"], 4)
            if chunks["context_tokens_mean"] else None,
            "met": auto["context_tokens_mean"] <= 0.6 * chunks["context_tokens_mean"],
        },
    }
    if has_unanswerable:
        out["abstention_accuracy >= 0.8"] = {
            "value": auto["abstention_accuracy"], "met": (auto["abstention_accuracy"] or 0) >= 0.8,
        }
    return out


class _WalkTimer:
    """Times the tree walk alone (DFS or Beam over precomputed node scores) inside navigate()."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._originals = (walk_module.dfs, walk_module.beam)

    def _wrap(self, walk):  # noqa: ANN001, ANN202
        def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            started = time.perf_counter()
            try:
                return walk(*args, **kwargs)
            finally:
                self.seconds.append(time.perf_counter() - started)

        return timed

    def __enter__(self) -> _WalkTimer:
        walk_module.dfs, walk_module.beam = (self._wrap(w) for w in self._originals)
        return self

    def __exit__(self, *exc: object) -> None:
        walk_module.dfs, walk_module.beam = self._originals


def _forget_questions(index: DocumentIndex) -> None:
    """Drop every cache keyed by a question or a question term, so each pass meets every
    question (and every misspelled or foreign term) for the first time, as a service does."""
    for cached in (lexical._cached_terms, question_module.topic_text, question_module.literals,
                   resolver._find_references):
        cached.cache_clear()
    index.memo.clear()
    index.reference_cache.clear()


def traversal_latency(bundles: dict[str, DocumentBundle], questions: list[str]) -> dict[str, Any]:
    """On the largest tree of at most TRAVERSAL_NODES nodes, per mode: the whole navigate() call
    (lexical scoring of every page and node, routing checks, the walk, references, evidence
    pages) and the walk alone. TRAVERSAL_PASSES passes over every question, each pass with the
    question caches emptied; wall-clock and CPU time (the CPU time is what a call costs when it
    does not wait for a core)."""
    eligible = [b.index for b in bundles.values() if len(b.index.nodes) <= TRAVERSAL_NODES]
    index = max(eligible, key=lambda ix: len(ix.nodes))
    result: dict[str, Any] = {
        "document": index.record.file_name, "nodes": len(index.nodes), "pages": len(index.pages),
        "questions": len(questions), "passes": TRAVERSAL_PASSES,
    }
    models = configured_models(get_settings())
    for mode in ("dfs", "beam", "auto"):
        settings = QuerySettings(mode=mode)
        for q in questions[:3]:
            navigate(q, [index], settings, models=models)  # first-call imports and allocations
        seconds, cpu = [], []
        fastest: dict[int, float] = {}
        with _WalkTimer() as walk:
            for _ in range(TRAVERSAL_PASSES):
                _forget_questions(index)
                for number, q in enumerate(questions):
                    started, started_cpu = time.perf_counter(), time.thread_time()
                    navigate(q, [index], settings, models=models)
                    cpu.append(time.thread_time() - started_cpu)
                    seconds.append(time.perf_counter() - started)
                    fastest[number] = min(fastest.get(number, seconds[-1]), seconds[-1])
        result[mode] = {
            "navigate": latency_summary(seconds),
            "navigate_cpu": latency_summary(cpu),
            # Each question's fastest pass: the call's own cost with the least interference
            # from other processes on the shared cores (every pass starts with cold caches).
            "navigate_fastest_pass": latency_summary(list(fastest.values())),
            "walk": latency_summary(walk.seconds),
        }
    return result


async def store_query_latency(store: Path, questions: list[str]) -> dict[str, Any]:
    """Whole offline queries (routing over every document, navigate, compress, verify) over a
    store of STORE_DOCUMENTS documents, indexes warm in the engine's cache."""
    repository = EmbeddedRepository(store)
    records = (await repository.list_documents())[:STORE_DOCUMENTS]
    ids = [r.doc_id for r in records]
    engine = QueryEngine(repository)
    await engine.indexes(ids)  # build once, as a running service would
    seconds, cpu, navigate_ms = [], [], []
    for question in questions:
        started, started_cpu = time.perf_counter(), time.process_time()
        result = await engine.ask(question, ids, QuerySettings())
        # Process CPU: the navigator runs in a worker thread; on shared cores this is the fair figure.
        cpu.append(time.process_time() - started_cpu)
        seconds.append(time.perf_counter() - started)
        navigate_ms.append(result.timings.navigate_ms)
    await repository.close()
    return {
        "documents": len(ids),
        "pages": sum(r.page_count for r in records),
        "questions": len(questions),
        "query": latency_summary(seconds),
        "query_cpu": latency_summary(cpu),
        "navigate_p50_ms": round(statistics.median(navigate_ms), 2),
    }


async def main_async(store: Path) -> dict[str, Any]:
    data = shared_data()
    datasets = sorted((data / "qa").glob("*.jsonl"))
    all_items: list[QAItem] = []
    bundles: dict[str, DocumentBundle] = {}
    repository = EmbeddedRepository(store)
    summary: dict[str, Any] = {}
    for path in datasets:
        items = load_dataset(path)
        all_items += items
        bundles.update(await ensure_indexed(repository, [i.doc for i in items], data / "pdfs"))
        report = evaluate(path.stem, items, bundles)
        systems = {name: s.model_dump() for name, s in report.results.systems.items()}
        has_unanswerable = any(not i.answerable for i in items)
        payload = {
            **report.results.model_dump(),
            "targets": verdicts(systems, has_unanswerable),
            "items": {name: [s.model_dump() for s in scores] for name, scores in report.items.items()},
        }
        write_result(f"eval_{path.stem}", payload)
        (RESULTS / f"eval_{path.stem}.md").write_text(markdown_table(report.results))
        print(markdown_table(report.results))
        summary[path.stem] = payload["targets"]
    await repository.close()
    questions = [i.question for i in all_items]
    latency = {
        "load_average_1min": round(os.getloadavg()[0], 2),
        "traversal": traversal_latency(bundles, questions),
        "store_query": await store_query_latency(store, questions),
    }
    latency["targets"] = {
        "traversal p50 <= 1 ms (<= 500 nodes), walk alone": {
            mode: latency["traversal"][mode]["walk"]["p50_ms"] <= 1.0 for mode in ("dfs", "beam", "auto")
        },
        "traversal p50 <= 1 ms (<= 500 nodes), whole navigate()": {
            mode: latency["traversal"][mode]["navigate"]["p50_ms"] <= 1.0 for mode in ("dfs", "beam", "auto")
        },
        "traversal p50 <= 1 ms (<= 500 nodes), whole navigate(), CPU time": {
            mode: latency["traversal"][mode]["navigate_cpu"]["p50_ms"] <= 1.0 for mode in ("dfs", "beam", "auto")
        },
        "traversal p50 <= 1 ms (<= 500 nodes), whole navigate(), fastest of the passes": {
            mode: latency["traversal"][mode]["navigate_fastest_pass"]["p50_ms"] <= 1.0 for mode in ("dfs", "beam", "auto")
        },
        f"whole offline query p50 <= 30 ms ({STORE_DOCUMENTS}-document store)": latency["store_query"]["query"]["p50_ms"] <= 30.0,
    }
    write_result("eval_latency", latency)
    summary["latency"] = latency
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="Embedded store to index into (default: a temp dir).")
    args = parser.parse_args()
    configure_bench_logging()
    summary = run_in_store(main_async, args.store, "treerag-eval-")
    for name, targets in summary.items():
        print(name, targets if name != "latency" else targets["targets"])


if __name__ == "__main__":
    main()
