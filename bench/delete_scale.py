"""Deleting a document from a store that holds 100,000 stored queries.

The store is FerretDB as `make up` and the tests run it (started here on a free port in a
temporary folder, or `--mongo-url` for a running server). It is filled with `--documents`
synthetic documents (record, pages, tree, the PDF in GridFS), `--queries` stored queries each
asked over one document (the pending row and its answer, citing it), and `--cache-rows` cached
answers, with the ledgers the repositories write beside them (shared/adapters/mongo/ownership.py).
Rows are inserted in bulk in the shape the repositories give them. Two documents are deleted,
again and again (restored between rounds): a *light* one named by 1% of the queries and a
*heavy* one named by half of them. Timed:

- `delete_call`: what `DELETE /v1/documents/{id}` does before it answers: the record read, the
  deletion started (`shared.app.deletion.delete_document`: the record marked `deleting`, the
  owed events dropped, the queries counted, `document.deleted` staged in the outbox);
- `finish`: the removal that follows in the background (`finish_deletion`), after which the
  document's rows are checked gone by `_id`;
- `scan_by_filter`: one count of the queries naming the document by a filter, as the deletion
  did before the ledgers (FerretDB reads the whole collection for it).

    python -m bench.delete_scale [--queries 100000] [--documents 50] [--rounds 5] [--mongo-url URL]
        ->  bench/results/delete_scale.json
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
import uuid
from typing import Any

from bench.common import configure_bench_logging, latency_summary, write_result
from bench.store_scale import _NoBus, ferretdb
from shared.adapters.mongo.outbox import MongoOutbox
from shared.adapters.mongo.ownership import Owned, ledger_name
from shared.adapters.mongo.queries import MongoQueryRepository
from shared.adapters.mongo.store import MongoRepository, connect
from shared.app.deletion import delete_document, finish_deletion
from shared.app.outbox import OutboxPublisher
from shared.model.clock import utc_now
from shared.model.documents import DocumentRecord, DocumentStatus, DocumentTree
from shared.model.events import QueryOutcome
from shared.model.query import Citation, QuerySettings, VerifiedAnswer
from shared.model.query_records import QueryRecord, QueryStatus
from shared.model.tree import TreeNode

logger = logging.getLogger("bench.delete_scale")

BATCH = 1000
PAGES = 20
PDF_BYTES = 256 * 1024


def doc_id_of(n: int) -> str:
    return f"{n:016x}"


def query_rows(query_id: str, doc_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pending row and the answer row, as `MongoQueryRepository` stores them."""
    asked = QueryRecord(query_id=query_id, question=f"What does section {query_id[:6]} say?", doc_ids=[doc_id],
                        settings=QuerySettings(), tenant="default")
    pending = asked.model_dump(mode="json") | {"_id": query_id, "created_at": asked.created_at}
    answer = VerifiedAnswer(question=asked.question, answer="The section says what page 3 says, at length.",
                            citations=[Citation(doc_id=doc_id, pages=[3])])
    answered = asked.model_copy(update={"status": QueryStatus.ANSWERED, "finished_at": utc_now(),
                                        "outcome": QueryOutcome(answer=answer, mode="beam")})
    result = answered.model_dump(mode="json") | {"_id": query_id, "created_at": answered.created_at}
    return pending, result


