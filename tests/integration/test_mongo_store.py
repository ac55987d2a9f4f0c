"""The MongoDB repositories on the real FerretDB: pages in chunks, trees, query results (PDF bytes:
test_blob_stores.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from shared.adapters.mongo import store as mongo_store
from shared.adapters.mongo.api_keys import MongoKeyStore
from shared.adapters.mongo.queries import MongoQueryRepository, QueryRecord, QueryStatus
from shared.adapters.mongo.store import MongoRepository, connect
from shared.app.api_keys import authenticate, issue_key
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import QueryOutcome
from shared.model.query import QuerySettings, VerifiedAnswer

pytestmark = pytest.mark.integration


@pytest.fixture
async def client(infra: Any) -> AsyncIterator[Any]:
    client = connect(infra.mongo_url)
    name = f"store_{uuid.uuid4().hex[:8]}"
    yield client, name
    await client.drop_database(name)
    await client.close()


@pytest.fixture
async def repo(client: Any) -> AsyncIterator[MongoRepository]:
    mongo, name = client
    repo = MongoRepository(mongo, name, owns_client=False)
    await repo.ensure_indexes()
    yield repo


async def test_pages_span_several_chunks_and_read_back_by_number(repo: MongoRepository,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mongo_store, "PAGES_PER_CHUNK", 3)
    pages = [f"text of page {n}" for n in range(1, 9)]
    await repo.put_pages("doc1", pages)

    assert await repo.get_pages("doc1") == pages
    assert await repo.page_chunks.count_documents({"doc_id": "doc1"}) == 3
    assert [await repo.get_page("doc1", n) for n in (1, 3, 4, 8)] == [pages[0], pages[2], pages[3], pages[7]]
    assert await repo.get_page("doc1", 0) is None and await repo.get_page("doc1", 9) is None
    assert await repo.get_page_texts("doc1", [8, 2, 42]) == {8: pages[7], 2: pages[1]}
    assert await repo.get_pages("unknown") == [] and await repo.get_page("unknown", 1) is None


async def test_a_shorter_rebuild_drops_the_old_pages(repo: MongoRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mongo_store, "PAGES_PER_CHUNK", 2)
    await repo.put_pages("doc2", [f"old {n}" for n in range(7)])
    await repo.put_pages("doc2", ["new 1", "new 2", "new 3"])
    assert await repo.get_pages("doc2") == ["new 1", "new 2", "new 3"]
    assert await repo.get_page("doc2", 4) is None
    assert await repo.page_chunks.count_documents({"doc_id": "doc2"}) == 2


def test_chunks_respect_the_byte_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mongo_store, "CHUNK_BYTES", 10)
    assert mongo_store.page_chunks(["aaaa", "bbbb", "cccc", "dd"]) == [["aaaa", "bbbb"], ["cccc", "dd"]]
    assert mongo_store.page_chunks(["a" * 50, "b"]) == [["a" * 50], ["b"]]
    assert mongo_store.page_chunks([]) == []


def outcome(text: str) -> QueryOutcome:
    return QueryOutcome(answer=VerifiedAnswer(question="why?", answer=text), mode="dfs")


async def test_a_query_is_answered_once_and_an_answer_replaces_a_failure(client: Any) -> None:
    mongo, name = client
    queries = MongoQueryRepository(mongo, name)
    await queries.ensure_indexes()
    seed = QueryRecord(query_id="q1", question="why?")
    assert await queries.create(seed)
    assert (await queries.get("q1")).status == QueryStatus.PENDING  # type: ignore[union-attr]

    assert await queries.mark_answered("q1", outcome("first"), [], seed)
    assert not await queries.mark_answered("q1", outcome("second"), [], seed)
    assert not await queries.mark_failed("q1", "verifier", "boom")
    stored = await queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.ANSWERED
    assert stored.outcome is not None and stored.outcome.answer.answer == "first" and stored.question == "why?"

    other = QueryRecord(query_id="q2", question="how?")  # never created by a gateway
    assert await queries.mark_failed("q2", "navigator", "no documents")
    assert (await queries.get("q2")).status == QueryStatus.FAILED  # type: ignore[union-attr]
    assert await queries.mark_answered("q2", outcome("late"), [], other)
    late = await queries.get("q2")
    assert late is not None and late.status == QueryStatus.ANSWERED and late.reason is None


async def test_a_failure_is_stored_by_ids_and_read_with_the_question_asked(client: Any) -> None:
    mongo, name = client
    queries = MongoQueryRepository(mongo, name)
    await queries.ensure_indexes()
    pending = QueryRecord(query_id="q3", question="How big?", doc_ids=["d1"], settings=QuerySettings(beam_width=7))
    assert await queries.create(pending)
    assert await queries.mark_failed("q3", "verifier", "x" * 100_000, tenant="acme")
    row = await mongo[name]["query_results"].find_one({"_id": "q3"})
    assert set(row) == {"_id", "query_id", "tenant", "status", "reason", "failed_stage", "created_at", "finished_at"}
    assert len(row["reason"]) <= 1000
    stored = await queries.get("q3")
    assert stored is not None and stored.status == QueryStatus.FAILED and stored.failed_stage == "verifier"
    assert (stored.question, stored.doc_ids, stored.settings.beam_width) == ("How big?", ["d1"], 7)
    assert not await queries.mark_failed("q3", "compressor", "again")  # failed once


async def test_cached_values_round_trip_across_buckets_and_are_purged(repo: MongoRepository) -> None:
    keys = [f"question {n}" for n in range(40)]
    for n, key in enumerate(keys):
        await repo.put_cached("answers", key, {"n": n})
    await repo.put_cached("answers", keys[0], {"n": "replaced"})
    assert [await repo.get_cached("answers", k) for k in keys[:3]] == [{"n": "replaced"}, {"n": 1}, {"n": 2}]
    assert await repo.get_cached("answers", "never stored") is None
    assert await repo.get_cached("other", keys[1]) is None  # namespaces do not mix
    used = [name for name in await repo.db.list_collection_names() if name.startswith("cache.")]
    assert len(used) > 4  # spread out, so no single collection holds (and scans) every row
    assert await repo.purge_cache(timedelta(0)) == 40
    assert await repo.get_cached("answers", keys[1]) is None


async def test_a_listing_sees_writes_from_another_process_at_once_and_is_reused_otherwise(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    mongo, name = client
    writer = MongoRepository(mongo, name, owns_client=False)
    reader = MongoRepository(mongo, name, owns_client=False)
    await writer.put_document(DocumentRecord(doc_id="a" * 16, file_name="a.pdf", status=DocumentStatus.READY))
    assert [r.doc_id for r in await reader.list_documents()] == ["a" * 16]

    await writer.put_document(DocumentRecord(doc_id="b" * 16, file_name="b.pdf"))
    await writer.set_status("b" * 16, DocumentStatus.READY)
    listed = {r.doc_id: r.status for r in await reader.list_documents()}
    assert listed == {"a" * 16: DocumentStatus.READY, "b" * 16: DocumentStatus.READY}

    scans = 0
    find = reader.documents.find

    def counting_find(*args: Any, **kwargs: Any) -> Any:
        nonlocal scans
        scans += 1
        return find(*args, **kwargs)

    monkeypatch.setattr(reader.documents, "find", counting_find)
    for _ in range(3):
        assert len(await reader.list_documents()) == 2
    assert scans == 0  # nothing changed: the collection is not read again
    await writer.set_status("a" * 16, DocumentStatus.FAILED, "bad pdf")
    assert {r.doc_id: r.status for r in await reader.list_documents()}["a" * 16] == DocumentStatus.FAILED
    assert scans == 1


async def test_the_listing_pages_newest_first_filters_by_status_and_survives_deletion(repo: MongoRepository) -> None:
    for n in range(7):
        status = DocumentStatus.FAILED if n in (1, 4) else DocumentStatus.READY
        await repo.put_document(DocumentRecord(doc_id=f"doc{n}", file_name=f"f{n}.pdf", status=status))
    await repo.put_document(DocumentRecord(doc_id="doc2", file_name="f2.pdf", status=DocumentStatus.READY))  # no move

    first = await repo.list_page("default", 3)
    assert [r.doc_id for r in first.records] == ["doc6", "doc5", "doc4"]
    second = await repo.list_page("default", 3, first.next_position)
    assert [r.doc_id for r in second.records] == ["doc3", "doc2", "doc1"]
    last = await repo.list_page("default", 3, second.next_position)
    assert [r.doc_id for r in last.records] == ["doc0"] and last.next_position is None

    failed = await repo.list_page("default", 10, status=DocumentStatus.FAILED)
    assert [r.doc_id for r in failed.records] == ["doc4", "doc1"] and failed.next_position is None

    await repo.delete_document("doc5")
    assert [r.doc_id for r in (await repo.list_page("default", 3)).records] == ["doc6", "doc4", "doc3"]


async def test_each_tenant_lists_its_own_documents(repo: MongoRepository) -> None:
    await repo.put_document(DocumentRecord(doc_id="a1", file_name="a.pdf", tenant="acme"))
    await repo.put_document(DocumentRecord(doc_id="b1", file_name="b.pdf", tenant="beta"))
    await repo.put_document(DocumentRecord(doc_id="a2", file_name="a2.pdf", tenant="acme"))
    assert [r.doc_id for r in (await repo.list_page("acme", 10)).records] == ["a2", "a1"]
    assert [r.doc_id for r in (await repo.list_page("beta", 10)).records] == ["b1"]


async def test_documents_stored_before_listing_positions_are_listed_after_a_restart(repo: MongoRepository) -> None:
    await repo.put_document(DocumentRecord(doc_id="new", file_name="new.pdf"))
    older = DocumentRecord(doc_id="old", file_name="old.pdf").model_dump(mode="json")
    await repo.documents.insert_one({**older, "_id": "old"})  # as an earlier version stored it

    await repo.ensure_indexes()
    assert {r.doc_id for r in (await repo.list_page("default", 10)).records} == {"new", "old"}


async def test_the_status_poll_and_the_listing_read_through_indexes(repo: MongoRepository) -> None:
    """A status poll reads `documents` by id; a listing page reads the tenant's counter, the order
    rows and the records by id: each read searches an index, so its cost does not grow with what
    the store holds."""
    await repo.put_document(DocumentRecord(doc_id="indexed", file_name="a.pdf"))
    assert [r.doc_id for r in (await repo.list_page("default", 10)).records] == ["indexed"]
    reads = {"documents": "indexed", "counters": "order:default", "document_order": "default:000000000001"}
    for collection, key in reads.items():
        assert await repo.db[collection].find_one({"_id": key}) is not None
        plan = await repo.db.command("explain", {"find": collection, "filter": {"_id": key}})
        assert "USING INDEX" in str(plan.get("queryPlanner")) or "IXSCAN" in str(plan.get("queryPlanner")), collection


async def test_api_keys_are_stored_hashed_looked_up_listed_and_revoked(client: Any) -> None:
    mongo, name = client
    keys = MongoKeyStore(mongo, name)
    first = await issue_key(keys, "acme", admin=True)
    second = await issue_key(keys, "globex")

    assert await authenticate(keys, first.key) == first.record
    with pytest.raises(ValueError, match="taken"):
        await keys.add(first.record)  # an id is never reused
    assert [r.key_id for r in await keys.list()] == [first.record.key_id, second.record.key_id]
    rows = await mongo[name]["api_keys"].find({}).to_list(None)
    assert all(first.key.split("_", 2)[2] not in str(row) for row in rows)  # the secret is not stored

    assert await keys.revoke(first.record.key_id) and await keys.revoke(first.record.key_id)
    assert not await keys.revoke("0" * 12)
    assert await authenticate(keys, first.key) is None
    assert await authenticate(keys, second.key) == second.record
    assert [r.revoked for r in await keys.list()] == [True, False]
