"""One process over a shared store: how long loading every filing takes before the first query,
and the latency of questions asked with no document selected, as the store grows.

    python -m bench.shared_store_latency [--store DIR] [--sizes 36,72,143]

Indexes every PDF of ../shared/data/pdfs/financebench into `--store` when missing, then for
each size loads that many filings into a fresh engine (with the configured embedder, so stored
page vectors are used, as the navigator service does) and asks every FinanceBench dev question
of all of them at once. Writes bench/results/shared_store_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, latency_summary, shared_data, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import make_embedder
from shared.model.query import QuerySettings
from treerag.engine import QueryEngine
from treerag.evaluation.dataset import load_dataset
from treerag.evaluation.runner import ensure_indexed

TARGET_P50_MS = 50.0
TARGET_P95_MS = 150.0
TARGET_LOAD_S = 10.0


async def measure(store: Path, names: list[str], questions: list[str]) -> dict[str, Any]:
    """Load `names` into a new engine and ask every question of all of them."""
    repository = EmbeddedRepository(store)
    try:
        records = [r for r in await repository.list_documents() if r.file_name in set(names)]
        ids = [r.doc_id for r in records]
        engine = QueryEngine(repository, embedder=make_embedder())
        started, started_cpu = time.perf_counter(), time.process_time()
        await engine.indexes(ids)
        load_s, load_cpu_s = time.perf_counter() - started, time.process_time() - started_cpu
        seconds, cpu = [], []
        for question in questions:
            started, started_cpu = time.perf_counter(), time.process_time()
            await engine.ask(question, None, QuerySettings(), use_cache=False)
            cpu.append(time.process_time() - started_cpu)
            seconds.append(time.perf_counter() - started)
    finally:
        await repository.close()
    return {
        "documents": len(ids), "pages": sum(r.page_count for r in records), "questions": len(questions),
        "load_s": round(load_s, 2), "load_cpu_s": round(load_cpu_s, 2),
        "query": latency_summary(seconds), "query_cpu": latency_summary(cpu),
    }


async def main_async(store: Path, sizes: Sequence[int]) -> dict[str, Any]:
    data = shared_data()
    folder = data / "pdfs" / "financebench"
    names = sorted(p.name for p in folder.glob("*.pdf"))
    repository = EmbeddedRepository(store)
    try:
        await ensure_indexed(repository, names, folder)
    finally:
        await repository.close()
    questions = [item.question for item in load_dataset(data / "qa" / "financebench-dev.jsonl")]
    asked = {item.doc for item in load_dataset(data / "qa" / "financebench-dev.jsonl")}
    runs = []
    for size in sizes:
        # The questions' own filings first, so every size holds the documents that answer.
        chosen = sorted(asked)[:size] + [n for n in names if n not in asked][: max(0, size - len(asked))]
        runs.append(await measure(store, chosen, questions))
    largest = runs[-1]
    return {
        "load_average_1min": round(os.getloadavg()[0], 2),
        "runs": runs,
        "targets": {
            f"query p50 <= {TARGET_P50_MS:g} ms over {largest['documents']} filings":
                {"measured": largest["query"]["p50_ms"], "met": largest["query"]["p50_ms"] <= TARGET_P50_MS},
            f"query p95 <= {TARGET_P95_MS:g} ms": {"measured": largest["query"]["p95_ms"],
                                                  "met": largest["query"]["p95_ms"] <= TARGET_P95_MS},
            f"loading the store <= {TARGET_LOAD_S:g} s": {"measured": largest["load_s"],
                                                        "met": largest["load_s"] <= TARGET_LOAD_S},
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    parser.add_argument("--sizes", default="41,72,143", help="numbers of filings to load, comma-separated")
    args = parser.parse_args(argv)
    configure_bench_logging()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    result = asyncio.run(main_async(args.store, sizes))
    write_result("shared_store_latency", result)
    for run in result["runs"]:
        print(f"{run['documents']} filings ({run['pages']:,} pages): load {run['load_s']} s, "
              f"query p50 {run['query']['p50_ms']} ms, p95 {run['query']['p95_ms']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
