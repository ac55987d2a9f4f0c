"""One process over a shared store: how long loading every filing takes before the first query,
and the latency of questions asked with no document selected, as the store grows.

    python -m bench.shared_store_latency [--store DIR] [--sizes 41,72,143]

Indexes every PDF of ../shared/data/pdfs/financebench into `--store` with `treerag index` (page
and node vectors and the page analysis stored, as an upload stores them) when missing. Then, for each size, a store
holding just that many filings (links to the first store's files: the questions' own filings
first) is loaded into a fresh engine with the configured embedder, so stored vectors are used as
the navigator service uses them, and every FinanceBench dev question is asked of all of its
filings at once, then every question once more (what a query costs once each shortlisted
document's walk data has been derived, which a document's first shortlisting does). Writes
bench/results/shared_store_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, latency_summary, shared_data, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import make_embedder
from shared.model.query import QuerySettings
from shared.text.page_analysis import AnalysisFormatError, PageAnalysis
from treerag.engine import QueryEngine
from treerag.evaluation.dataset import load_dataset

TARGET_P50_MS = 30.0
TARGET_P95_MS = 100.0
TARGET_LOAD_S = 10.0
TARGET_COLD_S = 1.0
TARGET_CPU_MS_PER_PAGE = 0.5


STORE_FOLDERS = ("documents", "pages", "trees", "embeddings", "analysis")


def substore(store: Path, doc_ids: list[str], folder: Path) -> Path:
    """A store holding only `doc_ids`: links to `store`'s files of each."""
    shutil.rmtree(folder, ignore_errors=True)
    for name in STORE_FOLDERS:
        (folder / name).mkdir(parents=True)
        for source in (store / name).glob("*"):
            if source.name.split(".")[0] in set(doc_ids):
                (folder / name / source.name).symlink_to(source)
    return folder


def rss_mb() -> float:
    """This process's resident memory."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ensure_store(store: Path, data: Path) -> None:
    """Every FinanceBench filing indexed into `store` as an upload stores it (vectors, page
    analysis, the record vouching for its pages); a store indexed before analyses were stored,
    or before records kept their pages' digest, is indexed again."""
    records = list((store / "documents").glob("*.json"))
    indexed = {p.stem for p in records}
    analysed = {p.stem for p in (store / "analysis").glob("*.bin")}
    vouched = all(json.loads(p.read_text()).get("pages_digest") for p in records)
    if indexed and indexed <= analysed and vouched:
        return
    subprocess.run([sys.executable, "-m", "treerag", "index", str(data / "pdfs" / "financebench"), "--store", str(store),
                    "--workers", "2", "--no-progress", *(["--force"] if indexed else [])], check=True)


async def analyses_with_node_terms(repository: EmbeddedRepository, doc_ids: list[str]) -> int:
    """How many of the documents' stored page analyses hold their tree's terms too."""
    found = 0
    for doc_id in doc_ids:
        data = await repository.get_analysis(doc_id)
        try:
            found += data is not None and PageAnalysis.from_bytes(data).nodes is not None
        except AnalysisFormatError:
            continue
    return found


async def measure(store: Path, questions: list[str]) -> dict[str, Any]:
    """Load every document of `store` into a new engine and ask every question of all of them."""
    repository = EmbeddedRepository(store)
    try:
        records = await repository.list_documents()
        ids = [r.doc_id for r in records]
        engine = QueryEngine(repository, embedder=make_embedder())
        before = rss_mb()
        started, started_cpu = time.perf_counter(), time.process_time()
        await engine.indexes(ids)
        load_s, load_cpu_s = time.perf_counter() - started, time.process_time() - started_cpu
        loaded = rss_mb()
        await engine.ask(questions[0], None, QuerySettings(), use_cache=False)
        cold_s = time.perf_counter() - started
        seconds, cpu = await _timed(engine, questions)
        # Again, once every shortlisted document's walk data has been derived by a first pass.
        seconds_again, cpu_again = await _timed(engine, questions)
    finally:
        await repository.close()
    pages = sum(r.page_count for r in records)
    return {
        "documents": len(ids), "pages": pages, "questions": len(questions),
        "load_s": round(load_s, 2), "load_cpu_s": round(load_cpu_s, 2),
        "load_cpu_ms_per_page": round(1000 * load_cpu_s / max(pages, 1), 3),
        "cold_first_query_s": round(cold_s, 2),
        "rss_before_mb": round(before, 1), "rss_loaded_mb": round(loaded, 1), "rss_after_queries_mb": round(rss_mb(), 1),
        "query": latency_summary(seconds), "query_cpu": latency_summary(cpu),
        "query_again": latency_summary(seconds_again), "query_again_cpu": latency_summary(cpu_again),
    }


