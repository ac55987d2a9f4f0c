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
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.bus_ingest import page_count, statuses, upload, warm_up
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
# The end of a run is watched once a second (so known to within that) on the indexers' /metrics:
# polling the gateway's listing instead would cost the gateway and the store a listing a second,
# CPU that depends on how long the run takes and how many documents it lists, not on its pages.
POLL_S = 1.0
FINISHED = "treerag_documents_total{"
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
    """CPU seconds per second of every process while nothing is sent (the warm stack before a
    run): heartbeats, fetch polls, lag reports, health checks, the JVM's own work. Part of what a
    run costs is this rate times its duration, whatever the page count."""
    before = Readings.take(stack)
    time.sleep(seconds)
    return {name: round(cpu / seconds, 5) for name, cpu in cpu_between(before, Readings.take(stack)).items()}


def summarize_run(
    label: str, indexers: int, pages: int, documents: int, failed: int, wall_s: float, cpu_window_s: float,
    before: Readings, after: Readings, machine: dict[str, float], idle: dict[str, float],
) -> dict[str, Any]:
    cpu = cpu_between(before, after)
    by_component: dict[str, float] = {}
    at_rest: dict[str, float] = {}
    for name, value in cpu.items():
        by_component[component(name)] = round(by_component.get(component(name), 0.0) + value, 3)
        at_rest[component(name)] = round(at_rest.get(component(name), 0.0) + idle.get(name, 0.0), 5)
    # What each page adds on top of the process' CPU at rest over the same time.
    marginal = {name: max(0.0, value - at_rest.get(name, 0.0) * cpu_window_s) for name, value in by_component.items()}
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
        # From the first upload until every process was back at rest: the CPU figures' span.
        "cpu_window_s": round(cpu_window_s, 2),
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
    """Pages/s on N cores from what a page costs each process and what each costs at rest.

    The model: every process is CPU-bound and the cores are shared out perfectly. A page costs
    `c` CPU-seconds over all processes (its marginal cost: indexer, store, Kafka, gateway and the
    query stages' share of ingestion); the processes cost `f` cores at rest (heartbeats, polls, the
    JVM), whatever the rate. Indexers scale out (one process per core, a document per process
    at a time), so N cores do (N - f) / c pages/s. The bus and the store then take their share
    of the cores; `store_cores` says how many one store instance must give: FerretDB on SQLite
    writes one transaction at a time, so past about one core it, not the indexers, is the limit.
    """
    marginal = run["marginal_cpu_s_per_page_by_component"]
    at_rest = sum(run["idle_cpu_s_per_s_by_component"].values())
    per_page = sum(marginal.values())
    bus_store = sum(marginal.get(name, 0.0) for name in BUS_AND_STORE)
    out: dict[str, Any] = {
        "marginal_cpu_s_per_page": round(per_page, 6),
        "indexer_cpu_s_per_page": marginal.get(INDEXER, 0.0),
        "bus_store_cpu_s_per_page": round(bus_store, 6),
        "bus_store_share_of_indexer": round(bus_store / marginal[INDEXER], 3) if marginal.get(INDEXER) else None,
        "cores_at_rest": round(at_rest, 3),
    }
    for n in cores:
        rate = max(n - at_rest, 0.0) / per_page if per_page else 0.0
        out[f"{n}_cores"] = {
            "pages_per_s": round(rate, 1),
            "indexer_cores": round(rate * marginal.get(INDEXER, 0.0), 2),
            "bus_store_cores": round(rate * bus_store + sum(
                run["idle_cpu_s_per_s_by_component"].get(name, 0.0) for name in BUS_AND_STORE), 2),
            "store_cores": round(rate * marginal.get("ferretdb", 0.0), 2),
        }
    store = marginal.get("ferretdb", 0.0)
    out["one_store_core_pages_per_s"] = round(1 / store, 1) if store else None
    return out


async def finished_documents(client: httpx.AsyncClient, stack: BusStack) -> int:
    """Documents the indexers have finished since they started (ready or failed)."""
    total = 0.0
    for service in stack.services:
        if service.stage == INDEXER:
            text = (await client.get(service.metrics_url)).text
            total += sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(FINISHED))
    return int(total)


async def wait_finished(client: httpx.AsyncClient, stack: BusStack, count: int, timeout_s: float) -> float:
    """When the indexers had finished `count` documents (perf_counter time)."""
    deadline = time.monotonic() + timeout_s
    while await finished_documents(client, stack) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the indexers did not finish {count} documents within {timeout_s:.0f}s")
        await asyncio.sleep(POLL_S)
    return time.perf_counter()


def total_cpu(readings: Readings) -> float:
    return sum(r.cpu_s for r in readings.processes.values())


