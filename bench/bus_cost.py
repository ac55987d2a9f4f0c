"""The cost of the bus per page: the FinanceBench filings ingested through the gateway, Kafka,
the store and one then two indexers, with every process' CPU seconds and peak memory read from
/proc around the run.

The question it answers: how much CPU do the bus and the store spend per page next to the
indexer's own work? That share decides whether N indexers scale on N cores. From the per-page
figures it projects pages/s on 8 and 32 cores (see `project`).

    python -m bench.bus_cost [--indexers 1,2] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.bus_ingest import page_count, upload, wait_terminal, warm_up
from bench.common import MachineCpu, configure_bench_logging, shared_data, write_result
from bench.proc import ProcessReading, read_process
from bench.stack import BusStack

logger = logging.getLogger("bench.bus_cost")

FOLDER = "financebench"
# What each process is counted as. The query stages only see `tree.built` events during ingestion.
BUS_AND_STORE = ("kafka", "ferretdb", "gateway")
INDEXER = "indexer"
QUERY_STAGES = ("navigator", "compressor", "verifier")
TARGET_SHARE = 0.25
# How long the warm stack is watched doing nothing, for each process' CPU at rest.
IDLE_S = 20.0
# A client waiting for a folder of filings asks once a second; the end is known to within that.
POLL_S = 1.0
PROJECTED_CORES = (2, 8, 32)


def filings(limit: int | None = None) -> list[Path]:
    files = sorted((shared_data() / "pdfs" / FOLDER).glob("*.pdf"))
    return files[:limit] if limit else files


@dataclass
class Readings:
    """Every process of the stack at one instant: {process name: reading}."""

    processes: dict[str, ProcessReading]

    @classmethod
    def take(cls, stack: BusStack) -> Readings:
        pids = {service.name: service.process.pid for service in stack.services}
        pids.update(stack.infra_pids())
        readings = {name: r for name, pid in pids.items() if (r := read_process(pid)) is not None}
        return cls(readings)


def component(process: str) -> str:
    """`indexer-1` -> `indexer`; infra names are their own component."""
    return process.rsplit("-", 1)[0] if process.rsplit("-", 1)[-1].isdigit() else process


def per_page(cpu: dict[str, float], pages: int) -> dict[str, float]:
    return {name: round(value / max(pages, 1), 6) for name, value in cpu.items()}


def cpu_between(before: Readings, after: Readings) -> dict[str, float]:
    return {
        name: round(after.processes[name].cpu_s - before.processes[name].cpu_s, 3)
        for name in sorted(after.processes) if name in before.processes
    }


def idle_rates(stack: BusStack, seconds: float = IDLE_S) -> dict[str, float]:
    """CPU seconds per second of every process while nothing is sent: heartbeats, fetch polls,
    lag reports, health checks, the JVM's own work. Part of what a run costs is this rate times
    its duration, whatever the page count."""
    before = Readings.take(stack)
    time.sleep(seconds)
    return {name: round(cpu / seconds, 5) for name, cpu in cpu_between(before, Readings.take(stack)).items()}


def summarize_run(
    label: str, indexers: int, pages: int, documents: int, failed: int, wall_s: float,
    before: Readings, after: Readings, machine: dict[str, float], idle: dict[str, float],
) -> dict[str, Any]:
    cpu = cpu_between(before, after)
    by_component: dict[str, float] = {}
    at_rest: dict[str, float] = {}
    for name, value in cpu.items():
        by_component[component(name)] = round(by_component.get(component(name), 0.0) + value, 3)
        at_rest[component(name)] = round(at_rest.get(component(name), 0.0) + idle.get(name, 0.0), 5)
    # What each page adds on top of the process' CPU at rest over the same time.
    marginal = {name: max(0.0, value - at_rest.get(name, 0.0) * wall_s) for name, value in by_component.items()}
    indexer = by_component.get(INDEXER, 0.0)
    bus_store = sum(by_component.get(name, 0.0) for name in BUS_AND_STORE)
    query_stages = sum(by_component.get(name, 0.0) for name in QUERY_STAGES)
    return {
        "label": label,
        "indexers": indexers,
        "documents": documents,
        "failed": failed,
        "pages": pages,
        "wall_s": round(wall_s, 2),
        "pages_per_s": round(pages / wall_s, 2) if wall_s else 0.0,
        "cpu_s": cpu,
        "cpu_s_per_page": per_page(cpu, pages),
        "cpu_s_per_page_by_component": per_page(by_component, pages),
        "idle_cpu_s_per_s_by_component": at_rest,
        "marginal_cpu_s_per_page_by_component": per_page(marginal, pages),
        "peak_rss_mb": {name: after.processes[name].peak_rss_mb for name in sorted(after.processes)},
        "bus_store_cpu_s_per_page": round(bus_store / max(pages, 1), 6),
        "indexer_cpu_s_per_page": round(indexer / max(pages, 1), 6),
        "query_stages_cpu_s_per_page": round(query_stages / max(pages, 1), 6),
        "bus_store_share_of_indexer": round(bus_store / indexer, 3) if indexer else None,
        "machine": machine,
    }


def project(run: dict[str, Any], cores: tuple[int, ...] = PROJECTED_CORES) -> dict[str, Any]:
    """Pages/s on N cores from the CPU each page costs, in a model where every process is CPU-bound.

    Each page costs `i` CPU-seconds in an indexer and `b` in the bus and store (Kafka, the store,
    the gateway; the query stages' share during ingestion is added to `b`). Indexers scale out
    (one Python process per core, its work is per document), so with all N cores busy the whole
    system does N / (i + b) pages/s, and the bus and store hold b / (i + b) of the cores. This is
    an upper bound: it assumes a single broker and a single store instance keep up while they
    need that many cores; the store column says how many cores the store alone needs at that rate.
    """
    indexer = run["indexer_cpu_s_per_page"]
    bus = run["bus_store_cpu_s_per_page"] + run["query_stages_cpu_s_per_page"]
    store = run["cpu_s_per_page_by_component"].get("ferretdb", 0.0)
    kafka = run["cpu_s_per_page_by_component"].get("kafka", 0.0)
    per_page_total = indexer + bus
    out: dict[str, Any] = {"indexer_cpu_s_per_page": indexer, "bus_store_cpu_s_per_page": round(bus, 6)}
    for n in cores:
        rate = n / per_page_total if per_page_total else 0.0
        out[f"{n}_cores"] = {
            "pages_per_s": round(rate, 1),
            "indexer_cores": round(rate * indexer, 2),
            "bus_store_cores": round(rate * bus, 2),
            "store_cores": round(rate * store, 2),
            "kafka_cores": round(rate * kafka, 2),
        }
    out["indexers_only_pages_per_s_per_core"] = round(1 / indexer, 1) if indexer else None
    return out


async def ingest(stack: BusStack, files: list[Path], label: str, indexers: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        before = Readings.take(stack)
        machine = MachineCpu().start()
        start = time.perf_counter()
        doc_ids = [await upload(client, path) for path in files]
        records, last = await wait_terminal(client, doc_ids, timeout_s=3600, poll_s=POLL_S)
        machine_use = machine.stop()
        after = Readings.take(stack)
    idle = idle_rates(stack)
    failed = [d for d, r in records.items() if r["status"] == "failed"]
    for doc_id in failed:
        logger.warning("document failed through the bus: %s", records[doc_id])
    pages = sum(page_count(p) for p in files)
    return summarize_run(label, indexers, pages, len(files), len(failed), last - start, before, after, machine_use, idle)


def run(stack: BusStack, files: list[Path], counts: tuple[int, ...]) -> list[dict[str, Any]]:
    runs = []
    for count in counts:
        stack.start_services(f"bench_cost_{count}_{int(time.time())}", indexers=count)
        try:
            stack.wait_indexers_assigned()
            asyncio.run(warm_up(stack, stack.run_dir))
            label = f"bus, {count} indexer{'s' if count > 1 else ''}"
            logger.info("%s: %d filings", label, len(files))
            runs.append(asyncio.run(ingest(stack, files, label, count)))
        finally:
            stack.stop_services()
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N filings")
    parser.add_argument("--indexers", default="1,2", help="indexer process counts (default 1,2)")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench-cost")
    parser.add_argument("--out", default="bus_cost", help="result name in bench/results (default bus_cost)")
    args = parser.parse_args(argv)
    configure_bench_logging()
    files = filings(args.limit)
    stack = BusStack(args.run_dir)
    stack.start_infra()
    try:
        runs = run(stack, files, tuple(int(x) for x in args.indexers.split(",")))
    finally:
        stack.stop_infra()
    best = min(runs, key=lambda r: r["bus_store_share_of_indexer"] or float("inf"))
    result = {
        "corpus": f"pdfs/{FOLDER}",
        "files": len(files),
        "target_bus_store_share_of_indexer": TARGET_SHARE,
        "runs": runs,
        "projection": {r["label"]: project(r) for r in runs},
        "meets_target": all((r["bus_store_share_of_indexer"] or 0) <= TARGET_SHARE for r in runs),
        "lowest_share": best["bus_store_share_of_indexer"],
    }
    write_result(args.out, result)
    for r in runs:
        print(f"{r['label']:18} {r['pages']:5d} pages {r['wall_s']:7.1f} s {r['pages_per_s']:7.1f} pages/s  "
              f"indexer {r['indexer_cpu_s_per_page'] * 1000:.2f} ms/page  "
              f"bus+store {r['bus_store_cpu_s_per_page'] * 1000:.2f} ms/page "
              f"({r['bus_store_share_of_indexer']:.0%})  {r['cpu_s_per_page_by_component']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