async def _timed(engine: QueryEngine, questions: list[str]) -> tuple[list[float], list[float]]:
    """Seconds and CPU seconds of each question asked of every document."""
    seconds, cpu = [], []
    for question in questions:
        started, started_cpu = time.perf_counter(), time.process_time()
        await engine.ask(question, None, QuerySettings(), use_cache=False)
        cpu.append(time.process_time() - started_cpu)
        seconds.append(time.perf_counter() - started)
    return seconds, cpu


async def main_async(store: Path, sizes: Sequence[int]) -> dict[str, Any]:
    data = shared_data()
    ensure_store(store, data)
    items = load_dataset(data / "qa" / "financebench-dev.jsonl")
    questions = [item.question for item in items]
    asked = {item.doc for item in items}
    repository = EmbeddedRepository(store)
    try:
        records = await repository.list_documents()
        with_node_terms = await analyses_with_node_terms(repository, [r.doc_id for r in records])
    finally:
        await repository.close()
    # The questions' own filings first, so every size holds the documents that answer.
    ordered = sorted(records, key=lambda r: (r.file_name not in asked, r.file_name))
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for size in sizes:
            chosen = [r.doc_id for r in ordered[:size]]
            runs.append(await measure(substore(store, chosen, Path(scratch) / str(size)), questions))
    largest = runs[-1]
    return {
        "load_average_1min": round(os.getloadavg()[0], 2),
        # A store indexed before the tree's terms were stored has them computed at load.
        "analyses_with_node_terms": with_node_terms,
        "runs": runs,
        "targets": {
            f"query p50 <= {TARGET_P50_MS:g} ms over {largest['documents']} filings":
                {"measured": largest["query"]["p50_ms"], "met": largest["query"]["p50_ms"] <= TARGET_P50_MS},
            f"query p95 <= {TARGET_P95_MS:g} ms": {"measured": largest["query"]["p95_ms"],
                                                  "met": largest["query"]["p95_ms"] <= TARGET_P95_MS},
            f"loading the store <= {TARGET_LOAD_S:g} s": {"measured": largest["load_s"],
                                                        "met": largest["load_s"] <= TARGET_LOAD_S},
            f"cold first query <= {TARGET_COLD_S:g} s": {"measured": largest["cold_first_query_s"],
                                                       "met": largest["cold_first_query_s"] <= TARGET_COLD_S},
            f"navigator CPU per loaded page <= {TARGET_CPU_MS_PER_PAGE:g} ms": {
                "measured": largest["load_cpu_ms_per_page"],
                "met": largest["load_cpu_ms_per_page"] <= TARGET_CPU_MS_PER_PAGE},
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-shared-store"))
    parser.add_argument("--sizes", default="41,72,143", help="numbers of filings to load, comma-separated")
    args = parser.parse_args(argv)
    configure_bench_logging()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    result = asyncio.run(main_async(args.store, sizes))
    write_result("shared_store_latency", result)
    for run in result["runs"]:
        print(f"{run['documents']} filings ({run['pages']:,} pages): load {run['load_s']} s "
              f"({run['load_cpu_ms_per_page']} ms CPU per page), cold first query {run['cold_first_query_s']} s, "
              f"query p50 {run['query']['p50_ms']} ms, p95 {run['query']['p95_ms']} ms "
              f"(asked again: {run['query_again']['p50_ms']} / {run['query_again']['p95_ms']} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
