"""A soak: many queries through the whole local stack, each process's resident memory read at
the start, along the way and at the end, so a cache without a bound shows as memory that keeps
growing.

    python -m bench.soak [--queries 10000] [--concurrency 8] [--readings 10]

Kafka, FerretDB and every service run as local processes (as `make up` runs them); the R-manual
and MMLongBench dev PDFs are indexed through the gateway, then the dev questions about them are
asked in a closed loop, each with a token budget of its own (2,000 + n tokens, n counting the
requests) so the answer cache never answers: every query runs every stage. Resident memory (VmRSS, summed over a process and its children) is read
from /proc before the first query and after every `queries / readings`. Writes
bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import bus_ingest
from bench.bus_query import Distinct, closed_loop, questions
from bench.common import configure_bench_logging, write_result
from bench.proc import descendants
from bench.stack import BusStack

logger = logging.getLogger("bench.soak")
def rss_mb(pid: int) -> float:
    """Current resident set of `pid` and its live children, in MiB (0 when gone)."""
    total = 0
    for process in descendants(pid):
        try:
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def memory_by_process(stack: BusStack) -> dict[str, float]:
    readings = {service.name: rss_mb(service.process.pid) for service in stack.services}
    readings.update({name: rss_mb(pid) for name, pid in stack.infra_pids().items()})
    return readings


def soak(stack: BusStack, doc_ids: dict[str, str], queries: int, concurrency: int, readings: int) -> dict[str, Any]:
    items = questions(set(doc_ids))
    if not items:
        raise RuntimeError("no dev question is about an indexed document")
    distinct = Distinct()
    asyncio.run(closed_loop(stack, items, doc_ids, concurrency, len(items), distinct))  # every index built once
    steps = [{"queries": 0, "seconds": 0.0, "rss_mb": memory_by_process(stack)}]
    batch = max(1, queries // max(readings, 1))
    done = 0
    errors: dict[str, int] = {}
    started = time.perf_counter()
    while done < queries:
        size = min(batch, queries - done)
        level = asyncio.run(closed_loop(stack, items, doc_ids, concurrency, size, distinct, max_seconds=3600.0))
        done += level["requests"]
        for status, count in level["errors"].items():
            errors[status] = errors.get(status, 0) + count
        steps.append({"queries": done, "seconds": round(time.perf_counter() - started, 1),
                      "throughput_qps": level["throughput_qps"], "rss_mb": memory_by_process(stack)})
        logger.info("soak: %d queries, errors by status %s", done, errors)
        if level["stopped_early"]:
            break
    first, last = steps[0]["rss_mb"], steps[-1]["rss_mb"]
    return {
        "questions": len(items), "queries": done, "errors_by_status": errors, "concurrency": concurrency,
        "rss_start_mb": first, "rss_end_mb": last,
        "rss_growth_mb": {name: round(last.get(name, 0.0) - first[name], 1) for name in first},
        "steps": steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--readings", type=int, default=10, help="memory readings after the start")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-soak")
    args = parser.parse_args(argv)
    configure_bench_logging()
    files = bus_ingest.corpus(("r-manuals", "mmlongbench"))
    with bus_ingest.indexed_stack(args.run_dir, "soak", files) as (stack, doc_ids):
        result = soak(stack, doc_ids, args.queries, args.concurrency, args.readings)
    write_result("soak", result)
    logger.info("soak done: %d queries; resident memory growth (MB) %s", result["queries"], result["rss_growth_mb"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