def wait_quiet(stack: BusStack, idle: dict[str, float], timeout_s: float = 300.0, window_s: float = 3.0) -> Readings:
    """Readings once the stack is back at rest: work a page caused can outlast its document's
    `ready` (the navigator warming its index, the store writing behind), and belongs to it."""
    at_rest = sum(idle.values())
    deadline = time.monotonic() + timeout_s
    previous = Readings.take(stack)
    while True:
        time.sleep(window_s)
        current = Readings.take(stack)
        busy = (total_cpu(current) - total_cpu(previous)) / window_s
        if busy <= 1.5 * at_rest + 0.02 or time.monotonic() > deadline:
            return current
        previous = current


async def ingest(stack: BusStack, files: list[Path], label: str, indexers: int) -> dict[str, Any]:
    idle = idle_rates(stack)
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        done_before = await finished_documents(client, stack)
        before = Readings.take(stack)
        machine = MachineCpu().start()
        start = time.perf_counter()
        doc_ids = [await upload(client, path) for path in files]
        last = await wait_finished(client, stack, done_before + len(doc_ids), timeout_s=3600)
        machine_use = machine.stop()
        after = wait_quiet(stack, idle)
        cpu_window_s = time.perf_counter() - start
        records = await statuses(client, set(doc_ids))  # once, after the CPU readings
    missing = set(doc_ids) - set(records)
    if missing:
        raise RuntimeError(f"{len(missing)} uploaded documents have no record after the run")
    failed = [d for d, r in records.items() if r["status"] == "failed"]
    for doc_id in failed:
        logger.warning("document failed through the bus: %s", records[doc_id])
    pages = sum(page_count(p) for p in files)
    return summarize_run(label, indexers, pages, len(files), len(failed), last - start, cpu_window_s,
                         before, after, machine_use, idle)


def run(stack: BusStack, files: list[Path], configurations: list[tuple[bool, int]]) -> list[dict[str, Any]]:
    """One ingestion per (navigator warming, indexer count), each on a fresh database."""
    runs = []
    for warm, count in configurations:
        # The services read it from the environment the stack passes on.
        os.environ["TREERAG_NAVIGATOR_WARM"] = "true" if warm else "false"
        stack.start_services(f"bench_cost_{count}_{int(time.time())}", indexers=count)
        try:
            stack.wait_indexers_assigned()
            asyncio.run(warm_up(stack, stack.run_dir))
            label = f"{count} indexer{'s' if count > 1 else ''}, navigator warming {'on' if warm else 'off'}"
            logger.info("%s: %d filings", label, len(files))
            result = asyncio.run(ingest(stack, files, label, count))
            runs.append({**result, "navigator_warm": warm})
        finally:
            stack.stop_services()
    return runs


def broker_alone_at_rest(stack: BusStack, seconds: float = IDLE_S) -> dict[str, float]:
    """Kafka's and the store's CPU per second with no service connected."""
    before = Readings.take(stack)
    time.sleep(seconds)
    return {name: round(cpu / seconds, 5) for name, cpu in cpu_between(before, Readings.take(stack)).items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N filings")
    parser.add_argument("--indexers", default="1,2", help="indexer process counts (default 1,2)")
    parser.add_argument("--warm", default="on,off", help="navigator warming settings to run (default on,off)")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench-cost")
    parser.add_argument("--out", default="bus_cost", help="result name in bench/results (default bus_cost)")
    args = parser.parse_args(argv)
    configure_bench_logging()
    files = filings(args.limit)
    stack = BusStack(args.run_dir)
    configurations = [(warm == "on", int(count)) for warm in args.warm.split(",") for count in args.indexers.split(",")]
    stack.start_infra()
    try:
        time.sleep(IDLE_S)  # past the broker's start
        infra_at_rest = broker_alone_at_rest(stack)
        runs = run(stack, files, configurations)
    finally:
        stack.stop_infra()
    projection = {r["label"]: project(r) for r in runs}
    result = {
        "corpus": f"pdfs/{FOLDER}",
        "files": len(files),
        "target_bus_store_share_of_indexer": TARGET_SHARE,
        "infra_alone_cpu_s_per_s": infra_at_rest,
        "runs": runs,
        "projection": projection,
        "meets_target": {label: (p["bus_store_share_of_indexer"] or 0) <= TARGET_SHARE for label, p in projection.items()},
    }
    write_result(args.out, result)
    for r in runs:
        p = projection[r["label"]]
        print(f"{r['label']:40} {r['pages']:5d} pages {r['wall_s']:7.1f} s {r['pages_per_s']:7.1f} pages/s  "
              f"marginal ms/page: indexer {p['indexer_cpu_s_per_page'] * 1000:.2f}, "
              f"bus+store {p['bus_store_cpu_s_per_page'] * 1000:.2f} ({p['bus_store_share_of_indexer']:.0%}); "
              f"8 cores {p['8_cores']['pages_per_s']} pages/s, 32 cores {p['32_cores']['pages_per_s']} pages/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