class Filler:
    def __init__(self, repo: MongoRepository, queries: MongoQueryRepository) -> None:
        self.repo = repo
        self.queries = queries

    async def document(self, doc_id: str) -> None:
        pages = [f"Page {n} of document {doc_id}. " + "Operating text. " * 100 for n in range(1, PAGES + 1)]
        nodes = [TreeNode(id=f"n{k}", title=f"Section {k}", page_start=k, page_end=k, level=1) for k in range(1, PAGES + 1)]
        await self.repo.put_pages(doc_id, pages)
        await self.repo.put_tree(DocumentTree(doc_id=doc_id, nodes=nodes))
        await self.repo.put_pdf(doc_id, b"%PDF-1.4\n" + uuid.uuid4().bytes * (PDF_BYTES // 16))
        await self.repo.put_document(DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf", page_count=PAGES,
                                                    status=DocumentStatus.READY))

    async def queries_over(self, doc_id: str, count: int) -> list[str]:
        ids = [uuid.uuid4().hex for _ in range(count)]
        for start in range(0, count, BATCH):
            batch = ids[start : start + BATCH]
            rows = [query_rows(query_id, doc_id) for query_id in batch]
            await self.queries.queries.insert_many([pending for pending, _ in rows])
            await self.queries.results.insert_many([result for _, result in rows])
            await self.repo.db[ledger_name(doc_id, Owned.QUERIES)].insert_many([{"_id": q} for q in batch])
        return ids

    async def cached_over(self, doc_id: str, count: int) -> None:
        for start in range(0, count, BATCH):
            for n in range(start, min(start + BATCH, count)):
                await self.repo.put_cached("answers", f"{doc_id}:{n}", {"answer": "cached"}, refs=[doc_id])


async def gone(repo: MongoRepository, queries: MongoQueryRepository, doc_id: str, sample: list[str]) -> bool:
    """Checked by `_id`: the record, the first page chunk, the tree, a sample of its queries, the ledgers."""
    rows = [await repo.documents.find_one({"_id": doc_id}), await repo.page_chunks.find_one({"_id": f"{doc_id}:0"}),
            await repo.trees.find_one({"_id": doc_id}), await repo.get_pdf(doc_id)]
    rows += [await queries.results.find_one({"_id": q}) for q in sample]
    names = set(await repo.db.list_collection_names())
    return all(row is None for row in rows) and not any(doc_id in name for name in names)


async def run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    client = connect(url)
    name = f"delete_scale_{uuid.uuid4().hex[:8]}"
    repo = MongoRepository(client, name, owns_client=False)
    queries = MongoQueryRepository(client, name)
    outbox = MongoOutbox(client[name])
    for store in (repo, queries, outbox):
        await store.ensure_indexes()
    publisher = OutboxPublisher(outbox, _NoBus(), send_timeout_s=2.0)
    fill = Filler(repo, queries)
    light, heavy = doc_id_of(0), doc_id_of(1)
    shares = {light: args.queries // 100, heavy: args.queries // 2}
    others = [doc_id_of(n) for n in range(2, args.documents)]
    started = time.perf_counter()
    for doc_id in [light, heavy, *others]:
        await fill.document(doc_id)
    rest = args.queries - sum(shares.values())
    for k, doc_id in enumerate(others):
        await fill.queries_over(doc_id, rest // len(others) + (1 if k < rest % len(others) else 0))
    per_doc_cache = args.cache_rows // args.documents
    for doc_id in [light, heavy, *others]:
        await fill.cached_over(doc_id, per_doc_cache)
    logger.info("filled", extra={"fields": {"seconds": round(time.perf_counter() - started, 1)}})

    owned = {doc_id: await fill.queries_over(doc_id, count) for doc_id, count in shares.items()}
    figures: dict[str, Any] = {}
    for label, doc_id in (("light", light), ("heavy", heavy)):
        calls: list[float] = []
        finishes: list[float] = []
        scans: list[float] = []
        rounds = args.rounds if label == "light" else max(1, args.rounds // 2)
        for _ in range(rounds):
            stored = await queries.queries.estimated_document_count()
            t0 = time.perf_counter()
            await queries.queries.count_documents({"doc_ids": doc_id})
            scans.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            record = await repo.get_document(doc_id)  # the route's `find`
            deletion = await delete_document(doc_id, repo, queries, publisher, outbox)
            calls.append(time.perf_counter() - t0)
            assert record is not None and deletion is not None and deletion.queries_removed == len(owned[doc_id])
            assert await repo.get_document(doc_id) is None
            t0 = time.perf_counter()
            removed = await finish_deletion(doc_id, repo, queries)
            finishes.append(time.perf_counter() - t0)
            assert removed == len(owned[doc_id]), (removed, len(owned[doc_id]))
            assert await gone(repo, queries, doc_id, owned[doc_id][:: max(1, len(owned[doc_id]) // 50)])
            # Restored for the next round: the store holds as much at every deletion.
            await fill.document(doc_id)
            await fill.cached_over(doc_id, per_doc_cache)
            owned[doc_id] = await fill.queries_over(doc_id, shares[doc_id])
        figures[label] = {"stored_queries": stored, "queries_owned": shares[doc_id], "delete_call": latency_summary(calls),
                          "finish": latency_summary(finishes), "scan_by_filter": latency_summary(scans)}
        logger.info("measured", extra={"fields": {"document": label, **figures[label]["delete_call"]}})
    await client.drop_database(name)
    await client.close()
    return {"documents": args.documents, "cache_rows": args.cache_rows, **figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--documents", type=int, default=50)
    parser.add_argument("--cache-rows", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mongo-url", help="a running FerretDB/MongoDB (default: start one)")
    args = parser.parse_args()
    configure_bench_logging()
    with ferretdb(args.mongo_url) as (url, server, _pid):
        result = asyncio.run(run(args, url))
    write_result("delete_scale", {"server": server, "args": vars(args), **result})


if __name__ == "__main__":
    main()
