"""Queries through the bus beside the one-process pipeline (the floor), in one run.

Closed loop: `concurrency` clients each send the next question as soon as their previous answer
arrives, over the dev question sets, a fixed batch of requests per level (1, 2, 4, 8 and 16
clients by default), so the CPU each process spends over a level (from /proc) divides by the
same number of answers at every level. Every request carries a token budget never asked before
in the run (2,000 + n tokens, n counting the requests: about the default's context) because the
budget enters the answer cache key: the loop measures the pipeline, never the cache. Any answer
but 200 stops the run with its status and body: a level with errors measures something else.
The cache-hit latency is measured on its own by repeating requests.

    python -m bench.bus_query [--concurrency 1,2,4,8,16] [--requests 240]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import (
    MachineCpu,
    configure_bench_logging,
    latency_summary,
    shared_data,
    write_result,
)
from bench.stack import BusStack, cpu_delta

logger = logging.getLogger("bench.query")

QUESTION_SETS = ("r-manuals-dev.jsonl", "mmlongbench-dev.jsonl")
CONCURRENCY = (1, 2, 4, 8, 16)
# Requests per level: at 8 clients about 10-20 s of work, enough for /proc's 10 ms ticks.
REQUESTS = 240
# The default token budget, from which each request's own budget counts up.
BASE_TOKEN_BUDGET = 2000


class BenchmarkFailure(RuntimeError):
    """The stack answered a request with something other than 200, or a level ran out of time."""


def questions(indexed: set[str]) -> list[dict[str, Any]]:
    items = []
    for name in QUESTION_SETS:
        path = shared_data() / "qa" / name
        for line in path.read_text().splitlines():
            if line.strip():
                item = json.loads(line)
                if item["doc"] in indexed:
                    items.append(item)
    return items


class Distinct:
    """A token budget never asked before in this run: its own answer cache key, about the
    default's context (see the module docstring)."""

    def __init__(self) -> None:
        self._counter = itertools.count(BASE_TOKEN_BUDGET)

    def settings(self) -> dict[str, Any]:
        return {"token_budget": next(self._counter)}


# ------------------------------------------------------------------ one process


async def one_process_floor(store: Path, items: list[dict[str, Any]], passes: int = 2) -> dict[str, Any]:
    """The same questions through `QueryEngine.ask` in this process: one warm-up pass (index
    loading), then `passes` timed passes."""
    from shared.adapters.embedded.store import EmbeddedRepository
    from shared.model.query import QuerySettings
    from treerag.engine import QueryEngine

    engine = QueryEngine(EmbeddedRepository(store))
    seconds: list[float] = []
    for pass_no in range(passes + 1):
        for item in items:
            start = time.perf_counter()
            await engine.ask(item["question"], [item["doc"]], QuerySettings())
            if pass_no:
                seconds.append(time.perf_counter() - start)
    return latency_summary(seconds)


# ------------------------------------------------------------------ through the bus


async def ask(client: httpx.AsyncClient, item: dict[str, Any], doc_id: str, settings: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    response = await client.post(
        "/v1/query", json={"question": item["question"], "doc_ids": [doc_id], "settings": settings}
    )
    elapsed = time.perf_counter() - start
    body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    return {"ok": response.status_code == 200, "status": response.status_code, "seconds": elapsed, "body": body}


async def closed_loop(
    stack: BusStack, items: list[dict[str, Any]], doc_ids: dict[str, str], concurrency: int,
    requests: int, distinct: Distinct, max_seconds: float = 180.0,
) -> dict[str, Any]:
    queue = list(itertools.islice(itertools.cycle(items), requests))
    results: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    # An overloaded stack answers every request with the gateway's timeout; past this budget the
    # level stops sending, so one bad level cannot hold the whole run for an hour.
    stop_at = time.monotonic() + max_seconds

    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0, limits=limits) as client:

        async def client_loop() -> None:
            while queue and time.monotonic() < stop_at:
                item = queue.pop()
                results.append(await ask(client, item, doc_ids[item["doc"]], distinct.settings()))

        cpu_before = stack.cpu_by_stage()
        machine = MachineCpu().start()
        start = time.perf_counter()
        await asyncio.gather(*(client_loop() for _ in range(concurrency)))
        wall = time.perf_counter() - start
        machine_use = machine.stop()
        cpu = cpu_delta(cpu_before, stack.cpu_by_stage())
    ok = [r for r in results if r["ok"]]
    failures: dict[str, int] = {}
    for r in results:
        if not r["ok"]:
            failures[str(r["status"])] = failures.get(str(r["status"]), 0) + 1
    if failures:
        first = next(r for r in results if not r["ok"])
        raise BenchmarkFailure(
            f"{sum(failures.values())} of {len(results)} requests at concurrency {concurrency} were not answered "
            f"with 200 (by status: {failures}); the first: {json.dumps(first['body'])[:1000]}"
        )
    if len(results) < requests:
        raise BenchmarkFailure(
            f"concurrency {concurrency}: only {len(results)} of {requests} requests within {max_seconds:.0f}s"
        )
    total_cpu = sum(cpu.values())
    return {
        "concurrency": concurrency,
        "requests": len(results),
        "stopped_early": len(results) < requests,
        "errors": failures,
        "throughput_qps": round(len(ok) / wall, 2) if wall else 0.0,
        "latency": latency_summary([r["seconds"] for r in ok]),
        "latency_including_errors": latency_summary([r["seconds"] for r in results]),
        "stage_timings_p50_ms": stage_timings([r["body"] for r in ok]),
        "cpu_s": cpu,
        "cpu_s_per_query": {k: round(v / max(len(ok), 1), 5) for k, v in cpu.items()},
        "cpu_ms_per_query_all_processes": round(1000 * total_cpu / max(len(ok), 1), 1),
        "machine": machine_use,
    }


