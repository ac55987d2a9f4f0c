"""The store at 10,000 documents: the calls users make, against the same calls on 10 documents.

The store is FerretDB as `make up` and the tests run it (started here on a free port in a
temporary folder, or `--mongo-url` for a running server). Documents are synthetic copies of
real indexed PDFs (the FinanceBench filings, indexed first unless `--sizes-from STORE` names an
indexed store folder): their record, pages, tree, vectors and page analysis, cycled, each under its own id, so
every row has the size a real document's row has (the first copy of each is stored through the
repository, later ones are the same rows inserted in bulk; PDF bytes are left out: no measured
call reads another document's PDF). A database of 10 documents and
one of `--documents` are measured with the same calls:

- query: the store's part of a question over 10 documents: each checked by id, the query row
  written, their records, pages, trees and vectors read (as a navigator does on first use),
  the answer written and read back (one whole query through the engine is also timed, cold);
- upload: what the gateway and the indexer write for a new PDF (the PDF, the outbox entry, the
  record, then pages, tree, vectors, page analysis and the ready record);
- status poll: `GET /v1/documents/{id}` (one record by id);
- listing page: `GET /v1/documents?limit=10` (a page, newest first: as many records as the
  small store holds, so both return a full page; a page of 50 is timed too).

The two stores are two databases of one server, measured in alternation (blocks of calls on
one, then the other, the order swapped every round), so a change of machine load during the run
weighs on both alike. Besides wall time, the CPU each call costs the server (from /proc, when
its process is known) and the client is recorded: on a shared machine it is the steadier figure.
PDF bytes go to a folder, as `make up` keeps them (TREERAG_BLOB_DIR).

    python -m bench.store_scale [--documents 10000] [--sizes-from STORE] [--mongo-url URL --server-pid PID]
        ->  bench/results/store_scale.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import (
    REPO,
    configure_bench_logging,
    latency_summary,
    process_cpu_seconds,
    shared_data,
    write_result,
)
from shared.adapters.blobs.folder import FolderBlobs
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import make_embedder
from shared.adapters.mongo.outbox import MongoOutbox
from shared.adapters.mongo.queries import MongoQueryRepository
from shared.adapters.mongo.store import MongoRepository, connect
from shared.app.outbox import OutboxPublisher
from shared.model.documents import DocumentStatus, IndexedDocument
from shared.model.events import DocumentUploaded, QueryOutcome
from shared.model.ids import DEFAULT_TENANT
from shared.model.query import QuerySettings, VerifiedAnswer
from shared.model.query_records import QueryRecord
from treerag.engine import QueryEngine

logger = logging.getLogger("bench.store_scale")

TARGET_RATIO = 1.2
SMALL = 10
QUESTION = "What was the total net revenue reported for the fiscal year?"


class _NoBus:
    async def publish(self, event: Any) -> None:  # the bus is not what is measured here
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def ferretdb(url: str | None) -> Iterator[tuple[str, dict[str, Any], int | None]]:
    """A running FerretDB (its URL, description and process id when known): the given one, or
    one started by scripts/infra/ferretdb.sh."""
    if url:
        yield url, {"server": "given", "url": url}, None
        return
    state = Path(tempfile.mkdtemp(prefix="treerag-store-scale-"))
    port = _free_port()
    env = {**os.environ, "TREERAG_RUN": str(state), "TREERAG_MONGO_PORT": str(port), "PYTHON": sys.executable}
    script = str(REPO / "scripts" / "infra" / "ferretdb.sh")
    subprocess.run([script, "start"], env=env, check=True, capture_output=True, timeout=900)
    binary = subprocess.run([script, "path"], env=env, check=True, capture_output=True, text=True).stdout.strip()
    try:
        pid = int((state / f"ferretdb-{port}" / "ferretdb.pid").read_text().strip())
        yield f"mongodb://127.0.0.1:{port}/", {"server": "scripts/infra/ferretdb.sh (SQLite)",
                                              "binary": Path(binary).parent.name, "data_dir": str(state)}, pid
    finally:
        subprocess.run([script, "stop"], env=env, check=False, capture_output=True, timeout=120)
        shutil.rmtree(state, ignore_errors=True)


def indexed_store(sizes_from: Path | None) -> tuple[Path, bool]:
    """An embedded store holding real indexed PDFs (and whether it is temporary)."""
    if sizes_from:
        return sizes_from, False
    store = Path(tempfile.mkdtemp(prefix="treerag-store-scale-sizes-"))
    folder = shared_data() / "pdfs" / "financebench"
    subprocess.run([sys.executable, "-m", "treerag", "index", str(folder), "--store", str(store),
                    "--workers", str(min(os.cpu_count() or 1, 2)), "--no-progress"],
                   cwd=REPO, check=True, capture_output=True)
    return store, True


async def load_templates(store: Path) -> list[IndexedDocument]:
    repo = EmbeddedRepository(store)
    templates = []
    for record in await repo.list_documents():
        tree = await repo.get_tree(record.doc_id)
        if record.status != DocumentStatus.READY or tree is None:
            continue
        templates.append(IndexedDocument(record=record, pages=await repo.get_pages(record.doc_id), tree=tree,
                                         embeddings=await repo.get_embeddings(record.doc_id),
                                         analysis=await repo.get_analysis(record.doc_id)))
    if not templates:
        raise SystemExit(f"no indexed document in {store}")
    return templates


def template_sizes(templates: list[IndexedDocument]) -> dict[str, Any]:
    def median(values: list[int]) -> int:
        return int(statistics.median(values))

    return {
        "documents": len(templates),
        "median_pages": median([t.record.page_count for t in templates]),
        "median_page_text_bytes": median([len(json.dumps(t.pages).encode()) for t in templates]),
        "median_tree_bytes": median([len(t.tree.model_dump_json().encode()) for t in templates]),
        "median_vector_bytes": median([len(t.embeddings.page_vectors) + len(t.embeddings.node_vectors)
                                       if t.embeddings else 0 for t in templates]),
    }


def synthetic_id(n: int) -> str:
    return hashlib.sha256(f"synthetic-{n}".encode()).hexdigest()[:16]


def copy_of(template: IndexedDocument, doc_id: str) -> IndexedDocument:
    record = template.record.model_copy(update={"doc_id": doc_id, "file_name": f"{doc_id}.pdf"})
    tree = template.tree.model_copy(update={"doc_id": doc_id})
    embeddings = template.embeddings.model_copy(update={"doc_id": doc_id}) if template.embeddings else None
    return IndexedDocument(record=record, pages=template.pages, tree=tree, embeddings=embeddings,
                           analysis=template.analysis)


# What a document stores besides its record, by collection.
LARGE_ROWS = ("page_chunks", "trees", "embeddings", "embedding_parts", "analysis", "analysis_parts")
FILL_BATCH = 8


def _renamed(value: Any, old: str, new: str) -> Any:
    """`value` with every string that is `old` (or starts with `old:`) naming `new` instead."""
    if isinstance(value, str):
        if value == old or value.startswith(old + ":"):
            return new + value[len(old):]
        return value
    if isinstance(value, dict):
        return {k: _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return value


class Filler:
    """Stores synthetic documents. The first copy of each template goes through the
    repository as the indexer stores it; later copies insert those same rows in bulk under the
    new id (the store cannot tell them apart), and each record still goes through
    `put_document`, which gives it its listing position."""

    def __init__(self, repo: MongoRepository, templates: list[IndexedDocument]) -> None:
        self.repo = repo
        self.templates = templates
        self.rows: dict[int, tuple[str, dict[str, list[dict[str, Any]]]]] = {}

    async def _rows_of(self, doc_id: str) -> dict[str, list[dict[str, Any]]]:
        db = self.repo.db
        head = await db["page_chunks"].find_one({"_id": f"{doc_id}:0"})
        vectors = await db["embeddings"].find_one({"_id": doc_id})
        chunks = [head] + [await db["page_chunks"].find_one({"_id": f"{doc_id}:{k}"})
                           for k in range(1, int(head["chunks"]))] if head else []
        parts = [await db["embedding_parts"].find_one({"_id": f"{doc_id}:{k}"})
                 for k in range(int(vectors["parts"]))] if vectors else []
        analysis = await db["analysis"].find_one({"_id": doc_id})
        analysis_parts = [await db["analysis_parts"].find_one({"_id": f"{doc_id}:{k}"})
                          for k in range(int(analysis["parts"]))] if analysis else []
        tree = await db["trees"].find_one({"_id": doc_id})
        return {"page_chunks": chunks, "trees": [tree] if tree else [], "embeddings": [vectors] if vectors else [],
                "embedding_parts": [p for p in parts if p], "analysis": [analysis] if analysis else [],
                "analysis_parts": [p for p in analysis_parts if p]}

    async def fill(self, start: int, stop: int) -> float:
        """Documents start..stop-1; returns the seconds taken."""
        began = time.perf_counter()
        batch: list[int] = []
        for n in range(start, stop):
            t = n % len(self.templates)
            if t not in self.rows:
                doc_id = synthetic_id(n)
                await self.repo.put_indexed(copy_of(self.templates[t], doc_id))
                self.rows[t] = (doc_id, await self._rows_of(doc_id))
                continue
            batch.append(n)
            if len(batch) == FILL_BATCH:
                await self._clone(batch)
                batch = []
            if n % 500 == 0:
                logger.info("filled", extra={"fields": {"documents": n}})
        if batch:
            await self._clone(batch)
        return time.perf_counter() - began

    async def _clone(self, numbers: list[int]) -> None:
        copies = {name: [] for name in LARGE_ROWS}  # type: dict[str, list[dict[str, Any]]]
        records = []
        for n in numbers:
            t = n % len(self.templates)
            old, rows = self.rows[t]
            new = synthetic_id(n)
            for name in LARGE_ROWS:
                copies[name] += [_renamed(row, old, new) for row in rows[name]]
            template = self.templates[t].record
            records.append(template.model_copy(update={"doc_id": new, "file_name": f"{new}.pdf"}))
        for name, rows_ in copies.items():
            if rows_:
                await self.repo.db[name].insert_many(rows_, ordered=False)
        await asyncio.gather(*(self.repo.put_document(record) for record in records))


MEASURED = ("query_10_documents", "upload", "status_poll", "listing_page", "listing_page_of_50")
IN_TARGET = ("query_10_documents", "upload", "status_poll", "listing_page")


class ServerCpu:
    """CPU seconds of the store's process so far (0 when it is not known)."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid

    def __call__(self) -> float:
        return (process_cpu_seconds(self.pid) or 0.0) if self.pid else 0.0


