"""Deleting a document on the real FerretDB: from the moment it starts nothing serves the
document, and once finished no collection holds its text or its id, whatever else is stored;
a deletion stopped midway is finished by the next gateway to start."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import bson
import numpy as np
import pytest

from services.gateway.deletions import BackgroundDeletions
from services.navigator.index_cache import IndexCache, NoDocumentsError
from shared.adapters.cache import AnswerCache
from shared.adapters.memory.bus import InMemoryBus
from shared.adapters.mongo.queries import MongoQueryRepository
from shared.adapters.mongo.store import MongoRepository, connect
from shared.app.deletion import delete_document, finish_deletion
from shared.app.page_texts import PageTextCache
from shared.model.documents import DocumentEmbeddings, DocumentRecord, DocumentStatus, IndexedDocument
from shared.model.events import QueryOutcome
from shared.model.query import Citation, QuerySettings, VerifiedAnswer
from shared.model.query_records import QueryRecord
from shared.ports.repository import DocumentBeingDeleted
from tests.support.integration.pdfs import manual_pdf
from tests.support.query.documents import indexed, node

pytestmark = pytest.mark.integration

GONE, KEPT = "9f3c1a7e5b2d4c60", "0a1b2c3d4e5f6071"
SECRET = "Xq7-zulu"  # in the deleted document's pages and in every answer made from it
GONE_FACT = f"The quench tank holds borated water of grade {SECRET}."
KEPT_FACT = "The spare filter cartridges are stored in cabinet 88."
GONE_ANSWER = f"Grade {SECRET}."
TENANT = "default"


@pytest.fixture
async def stores(infra: Any) -> AsyncIterator[tuple[MongoRepository, MongoQueryRepository]]:
    client = connect(infra.mongo_url)
    name = f"deletion_{uuid.uuid4().hex[:8]}"
    repo = MongoRepository(client, name, owns_client=False)
    await repo.ensure_indexes()
    yield repo, MongoQueryRepository(client, name)
    await client.drop_database(name)
    await client.close()


def document(doc_id: str, file_name: str, fact: str) -> IndexedDocument:
    return indexed(doc_id, file_name, [f"Introduction to {file_name}.", fact, "Appendix."],
                   [node("n1", "Tank", 1, 3)])


def outcome(question: str, answer: str, cited: list[str]) -> QueryOutcome:
    citations = [Citation(doc_id=doc_id, pages=[2]) for doc_id in cited]
    return QueryOutcome(answer=VerifiedAnswer(question=question, answer=answer, citations=citations), mode="beam")


async def ask(queries: MongoQueryRepository, query_id: str, doc_ids: list[str], answer: str,
              cited: list[str]) -> None:
    """A query stored as the gateway and the verifier store it: the pending row, then its answer."""
    record = QueryRecord(query_id=query_id, question=f"question {query_id}", doc_ids=doc_ids,
                         settings=QuerySettings(), tenant=TENANT)
    assert await queries.create(record)
    assert await queries.mark_answered(query_id, outcome(record.question, answer, cited), [], record)


async def fill(repo: MongoRepository, queries: MongoQueryRepository) -> None:
    """Both documents with everything a service stores of them, and traffic over them."""
    for doc_id, name, fact in ((GONE, "tank.pdf", GONE_FACT), (KEPT, "filters.pdf", KEPT_FACT)):
        await repo.put_indexed(document(doc_id, name, fact))
        await repo.put_pdf(doc_id, manual_pdf(unit=700 + len(fact) % 50))
    await repo.put_embeddings(DocumentEmbeddings(doc_id=GONE, model="test-model", dimension=4, node_ids=["n1"],
                                                 page_vectors=np.eye(3, 4, dtype="<f2").tobytes(),
                                                 node_vectors=np.ones((1, 4), dtype="<f2").tobytes()))
    await repo.put_analysis(GONE, f"page analysis of {GONE}: {GONE_FACT}".encode())
    await repo.put_analysis(KEPT, f"page analysis of {KEPT}: {KEPT_FACT}".encode())
    cache = AnswerCache(repo)
    await cache.put("over-gone", outcome("q", GONE_ANSWER, [GONE]).model_dump(mode="json"), refs=[GONE])
    await cache.put("over-both", outcome("q", GONE_ANSWER, [GONE]).model_dump(mode="json"), refs=[GONE, KEPT])
    await cache.put("over-kept", outcome("q", KEPT_FACT, [KEPT]).model_dump(mode="json"), refs=[KEPT])
    await ask(queries, "asked-over-gone", [GONE], GONE_ANSWER, [GONE])
    await ask(queries, "asked-over-all", [], GONE_ANSWER, [GONE])  # names it only in a citation
    await ask(queries, "asked-over-kept", [KEPT], KEPT_FACT, [KEPT])
    pending = QueryRecord(query_id="failed-over-gone", question=f"what about {GONE_FACT}", doc_ids=[GONE],
                          settings=QuerySettings(), tenant=TENANT)
    assert await queries.create(pending)
    assert await queries.mark_failed("failed-over-gone", "navigator", "timed out", tenant=TENANT)
    for n in range(200):  # traffic over the other document, which the deletion must not read
        await ask(queries, f"other-{n}", [KEPT], KEPT_FACT, [KEPT])


async def holding(repo: MongoRepository, needle: str) -> dict[str, int]:
    """Rows of every collection of the database whose stored bytes contain `needle`."""
    names = await repo.db.list_collection_names()
    found: dict[str, int] = {name: 1 for name in names if needle in name}
    for name in names:
        rows = await repo.db[name].find({}).to_list(None)
        hits = sum(needle.encode() in bson.encode(row) for row in rows)
        if hits:
            found[name] = hits
    return found


async def test_a_finished_deletion_leaves_the_documents_text_and_id_in_no_collection(
    stores: tuple[MongoRepository, MongoQueryRepository],
) -> None:
    repo, queries = stores
    await fill(repo, queries)
    assert {"page_chunks", "query_results", "analysis_parts"} <= set(await holding(repo, SECRET))
    assert any(name.startswith("cache.") for name in await holding(repo, GONE_ANSWER))

    deletion = await delete_document(GONE, repo, queries, InMemoryBus())
    assert deletion is not None and deletion.record.file_name == "tank.pdf"
    assert deletion.queries_removed == 3  # asked over it, citing it, failed over it
    assert await finish_deletion(GONE, repo, queries) == 3

    assert await holding(repo, SECRET) == {}, "the document's text or an answer quoting it is still stored"
    assert await holding(repo, GONE) == {}, "a collection still names the deleted document"
    assert await queries.get("asked-over-all") is None and await queries.get("failed-over-gone") is None
    # The other document and everything made from it only are untouched.
    assert await repo.get_page(KEPT, 2) == KEPT_FACT and await repo.get_pdf(KEPT) is not None
    assert await repo.get_analysis(GONE) is None
    assert await repo.get_analysis(KEPT) == f"page analysis of {KEPT}: {KEPT_FACT}".encode()
    assert await repo.get_cached(AnswerCache.namespace, "over-kept") is not None
    assert (await queries.get("other-199")) is not None and (await queries.get("asked-over-kept")) is not None
    assert [r.doc_id for r in await repo.list_documents()] == [KEPT]
    # Asking again finds nothing to delete, and finishing again is harmless.
    assert await delete_document(GONE, repo, queries, InMemoryBus()) is None
    assert await finish_deletion(GONE, repo, queries) == 0


async def test_a_document_being_deleted_is_served_by_no_read_path(
    stores: tuple[MongoRepository, MongoQueryRepository],
) -> None:
    repo, queries = stores
    await fill(repo, queries)
    pages = PageTextCache(repo)
    assert await pages.texts(TENANT, GONE, 1, {2}) == {2: GONE_FACT}  # kept in memory from here on
    navigator = IndexCache(repo)
    assert {r.doc_id for r in await navigator.records(None, TENANT)} == {GONE, KEPT}

    bus = InMemoryBus()
    assert await delete_document(GONE, repo, queries, bus) is not None  # started, not finished
    assert await repo.being_deleted(GONE)

    assert await repo.get_document(GONE) is None
    assert GONE not in {r.doc_id for r in await repo.list_documents()}
    for key in (GONE, GONE[:6], "tank.pdf", "tank"):
        assert await repo.find_document(key) is None, key
    assert GONE not in {r.doc_id for r in (await repo.list_page(TENANT, 10)).records}
    assert GONE not in {r.doc_id for r in (await repo.list_page(TENANT, 10, status=DocumentStatus.READY)).records}
    # The stages: the navigator resolves only the other document, by name or over everything,
    # and the verifier gives no page of it, though it had the pages in memory.
    assert [r.doc_id for r in await navigator.records(None, TENANT)] == [KEPT]
    with pytest.raises(NoDocumentsError):
        await navigator.records([GONE], TENANT)
    assert await pages.texts(TENANT, GONE, 1, {2}) == {}
    # No write brings it back: not a status change, not a new record, not a second deletion.
    assert not await repo.set_status(GONE, DocumentStatus.READY)
    with pytest.raises(DocumentBeingDeleted):
        await repo.put_document(DocumentRecord(doc_id=GONE, file_name="tank.pdf", status=DocumentStatus.READY))
    assert await delete_document(GONE, repo, queries, bus) is None
    assert await repo.get_document(GONE) is None


async def test_a_deletion_stopped_midway_is_finished_by_the_next_gateway_and_late_rows_go_too(
    stores: tuple[MongoRepository, MongoQueryRepository], infra: Any,
) -> None:
    repo, queries = stores
    await fill(repo, queries)
    assert await delete_document(GONE, repo, queries, InMemoryBus()) is not None
    await queries.forget_document(GONE)  # the process stopped here: pages, file, cache, record remain
    assert "page_chunks" in await holding(repo, SECRET)

    # A query that was past the navigator when the deletion started stores its answer late.
    await ask(queries, "late", [GONE], GONE_ANSWER, [GONE])

    restarted = MongoRepository(connect(infra.mongo_url), repo.db.name)
    try:
        deletions = BackgroundDeletions(restarted, MongoQueryRepository(restarted.client, repo.db.name),
                                        late_writes_s=0)
        deletions.resume()
        await deletions.wait()
    finally:
        await restarted.close()

    assert await holding(repo, SECRET) == {}
    assert await holding(repo, GONE) == {}
    assert await repo.get_page(KEPT, 2) == KEPT_FACT

    # An answer stored after the deletion finished (a query with no deadline) is removed by the
    # next start, which finds the ledger without a record.
    await ask(queries, "later", [GONE], GONE_ANSWER, [GONE])
    assert "query_results" in await holding(repo, SECRET)
    deletions = BackgroundDeletions(repo, queries, late_writes_s=0)
    deletions.resume()
    await deletions.wait()
    assert await holding(repo, SECRET) == {} and await holding(repo, GONE) == {}