def stage_timings(bodies: list[dict[str, Any]]) -> dict[str, float]:
    """Median of every numeric field of the responses' `timings` (nested keys joined by '.', list
    entries named by their `stage`)."""
    from bench.common import percentile

    values: dict[str, list[float]] = {}

    def collect(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                collect(f"{prefix}.{key}" if prefix else str(key), value)
        elif isinstance(node, list):
            # e.g. "stages": [{"stage": "navigator", "queued_ms": ...}, ...] -> stages.navigator.queued_ms
            for position, entry in enumerate(node):
                name = entry.get("stage", position) if isinstance(entry, dict) else position
                collect(f"{prefix}.{name}", {k: v for k, v in entry.items() if k != "stage"} if isinstance(entry, dict) else entry)
        elif isinstance(node, int | float) and not isinstance(node, bool):
            values.setdefault(prefix, []).append(float(node))

    for body in bodies:
        collect("", body.get("timings") or {})
    return {key: round(percentile(v, 50), 3) for key, v in sorted(values.items())}


async def cache_hits(stack: BusStack, items: list[dict[str, Any]], doc_ids: dict[str, str], n: int = 30) -> dict[str, Any]:
    """Latency of answers the cache gives: each question asked once to fill it, then again."""
    sample = items[:n]
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        settings = {"token_budget": BASE_TOKEN_BUDGET - 1}  # used by no closed-loop request
        for item in sample:
            await ask(client, item, doc_ids[item["doc"]], settings)
        replies = [await ask(client, item, doc_ids[item["doc"]], settings) for item in sample]
    if failed := [r for r in replies if not r["ok"]]:
        raise BenchmarkFailure(f"{len(failed)} of {len(replies)} cached answers were not 200: {failed[0]['status']} "
                               f"{json.dumps(failed[0]['body'])[:1000]}")
    return latency_summary([r["seconds"] for r in replies])


def run(stack: BusStack, store: Path, doc_ids: dict[str, str], concurrency: tuple[int, ...] = CONCURRENCY,
        requests: int = REQUESTS) -> dict[str, Any]:
    """Needs the services running with `doc_ids` (file name -> doc id) ready, and the same files
    indexed in the embedded store at `store`."""
    items = questions(set(doc_ids))
    if not items:
        raise RuntimeError("no dev question is about an indexed document")
    logger.info("one-process floor over %d questions", len(items))
    floor = asyncio.run(one_process_floor(store, items))
    distinct = Distinct()
    # Warm the services' per-document indexes, as the floor's warm-up pass does.
    asyncio.run(closed_loop(stack, items, doc_ids, 4, len(items), distinct))
    levels = []
    for level in concurrency:
        logger.info("closed loop: concurrency %d, %d requests", level, requests)
        levels.append(asyncio.run(closed_loop(stack, items, doc_ids, level, requests, distinct)))
        # Written after every level: a run cut short still leaves what it measured.
        write_result("bus_query", summarize(items, floor, levels, {}))
    hits = asyncio.run(cache_hits(stack, items, doc_ids))
    return summarize(items, floor, levels, hits)


def summarize(
    items: list[dict[str, Any]], floor: dict[str, Any], levels: list[dict[str, Any]], hits: dict[str, Any]
) -> dict[str, Any]:
    by_level = {entry["concurrency"]: entry for entry in levels}
    summary: dict[str, Any] = {"questions": len(items), "one_process": floor, "bus": levels, "cache_hit": hits}
    if 1 in by_level and by_level[1]["latency"]["p50_ms"] is not None:
        summary["bus_overhead_p50_ms_at_1"] = round(by_level[1]["latency"]["p50_ms"] - floor["p50_ms"], 2)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Standalone: index the question sets' PDFs (both ways) and run the query benchmark."""
    from bench import bus_ingest

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench")
    parser.add_argument("--concurrency", default=",".join(map(str, CONCURRENCY)), help="client counts, in order")
    parser.add_argument("--requests", type=int, default=REQUESTS, help="requests per level")
    args = parser.parse_args(argv)
    levels = tuple(int(x) for x in args.concurrency.split(","))
    configure_bench_logging()
    files = bus_ingest.corpus(("r-manuals", "mmlongbench"))
    stack = BusStack(args.run_dir)
    stack.start_infra()
    try:
        with tempfile.TemporaryDirectory(prefix="treerag-bench-") as tmp:
            store = Path(tmp) / "store"
            bus_ingest.one_process(files, store)
            stack.start_services(f"bench_query_{int(time.time())}", indexers=1)
            try:
                asyncio.run(bus_ingest.warm_up(stack, stack.run_dir))
                _, doc_ids = asyncio.run(bus_ingest.through_bus(stack, files, "index for queries"))
                result = run(stack, store, doc_ids, levels, args.requests)
            finally:
                stack.stop_services()
    finally:
        stack.stop_infra()
    write_result("bus_query", result)
    print(json.dumps({k: result[k] for k in ("one_process", "bus_overhead_p50_ms_at_1") if k in result}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
