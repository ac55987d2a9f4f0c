"""Whole offline query latency alone: every ../shared/data/qa/*.jsonl question routed over a
store of the dev sets' documents (navigate, compress, verify in one process), wall-clock and
CPU time per query. The quality figures of the same store come from `bench.eval_qa`.

    python -m bench.query_latency [--store DIR]

`--store`: an embedded store that already holds the documents (indexed into it when missing;
default: a temporary store, which indexes every PDF first). Writes bench/results/query_latency.json,
or query_latency_rerank.json when a reranker is configured (`TREERAG_RERANKER`), with no target:
the p50 target is the default pipeline's.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, run_in_store, shared_data, write_result
from bench.eval_qa import STORE_DOCUMENTS, store_query_latency
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.reranker import configured_scorer
from shared.settings import get_settings
from treerag.evaluation.dataset import load_dataset
from treerag.evaluation.runner import ensure_indexed

TARGET_P50_MS = 30.0


async def main_async(store: Path) -> dict[str, Any]:
    data = shared_data()
    items = [item for path in sorted((data / "qa").glob("*.jsonl")) for item in load_dataset(path)]
    repository = EmbeddedRepository(store)
    await ensure_indexed(repository, [i.doc for i in items], data / "pdfs")
    await repository.close()
    latency = await store_query_latency(store, [i.question for i in items])
    # Read after the run: the load the run itself met (the machine's cores are shared).
    result = {"load_average_1min": round(os.getloadavg()[0], 2), "store_query": latency}
    reranker = configured_scorer(get_settings().reranker)
    if reranker is not None:
        return write_result("query_latency_rerank", result | {"reranker": reranker.name})
    result["targets"] = {
        f"whole offline query p50 <= {TARGET_P50_MS:g} ms ({STORE_DOCUMENTS}-document store), wall":
            latency["query"]["p50_ms"] <= TARGET_P50_MS,
        f"whole offline query p50 <= {TARGET_P50_MS:g} ms ({STORE_DOCUMENTS}-document store), CPU":
            latency["query_cpu"]["p50_ms"] <= TARGET_P50_MS,
    }
    return write_result("query_latency", result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="Embedded store holding the documents.")
    args = parser.parse_args()
    configure_bench_logging()
    result = run_in_store(main_async, args.store, "treerag-latency-")
    store_query = result["store_query"]
    print(f"{store_query['documents']} documents, {store_query['pages']} pages, "
          f"{store_query['questions']} questions, load average {result['load_average_1min']}")
    print("wall", store_query["query"])
    print("cpu ", store_query["query_cpu"])


if __name__ == "__main__":
    main()
