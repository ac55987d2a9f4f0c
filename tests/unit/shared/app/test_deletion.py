"""Deleting a document over in-memory ports: the rule makes the document unreadable and publishes
`document.deleted` at once, then empties the store; the query stages then hold nothing of the
document in memory."""

from __future__ import annotations

from shared.app.deletion import delete_document, finish_deletion
from shared.app.outbox import OutboxPublisher
from shared.model.events import DocumentDeleted, DocumentUploaded, QueryFailed
from tests.support.fakes import FakeOutbox, RecordingPublisher
from tests.support.query.documents import kitchen_guide, plant_manual
from tests.support.stages import TENANT, QueryStages, delivery, question
from tests.unit.services.test_query_handlers import PUMP, ask


def reupload(doc_id: str) -> DocumentUploaded:
    return DocumentUploaded(doc_id=doc_id, file_name="plant.pdf", size_bytes=1, pdf_ref=f"gridfs:{doc_id}")


async def test_deleted_document_leaves_nothing_in_the_store_or_the_stages_memory() -> None:
    plant, kitchen = plant_manual(tenant=TENANT), kitchen_guide(tenant=TENANT)
    gone, kept = plant.record.doc_id, kitchen.record.doc_id
    stages = QueryStages()
    for document in (plant, kitchen):
        await stages.repository.put_indexed(document.model_copy(update={"analysis": b"\x00analysis"}))
    assert set(stages.repository.analysis) == {gone, kept}
    answered = await ask(stages, question(PUMP, doc_ids=[gone]))
    key = answered.answer_key
    assert key is not None  # the navigator's key travels with the query
    assert gone in stages.indexes and gone in stages.verifier.pages
    assert await stages.navigator.cache.get(key) is not None  # type: ignore[union-attr]

    outbox = FakeOutbox()
    await OutboxPublisher(outbox, stages.bus).stage(reupload(gone))  # an upload still owed to Kafka
    deletion = await delete_document(gone, stages.repository, stages.queries, stages.bus, outbox)
    assert deletion is not None and deletion.queries_removed == 1  # the stored answer
    assert await outbox.pending() == 0  # the owed upload will not bring the document back
    assert await stages.repository.get_document(gone) is None  # unreadable before anything is removed
    assert await finish_deletion(gone, stages.repository, stages.queries) == 1

    [event] = stages.bus.of_type(DocumentDeleted)
    assert event.doc_id == gone
    await stages.navigator.on_document_deleted(event, delivery("navigator", event.TOPIC))
    await stages.verifier.on_document_deleted(event, delivery("verifier", event.TOPIC))

    assert gone not in stages.indexes and gone not in stages.verifier.pages
    assert await stages.navigator.cache.get(key) is None  # type: ignore[union-attr]
    assert await stages.queries.get(answered.query_id) is None
    repository = stages.repository
    assert gone not in repository.documents and gone not in repository.pages and gone not in repository.trees
    assert gone not in repository.analysis and await repository.get_analysis(gone) is None
    assert repository.analysis[kept] == b"\x00analysis"
    assert kept in repository.documents and repository.pages[kept]
    assert await delete_document(gone, stages.repository, stages.queries, stages.bus, outbox) is None


async def test_a_document_whose_deletion_started_is_neither_asked_over_nor_quoted_from_memory() -> None:
    plant, kitchen = plant_manual(tenant=TENANT), kitchen_guide(tenant=TENANT)
    gone = plant.record.doc_id
    stages = QueryStages()
    for document in (plant, kitchen):
        await stages.repository.put_indexed(document)
    answered = await ask(stages, question(PUMP, doc_ids=[gone]))
    assert any(c.doc_id == gone for c in answered.outcome.answer.citations)
    assert gone in stages.verifier.pages  # its pages are kept in memory

    # Started, not finished, and no `document.deleted` delivered yet: only the record changed.
    assert await delete_document(gone, stages.repository, stages.queries, RecordingPublisher()) is not None

    named = question(PUMP, query_id="q-named", doc_ids=[gone])
    await stages.navigator.on_query_received(named, delivery("navigator", named.TOPIC))
    [failed] = stages.bus.of_type(QueryFailed)
    assert failed.query_id == "q-named" and gone in failed.reason  # not its cached answer either
    over_all = await ask(stages, question(PUMP, query_id="q-all"))
    assert all(c.doc_id != gone for c in over_all.outcome.answer.citations)
    assert "500 operating hours" not in over_all.outcome.answer.answer
    assert await stages.verifier.pages.texts(TENANT, gone, plant.record.version, {2}) == {}
