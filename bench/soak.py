"""Soak: many queries through the services, and each process' resident memory from the first to
the last, to show that no cache grows past its bound (docs/services.md, Memory bounds).

The r-manuals and MMLongBench PDFs are indexed through the gateway; then `--queries` questions
(the dev questions over them, in turn) are asked by `--clients` closed-loop clients. Each query
is a question never asked before: the dev question with its serial number appended, so every
cache keyed by the question (the answer cache, the question's vectors, terms and parses) meets a
new key each time, as it does under real traffic, and none is answered from the answer cache.
Every `--sample-every` queries the resident set (VmRSS, summed over each process' tree) of every
stage, the gateway, Kafka and FerretDB is read from /proc.

    python -m bench.soak [--queries 10000] [--max-minutes 15] [--clients 8]

writes bench/results/soak.json. `--max-minutes` stops the run early on a slow machine; the result
says how many queries ran.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench import bus_ingest
from bench.bus_query import questions
from bench.common import configure_bench_logging, latency_summary, write_result
from bench.proc import descendants
from bench.stack import BusStack

logger = logging.getLogger("bench.soak")

FOLDERS = ("r-manuals", "mmlongbench")


def rss_mb(pid: int) -> float:
    """The current resident set (VmRSS) of `pid` and its live descendants, in MiB."""
    total = 0
    for process in descendants(pid):
        try:
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return round(total / 1024, 1)


def memory(stack: BusStack) -> dict[str, float]:
    """Resident MiB of every process of the stack, by name (`navigator-0`, `kafka`…)."""
    pids = {service.name: service.process.pid for service in stack.services}
    pids.update(stack.infra_pids())
    return {name: rss_mb(pid) for name, pid in sorted(pids.items())}


class Soak:
    def __init__(self, stack: BusStack, items: list[dict[str, Any]], doc_ids: dict[str, str]) -> None:
        self.stack = stack
        self.items = items
        self.doc_ids = doc_ids
        self.serials = itertools.count(1)
        self.sent = 0
        self.statuses: dict[str, int] = {}
        self.seconds: list[float] = []
        self.samples: list[dict[str, Any]] = []
        self.started = time.monotonic()

    def sample(self) -> None:
        entry = {"queries": self.sent, "elapsed_s": round(time.monotonic() - self.started, 1),
                 "rss_mb": memory(self.stack)}
        self.samples.append(entry)
        logger.info("after %d queries (%.0f s): %s", entry["queries"], entry["elapsed_s"], entry["rss_mb"])

    async def ask(self, client: httpx.AsyncClient) -> None:
        serial = next(self.serials)
        item = self.items[serial % len(self.items)]
        body = {"question": f"{item['question']} ({serial})", "doc_ids": [self.doc_ids[item["doc"]]]}
        start = time.perf_counter()
        try:
            status = (await client.post("/v1/query", json=body)).status_code
        except httpx.HTTPError as exc:
            status = type(exc).__name__  # type: ignore[assignment]
        if status == 200:
            self.seconds.append(time.perf_counter() - start)
        self.statuses[str(status)] = self.statuses.get(str(status), 0) + 1
        self.sent += 1

    async def run(self, queries: int, clients: int, sample_every: int, max_s: float) -> None:
        stop_at = time.monotonic() + max_s
        next_sample = sample_every
        dispatched = itertools.count()  # counted when sent, so that the clients stop at `queries`
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(base_url=self.stack.gateway_url, timeout=120.0, limits=limits) as client:

            async def loop() -> None:
                nonlocal next_sample
                while next(dispatched) < queries and time.monotonic() < stop_at:
                    await self.ask(client)
                    if self.sent >= next_sample:
                        next_sample += sample_every
                        self.sample()

            await asyncio.gather(*(loop() for _ in range(clients)))
        if not self.samples or self.samples[-1]["queries"] != self.sent:
            self.sample()

    def result(self, queries: int, clients: int, indexed: dict[str, Any]) -> dict[str, Any]:
        first, last = self.samples[0], self.samples[-1]
        return {
            "queries_asked_for": queries,
            "queries_run": self.sent,
            "stopped_early": self.sent < queries,
            "clients": clients,
            "wall_s": last["elapsed_s"],
            "statuses": self.statuses,
            "latency": latency_summary(self.seconds),
            "indexed": indexed,
            "rss_mb_start": first["rss_mb"],
            "rss_mb_end": last["rss_mb"],
            "rss_mb_growth": {name: round(last["rss_mb"].get(name, 0.0) - mb, 1)
                              for name, mb in first["rss_mb"].items()},
            "samples": self.samples,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--max-minutes", type=float, default=15.0,
                        help="Stop asking after this long, whatever the count (the result says how many ran).")
    parser.add_argument("--sample-every", type=int, default=500, help="Queries between two memory readings.")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench")
    parser.add_argument("--name", default="soak", help="The result's name: bench/results/<name>.json.")
    args = parser.parse_args(argv)
    configure_bench_logging()
    files = bus_ingest.corpus(FOLDERS)
    with bus_ingest.indexed_stack(args.run_dir, "soak", files) as (stack, doc_ids):
        items = questions(set(doc_ids))
        if not items:
            raise RuntimeError("no dev question is about an indexed document")
        soak = Soak(stack, items, doc_ids)
        soak.sample()  # the start: documents indexed, no query asked yet
        asyncio.run(soak.run(args.queries, args.clients, args.sample_every, args.max_minutes * 60))
        indexed = {"documents": len(doc_ids), "pages": sum(bus_ingest.page_count(f) for f in files),
                   "questions": len(items)}
        result = soak.result(args.queries, args.clients, indexed)
    write_result(args.name, result)
    logger.info("%d queries: RSS start %s, end %s", result["queries_run"], result["rss_mb_start"], result["rss_mb_end"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
