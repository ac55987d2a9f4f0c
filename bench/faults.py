"""Faults under load: kill -9 of each stage, Kafka and FerretDB restarts, a stage left down, and a
deletion of the document being asked, mid-upload and mid-query.

For each fault a light load runs for `--window` seconds (query clients asking with a deadline,
one client uploading new PDFs); the fault strikes a few seconds in: a stage process is killed
with SIGKILL and started again (as a supervisor would), Kafka / FerretDB is stopped and started,
the navigator is killed and left down past the heartbeats' lifetime before it is started again
(`navigator down`), or the document the queries ask is deleted (`delete under load`). Then every
upload accepted with 202 must become `ready`, every answer must be published once, and every
query must end (answered, 503, 504, or 404 once its document is deleted) within its `timeout_s`:

    uploads lost        accepted (202) but not ready once the pipeline drained
    answers duplicated  query ids with more than one `answer.verified` event
    within deadline     share of queries whose HTTP answer came within timeout_s (+ 1 s)
    fast refusals       with the navigator down: 503s that came at once (<= 2 s), each with
                        Retry-After and the query id, against those that waited out the deadline
    served after delete answers citing the deleted document that came after DELETE answered

`python -m bench.faults` writes bench/results/faults.json (private Kafka/FerretDB ports, see
bench/stack.py).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import os
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaConsumer
from fpdf import FPDF

from bench.common import configure_bench_logging, write_result
from bench.stack import STAGES, BusStack
from shared.adapters.kafka.connection import kafka_connection
from shared.settings import Settings

logger = logging.getLogger("bench.faults")

QUERY_TIMEOUT_S = 15.0
LATE_S = 1.0
QUERY_CLIENTS = 2
FAULT_AT_S = 4.0
OUTAGE_S = 5.0
DRAIN_TIMEOUT_S = 240.0
# Past the heartbeats' lifetime (TREERAG_HEARTBEAT_TTL_S, 10 s), so the gateway knows the stage is gone.
STAGE_DOWN_S = 16.0
FAST_REFUSAL_S = 2.0
FAULTS = (*(f"kill -9 {stage}" for stage in STAGES), "restart kafka", "restart ferretdb", "navigator down",
          "delete under load")


def manual(serial: int) -> bytes:
    """A small sectioned PDF whose bytes (and so doc id) differ per `serial`."""
    pdf = FPDF()
    for number, title in enumerate(("Pump maintenance", "Safety valves", "Filters"), start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 16)
        pdf.cell(0, 10, f"{number} {title}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, f"The {title.lower()} procedure of unit {serial} is repeated every "
                             f"{100 + serial * 7 + number} hours by the maintenance team of plant {serial}.")
    return bytes(pdf.output())


@dataclass
class Load:
    url: str
    doc_id: str
    serial: int
    stop: threading.Event = field(default_factory=threading.Event)
    queries: list[dict[str, Any]] = field(default_factory=list)
    uploads: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    asked: Iterator[int] = field(default_factory=itertools.count)

    def ask(self) -> None:
        with httpx.Client(timeout=QUERY_TIMEOUT_S + 30) as client:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    # A question never asked before: the pipeline runs, never the answer cache.
                    question = f"How often is the pump maintenance procedure repeated? (request {next(self.asked)})"
                    response = client.post(f"{self.url}/v1/query", json={
                        "question": question, "doc_ids": [self.doc_id], "timeout_s": QUERY_TIMEOUT_S})
                    status, body = response.status_code, response.json()
                    query_id, retry_after = body.get("query_id"), response.headers.get("retry-after")
                    cited = sorted({c["doc_id"] for c in body.get("citations", [])})
                except (httpx.HTTPError, ValueError) as exc:
                    status, query_id, retry_after, cited = type(exc).__name__, None, None, []
                ended = time.monotonic()
                with self.lock:
                    self.queries.append({"status": status, "seconds": round(ended - started, 3), "query_id": query_id,
                                         "ended": ended, "retry_after": retry_after, "cited": cited})
                if status == 503:
                    time.sleep(1.0)  # what Retry-After asks for, shortened

    def upload(self) -> None:
        with httpx.Client(timeout=60) as client:
            while not self.stop.is_set():
                self.serial += 1
                started = time.monotonic()
                try:
                    response = client.post(f"{self.url}/v1/documents",
                                           files={"file": (f"unit-{self.serial}.pdf", manual(self.serial),
                                                           "application/pdf")})
                    status = response.status_code
                    doc_id = response.json().get("doc_id") if status == 202 else None
                except (httpx.HTTPError, ValueError) as exc:
                    status, doc_id = type(exc).__name__, None
                self.uploads.append({"status": status, "doc_id": doc_id,
                                     "seconds": round(time.monotonic() - started, 3)})
                time.sleep(1.5)


def wait_document(url: str, doc_id: str, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    status = "unknown"
    while time.monotonic() < deadline:
        try:
            response = httpx.get(f"{url}/v1/documents/{doc_id}", timeout=10)
            if response.status_code == 200:
                status = response.json()["status"]
                if status in ("ready", "failed"):
                    return status
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return status


def strike(stack: BusStack, fault: str) -> dict[str, Any]:
    """Strike `fault`; what it measured of itself (the deletion's answer)."""
    if fault.startswith("kill -9 ") or fault.endswith(" down"):
        stage = fault.removeprefix("kill -9 ").removesuffix(" down")
        victim = next(s for s in stack.services if s.stage == stage)
        os.killpg(victim.process.pid, signal.SIGKILL)
        victim.process.wait(10)
        stack.services.remove(victim)
        time.sleep(1.0 if fault.startswith("kill -9 ") else STAGE_DOWN_S)
        stack._spawn(stage, victim.replica)  # the supervisor's restart
        return {}
    script = {"restart kafka": "kafka.sh", "restart ferretdb": "ferretdb.sh"}[fault]
    stack._infra(script, "stop")
    time.sleep(OUTAGE_S)
    stack._infra(script, "start")
    return {}


def delete_asked(url: str, doc_id: str) -> dict[str, Any]:
    started = time.monotonic()
    response = httpx.delete(f"{url}/v1/documents/{doc_id}", timeout=30)
    answered = time.monotonic()
    return {"delete_status": response.status_code, "delete_seconds": round(answered - started, 3),
            "deleted_at": answered}


async def answers_per_query(bootstrap: str, topic: str) -> Counter[str]:
    connection = kafka_connection(Settings(kafka_bootstrap=bootstrap))
    consumer = AIOKafkaConsumer(topic, **connection.client_options(), auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    counts: Counter[str] = Counter()
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=3000)
            if not batch:
                return counts
            for records in batch.values():
                for record in records:
                    counts[json.loads(record.value)["query_id"]] += 1
    finally:
        await consumer.stop()


def run_fault(stack: BusStack, fault: str, doc_id: str, serial: int, window_s: float) -> dict[str, Any]:
    if fault == "delete under load":  # a document of its own, asked until it is deleted
        doc_id = httpx.post(f"{stack.gateway_url}/v1/documents", timeout=60,
                            files={"file": (f"unit-{serial}.pdf", manual(serial), "application/pdf")}).json()["doc_id"]
        assert wait_document(stack.gateway_url, doc_id, DRAIN_TIMEOUT_S) == "ready", "the document to delete"
        serial += 1
    load = Load(stack.gateway_url, doc_id, serial)
    workers = [threading.Thread(target=load.ask) for _ in range(QUERY_CLIENTS)]
    workers.append(threading.Thread(target=load.upload))
    for worker in workers:
        worker.start()
    time.sleep(FAULT_AT_S)
    struck = time.monotonic()
    measured = delete_asked(stack.gateway_url, doc_id) if fault == "delete under load" else strike(stack, fault)
    recovered_in = time.monotonic() - struck
    time.sleep(max(0.0, window_s - FAULT_AT_S - recovered_in))
    load.stop.set()
    for worker in workers:
        worker.join()
    accepted = [u["doc_id"] for u in load.uploads if u["status"] == 202]
    outcomes = Counter(wait_document(stack.gateway_url, doc, DRAIN_TIMEOUT_S) for doc in accepted)
    statuses = Counter(str(q["status"]) for q in load.queries)
    in_time = sum(q["seconds"] <= QUERY_TIMEOUT_S + LATE_S for q in load.queries)
    result = {
        "fault": fault,
        "uploads_sent": len(load.uploads),
        "uploads_accepted": len(accepted),
        "upload_statuses": dict(Counter(str(u["status"]) for u in load.uploads)),
        "uploads_ready": outcomes.get("ready", 0),
        "uploads_lost": len(accepted) - outcomes.get("ready", 0) - outcomes.get("failed", 0),
        "uploads_failed": outcomes.get("failed", 0),
        "queries": len(load.queries),
        "query_statuses": dict(statuses),
        "queries_within_deadline": in_time,
        "queries_within_deadline_pct": round(100 * in_time / max(1, len(load.queries)), 1),
        "slowest_query_s": max((q["seconds"] for q in load.queries), default=None),
        "query_ids": [q["query_id"] for q in load.queries if q["query_id"]],
        "fault_seconds": round(recovered_in, 1),
    }
    refused = [q for q in load.queries if q["status"] == 503]
    if fault.endswith(" down"):
        result |= {
            "refused": len(refused),
            "refused_fast": sum(q["seconds"] <= FAST_REFUSAL_S for q in refused),
            "refused_with_retry_after_and_query_id": sum(bool(q["retry_after"] and q["query_id"]) for q in refused),
            "slowest_refusal_s": max((q["seconds"] for q in refused), default=None),
        }
    if "deleted_at" in measured:
        deleted_at = measured.pop("deleted_at")
        result |= measured | {
            "served_after_delete": sum(q["status"] == 200 and doc_id in q["cited"] and q["ended"] > deleted_at
                                       for q in load.queries),
            "not_found_after_delete": sum(q["status"] == 404 for q in load.queries),
        }
    logger.info("%s: %s", fault, {k: v for k, v in result.items() if k != "query_ids"})
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench-faults")
    parser.add_argument("--window", type=float, default=20.0, help="Seconds of load per fault.")
    parser.add_argument("--faults", nargs="*", default=list(FAULTS))
    args = parser.parse_args(argv)
    configure_bench_logging()
    stack = BusStack(args.run_dir)
    stack.start_infra()
    results: list[dict[str, Any]] = []
    try:
        stack.start_services(f"bench_faults_{int(time.time())}", indexers=1, timeout_s=300)
        try:
            seed = httpx.post(f"{stack.gateway_url}/v1/documents", timeout=60,
                              files={"file": ("unit-1.pdf", manual(1), "application/pdf")}).json()["doc_id"]
            assert wait_document(stack.gateway_url, seed, DRAIN_TIMEOUT_S) == "ready", "the seed document"
            for number, fault in enumerate(args.faults):
                results.append(run_fault(stack, fault, seed, serial=1000 * (number + 1), window_s=args.window))
            answers = asyncio.run(answers_per_query(stack.kafka_bootstrap, "answer.verified"))
        finally:
            stack.stop_services()
    finally:
        stack.stop_infra()
    for result in results:
        ids = result.pop("query_ids")
        result["answers_duplicated"] = sum(answers.get(query_id, 0) > 1 for query_id in ids)
    totals = {
        "uploads_accepted": sum(r["uploads_accepted"] for r in results),
        "uploads_lost": sum(r["uploads_lost"] for r in results),
        "answers_duplicated": sum(r["answers_duplicated"] for r in results),
        "queries": sum(r["queries"] for r in results),
        "queries_within_deadline_pct": round(100 * sum(r["queries_within_deadline"] for r in results)
                                             / max(1, sum(r["queries"] for r in results)), 1),
    }
    write_result("faults", {"query_timeout_s": QUERY_TIMEOUT_S, "window_s": args.window,
                            "query_clients": QUERY_CLIENTS, "faults": results, "totals": totals})
    print(json.dumps(totals, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