async def compare(calls: dict[str, Calls], op: str, repeats: int, rounds: int, server: ServerCpu) -> dict[str, Any]:
    """`repeats` calls of `op` on each store, in `rounds` blocks alternating between the stores."""
    seconds: dict[str, list[list[float]]] = {size: [] for size in calls}
    server_s = {size: 0.0 for size in calls}
    client_s = {size: 0.0 for size in calls}
    block = max(1, repeats // rounds)
    for r in range(rounds):
        for size in (list(calls) if r % 2 == 0 else list(reversed(calls))):
            call = getattr(calls[size], op)
            seconds[size].append([])
            server_at, client_at = server(), time.process_time()
            for i in range(block):
                began = time.perf_counter()
                await call(i)
                seconds[size][-1].append(time.perf_counter() - began)
            server_s[size] += server() - server_at
            client_s[size] += time.process_time() - client_at
    out = {}
    for size in calls:
        every = [t for block_s in seconds[size] for t in block_s]
        out[size] = {**latency_summary(every),
                     "p50_ms_by_round": [latency_summary(block_s)["p50_ms"] for block_s in seconds[size]],
                     "server_cpu_ms_per_call": round(server_s[size] * 1000 / len(every), 3) if server.pid else None,
                     "client_cpu_ms_per_call": round(client_s[size] * 1000 / len(every), 3)}
    return out


async def measure(calls: dict[str, Calls], repeats: dict[str, int], rounds: int, server: ServerCpu) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {size: {} for size in calls}
    for size, c in calls.items():
        out[size]["engine_query_10_documents"] = await c.engine_query()
    for op, method in (("query_10_documents", "query"), ("upload", "upload"), ("status_poll", "poll"),
                       ("listing_page", "listing"), ("listing_page_of_50", "listing_50")):
        for size, figures in (await compare(calls, method, repeats[method], rounds, server)).items():
            out[size][op] = figures
    return out


class Calls:
    """The measured calls, against one database."""

    def __init__(self, repo: MongoRepository, queries: MongoQueryRepository, outbox: OutboxPublisher,
                 templates: list[IndexedDocument], pdf: bytes, embedder: Any) -> None:
        self.repo, self.queries, self.outbox = repo, queries, outbox
        self.templates, self.pdf, self.embedder = templates, pdf, embedder
        self.rng = random.Random(7)
        self.size = 0
        self.answer = VerifiedAnswer(question=QUESTION, answer="", abstained=True)

    def some_ids(self, count: int) -> list[str]:
        return [synthetic_id(n) for n in self.rng.sample(range(self.size), count)]

    async def query(self, _: int) -> None:
        """The store's part of a query over 10 documents: the gateway checks each, the query row
        is written, a navigator that has not read them yet reads their records, pages, trees
        and vectors, and the answer is written and read back. (Navigating and answering are
        computed on what was read: their cost does not depend on the store; `engine_query`
        times one whole query once at each size.)"""
        doc_ids = self.some_ids(SMALL)
        for doc_id in doc_ids:
            await self.repo.get_document(doc_id)
        record = QueryRecord(query_id=uuid.uuid4().hex, question=QUESTION, doc_ids=doc_ids, settings=QuerySettings())
        await self.queries.create(record)
        for doc_id in doc_ids:
            await asyncio.gather(self.repo.get_document(doc_id), self.repo.get_pages(doc_id),
                                 self.repo.get_tree(doc_id), self.repo.get_embeddings(doc_id))
        outcome = QueryOutcome(answer=self.answer, mode="dfs")
        await self.queries.mark_answered(record.query_id, outcome, [], record)
        await self.queries.get(record.query_id)

    async def engine_query(self) -> dict[str, float]:
        """One whole query over 10 documents through the query engine on the store, cold."""
        doc_ids = self.some_ids(SMALL)
        engine = QueryEngine(self.repo, embedder=self.embedder)
        began = time.perf_counter()
        result = await engine.ask(QUESTION, doc_ids, QuerySettings(), use_cache=False)
        total = time.perf_counter() - began
        self.answer = result.answer
        return {"total_ms": round(total * 1000, 1), "store_load_ms": result.timings.load_ms}

    async def upload(self, _: int) -> None:
        data = self.pdf + f"\n%{uuid.uuid4().hex}\n".encode()
        doc_id = hashlib.sha256(data).hexdigest()[:16]
        await self.repo.get_document(doc_id)
        await self.repo.put_pdf(doc_id, data)
        event = DocumentUploaded(doc_id=doc_id, file_name=f"{doc_id}.pdf", size_bytes=len(data),
                                 pdf_ref=f"gridfs:{doc_id}")
        await self.outbox.stage(event)
        indexed = copy_of(self.templates[self.rng.randrange(len(self.templates))], doc_id)
        await self.repo.put_document(indexed.record.model_copy(update={"status": DocumentStatus.UPLOADED}))
        await self.outbox.send(event)
        await self.repo.set_status(doc_id, DocumentStatus.INDEXING)
        await self.repo.put_indexed(indexed)

    async def poll(self, _: int) -> None:
        (doc_id,) = self.some_ids(1)
        if await self.repo.get_document(doc_id) is None:
            raise RuntimeError(f"document {doc_id} missing from the store")

    async def listing(self, _: int) -> None:
        """A page as large as the small store can fill, so both sizes return as many records."""
        page = await self.repo.list_page(DEFAULT_TENANT, SMALL)
        if len(page.records) != SMALL:
            raise RuntimeError(f"a listing page held {len(page.records)} records, not {SMALL}")

    async def listing_50(self, _: int) -> None:
        await self.repo.list_page(DEFAULT_TENANT, 50)


async def open_store(client: Any, name: str, blob_dir: Path) -> tuple[MongoRepository, MongoQueryRepository, MongoOutbox]:
    repo = MongoRepository(client, name, owns_client=False, blobs=FolderBlobs(blob_dir))
    queries = MongoQueryRepository(client, name)
    mongo_outbox = MongoOutbox(client[name])
    for store in (repo, queries, mongo_outbox):
        await store.ensure_indexes()
    return repo, queries, mongo_outbox


async def run(args: argparse.Namespace, url: str, templates: list[IndexedDocument], server_pid: int | None,
              blob_dir: Path) -> dict[str, Any]:
    client = connect(url)
    run_id = args.reuse or uuid.uuid4().hex[:8]
    sizes = {"small": SMALL, "large": args.documents}
    names = {size: f"store_scale_{size}_{run_id}" for size in sizes}
    pdf = (shared_data() / "pdfs" / "financebench").glob("*.pdf").__next__().read_bytes()
    embedder = make_embedder()
    server = ServerCpu(server_pid)
    # Calls of under a few ms are repeated more: their server CPU is read in 10 ms clock ticks.
    repeats = {"query": args.repeats, "upload": args.repeats, "poll": 20 * args.repeats,
               "listing": 5 * args.repeats, "listing_50": 5 * args.repeats}
    try:
        calls: dict[str, Calls] = {}
        fill_s = 0.0
        for size, count in sizes.items():
            repo, queries, mongo_outbox = await open_store(client, names[size], blob_dir / size)
            if not args.reuse:
                fill_s = await Filler(repo, templates).fill(0, count)
            calls[size] = Calls(repo, queries, OutboxPublisher(mongo_outbox, _NoBus()), templates, pdf, embedder)
            calls[size].size = count
        await measure(calls, {k: 2 for k in repeats}, 2, server)  # warm-up: connections, imports, caches
        measured = await measure(calls, repeats, args.rounds, server)
        stats = await client[names["large"]].command("dbStats")
    finally:
        if not (args.keep or args.reuse):
            for name in names.values():
                await client.drop_database(name)
        await client.close()
    small, large = measured["small"], measured["large"]
    ratios = {op: round(large[op]["p50_ms"] / small[op]["p50_ms"], 2) for op in MEASURED}
    round_ratios = {op: [round(lg / sm, 2) for lg, sm in zip(large[op]["p50_ms_by_round"],
                                                                small[op]["p50_ms_by_round"], strict=True)]
                    for op in MEASURED}

    def cpu(figures: dict[str, Any]) -> float | None:
        if figures["server_cpu_ms_per_call"] is None:
            return None
        return figures["server_cpu_ms_per_call"] + figures["client_cpu_ms_per_call"]

    cpu_ratios = {op: round(cpu(large[op]) / cpu(small[op]), 2) if cpu(small[op]) else None for op in MEASURED}
    return {
        "documents": sizes,
        "databases": names if (args.keep or args.reuse) else None,
        "fill_seconds": round(fill_s, 1) if not args.reuse else None,
        "store_bytes": stats.get("dataSize") or stats.get("storageSize"),
        "rounds": args.rounds,
        "latency_small": small,
        "latency_large": large,
        "ratio_p50_large_over_small": ratios,
        "ratio_p50_by_round": round_ratios,
        "ratio_cpu_per_call_large_over_small": cpu_ratios,
        "target_ratio": TARGET_RATIO,
        "within_target": {op: ratios[op] <= TARGET_RATIO for op in IN_TARGET},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="Alternations between the two stores per call.")
    parser.add_argument("--server-pid", type=int, default=None, help="The given server's process (its CPU).")
    parser.add_argument("--sizes-from", type=Path, default=None, help="An indexed store folder (treerag index).")
    parser.add_argument("--mongo-url", default=None, help="A running FerretDB/MongoDB (default: start FerretDB).")
    parser.add_argument("--label", default=None, help="Names the server in the result (with --mongo-url).")
    parser.add_argument("--out", default="store_scale", help="Result name under bench/results/.")
    parser.add_argument("--keep", action="store_true", help="Keep the filled databases (their run id is printed).")
    parser.add_argument("--reuse", default=None, help="Measure the kept databases of this run id again (no fill).")
    args = parser.parse_args()
    configure_bench_logging()
    sizes_store, temporary = indexed_store(args.sizes_from)
    try:
        templates = asyncio.run(load_templates(sizes_store))
    finally:
        if temporary:
            shutil.rmtree(sizes_store, ignore_errors=True)
    load = os.getloadavg()[0]
    blob_dir = Path(tempfile.mkdtemp(prefix="treerag-store-scale-blobs-"))
    try:
        with ferretdb(args.mongo_url) as (url, server, pid):
            if args.label:
                server["label"] = args.label
            result = asyncio.run(run(args, url, templates, pid or args.server_pid, blob_dir))
    finally:
        shutil.rmtree(blob_dir, ignore_errors=True)
    payload = {"server": server, "sizes": template_sizes(templates), "load_average_1m_at_start": round(load, 2),
               "load_average_1m_at_end": round(os.getloadavg()[0], 2), **result}
    write_result(args.out, payload)
    print(json.dumps({"databases": result["databases"], "ratios": result["ratio_p50_large_over_small"],
                      "by_round": result["ratio_p50_by_round"],
                      "cpu_ratios": result["ratio_cpu_per_call_large_over_small"], "small": result["latency_small"],
                      "large": result["latency_large"]}, indent=1))


if __name__ == "__main__":
    main()
