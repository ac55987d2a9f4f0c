"""How one process over a shared store grows with its pages: loading, memory and query latency
at several store sizes, the growth fitted, and what it implies for a store of millions of pages.

    python -m bench.shared_store_growth [--store DIR] [--pages 4500,20000,100000] [--questions 30]

The store is the one `bench.shared_store_latency` indexes (every FinanceBench filing, with its
vectors and page analysis). A size beyond its pages is reached with copies of its filings under
new document ids (the same files linked, the records renamed), so the copies cost what the
filings cost; they are distractors no question can tell from the original, which is why this
benchmark measures time and memory, not accuracy (`bench.shared_store_latency` and `make eval`
do that on the real filings). Each size is loaded into a fresh process, so its memory is its own.
Writes bench/results/shared_store_growth.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import configure_bench_logging, shared_data, write_result
from bench.shared_store_latency import STORE_FOLDERS, ensure_store, measure

# The load the projection is made for, and the cores a navigator replica is given.
QUERIES_PER_SECOND = 10.0
CORES_PER_REPLICA = 1
PROJECTED_PAGES = (1_000_000, 10_000_000)
# A replica is sized to stay below this share of its cores at that load (queueing grows fast
# past it) and below this much memory (a common node size, room left for the rest).
CPU_UTILISATION = 0.7
MEMORY_PER_REPLICA_MB = 16_000


def grown_store(source: Path, pages: int, folder: Path) -> tuple[int, int]:
    """A store of at least `pages` pages: the source's documents, then copies of them under new
    ids (files linked, records renamed); (documents, pages) it holds."""
    shutil.rmtree(folder, ignore_errors=True)
    for name in STORE_FOLDERS:
        (folder / name).mkdir(parents=True)
    records = sorted((json.loads(p.read_text()) for p in (source / "documents").glob("*.json")),
                     key=lambda r: r["file_name"])
    held = documents = 0
    copy = 0
    while held < pages:
        for record in records:
            if held >= pages:
                break
            doc_id = record["doc_id"] if copy == 0 else hashlib.sha256(f"{record['doc_id']}:{copy}".encode()).hexdigest()[:16]
            renamed = dict(record, doc_id=doc_id, file_name=record["file_name"] if copy == 0 else f"copy{copy}-{record['file_name']}")
            (folder / "documents" / f"{doc_id}.json").write_text(json.dumps(renamed))
            for name in STORE_FOLDERS[1:]:
                for stored in (source / name).glob(f"{record['doc_id']}.*"):
                    (folder / name / f"{doc_id}{stored.suffix}").symlink_to(stored.resolve())
            held += int(record["page_count"])
            documents += 1
        copy += 1
    return documents, held


def _fit(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """y = a + b·x by least squares, with the exponent of y = c·x^k beside it."""
    slope, intercept = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    exponent = float(np.polyfit(np.log(x), np.log(np.maximum(y, 1e-9)), 1)[0]) if len(x) > 1 else 1.0
    return {"intercept": round(float(intercept), 6), "per_page": round(float(slope), 9), "exponent": round(exponent, 3)}


def projection(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Replicas and memory at PROJECTED_PAGES for QUERIES_PER_SECOND, when the documents are
    partitioned over navigator replicas and a query goes to every partition (each scores its
    own documents): a replica's CPU per query and memory follow its own pages."""
    pages = [r["pages"] for r in runs]
    cpu = _fit(pages, [r["query_cpu"]["p50_ms"] / 1000 for r in runs])
    memory = _fit(pages, [r["rss_loaded_mb"] for r in runs])
    out = {"query_cpu_s": cpu, "memory_mb": memory, "sizes": []}
    for total in PROJECTED_PAGES:
        for replicas in range(1, 100_000):
            share = total / replicas
            seconds = cpu["intercept"] + cpu["per_page"] * share
            megabytes = memory["intercept"] + memory["per_page"] * share
            if QUERIES_PER_SECOND * seconds <= CORES_PER_REPLICA * CPU_UTILISATION and megabytes <= MEMORY_PER_REPLICA_MB:
                break
        out["sizes"].append({
            "pages": total, "replicas": replicas, "pages_per_replica": math.ceil(total / replicas),
            "query_cpu_ms_per_replica": round(1000 * (cpu["intercept"] + cpu["per_page"] * total / replicas), 1),
            "memory_gb_per_replica": round((memory["intercept"] + memory["per_page"] * total / replicas) / 1024, 2),
            "memory_gb_total": round(replicas * (memory["intercept"] + memory["per_page"] * total / replicas) / 1024, 1),
        })
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-shared-store"))
    parser.add_argument("--pages", default="4500,20000,100000", help="store sizes in pages, comma-separated")
    parser.add_argument("--questions", type=int, default=30, help="FinanceBench dev questions asked at each size")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    configure_bench_logging()
    data = shared_data()
    questions = [json.loads(line)["question"] for line in (data / "qa" / "financebench-dev.jsonl").read_text().splitlines()
                 if line.strip()][: args.questions]
    if args.child is not None:
        print(json.dumps(asyncio.run(measure(args.child, questions))))
        return 0
    ensure_store(args.store, data)
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for target in (int(p) for p in args.pages.split(",") if p.strip()):
            folder = Path(scratch) / str(target)
            documents, pages = grown_store(args.store, target, folder)
            child = subprocess.run(
                [sys.executable, "-m", "bench.shared_store_growth", "--child", str(folder),
                 "--questions", str(args.questions)], check=True, capture_output=True, text=True,
            )
            run = json.loads(child.stdout.strip().splitlines()[-1])
            runs.append(run)
            print(f"{documents} documents ({pages:,} pages): load {run['load_s']} s, memory {run['rss_loaded_mb']} MB, "
                  f"query p50 {run['query']['p50_ms']} ms, p95 {run['query']['p95_ms']} ms")
            shutil.rmtree(folder, ignore_errors=True)
    write_result("shared_store_growth", {"load_average_1min": round(os.getloadavg()[0], 2), "questions": len(questions),
                                         "runs": runs, "projection": projection(runs)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
