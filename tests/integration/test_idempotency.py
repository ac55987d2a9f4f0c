"""Redelivered events do no work twice; unusable ones end in the dead-letter topic."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from shared.adapters.mongo.store import MongoRepository
from shared.model.documents import DocumentRecord
from shared.model.events import (
    AnswerVerified,
    DeadLetter,
    DocumentUploaded,
    QueryReceived,
)
from shared.model.ids import content_id
from shared.model.query import QuerySettings
from tests.support.integration.kafka_tools import opened, publish, publish_event, read_topic, wait_for_key
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until
from tests.support.integration.uploads import upload_ready, wait_document

pytestmark = pytest.mark.integration


async def test_redelivered_upload_builds_one_tree_and_publishes_tree_built_once(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    data = manual_pdf(unit=401)
    doc_id = content_id(data)
    repo = MongoRepository.from_url(stack.mongo_url, stack.db_name)
    try:
        await repo.put_pdf(doc_id, data)
        await repo.put_document(DocumentRecord(doc_id=doc_id, file_name="unit-401.pdf"))
    finally:
        await repo.close()
    event = DocumentUploaded(doc_id=doc_id, file_name="unit-401.pdf", size_bytes=len(data),
                             pdf_ref=f"gridfs:{doc_id}", producer="test")
    await publish_event(stack.kafka_bootstrap, stack.prefix, event)
    await publish_event(stack.kafka_bootstrap, stack.prefix, event)  # the same event, delivered again

    assert wait_document(gateway, doc_id)["status"] == "ready"
    wait_until(lambda: indexer.has_logged("upload already handled; redelivery skipped"), 60,
               "the indexer to skip the redelivered upload")
    client = stack.mongo()
    try:
        assert client[stack.db_name]["trees"].count_documents({"doc_id": doc_id}) == 1
    finally:
        client.close()
    built = [r for r in await read_topic(stack.kafka_bootstrap, stack.topic("tree.built")) if r.key == doc_id.encode()]
    assert len(built) == 1


async def test_redelivered_query_gives_one_answer(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess], db: Any,
) -> None:
    document = upload_ready(gateway, manual_pdf(unit=402), "unit-402.pdf")
    query_id = uuid.uuid4().hex
    event = QueryReceived(query_id=query_id, question="At what pressure does the safety valve open?",
                          doc_ids=[document["doc_id"]], settings=QuerySettings(), producer="test")
    await publish_event(stack.kafka_bootstrap, stack.prefix, event)
    await publish_event(stack.kafka_bootstrap, stack.prefix, event)

    def answered() -> dict[str, Any] | None:
        response = gateway.get(f"/v1/queries/{query_id}", timeout=10)
        return response.json() if response.status_code == 200 and response.json()["status"] == "answered" else None

    body = wait_until(answered, 60, "the published query to be answered")
    assert "412 bar" in body["answer"]
    navigator = query_stages[0]
    wait_until(
        lambda: any(r.get("msg") == "query already navigated; redelivery skipped" and r.get("query_id") == query_id
                    for r in navigator.log_records()),
        60, "the navigator to skip the redelivered query",
    )
    answers = await wait_for_key(stack.kafka_bootstrap, stack.topic(AnswerVerified.TOPIC), query_id)
    assert len(answers) == 1
    assert (await opened(db, AnswerVerified, answers[0].value)).outcome.answer.answer == body["answer"]


async def test_unreadable_event_goes_to_the_dead_letter_topic(
    stack: Stack, query_stages: list[ServiceProcess]
) -> None:
    key = f"junk-{uuid.uuid4().hex[:8]}"
    await publish(stack.kafka_bootstrap, stack.topic("query.received"), b"{not json", key)
    letters = await wait_for_key(stack.kafka_bootstrap, stack.topic("query.received.dlq"), key)
    assert len(letters) == 1
    letter = DeadLetter.model_validate_json(letters[0].value)
    assert letter.payload == "{not json" and letter.stage == "navigator"
    assert letter.topic == stack.topic("query.received") and "QueryReceived" in letter.error
    assert all(p.alive for p in query_stages)


async def test_missing_pdf_is_dead_lettered_and_the_document_marked_failed(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    doc_id = uuid.uuid4().hex[:16]
    event = DocumentUploaded(doc_id=doc_id, file_name="lost.pdf", size_bytes=10, pdf_ref=f"gridfs:{doc_id}",
                             producer="test")
    await publish_event(stack.kafka_bootstrap, stack.prefix, event)
    document = wait_document(gateway, doc_id, statuses=("failed",), timeout_s=60)
    assert "TREERAG_BLOB_DIR" in document["reason"]
    letters = await wait_for_key(stack.kafka_bootstrap, stack.topic("document.uploaded.dlq"), doc_id)
    assert len(letters) == 1
    assert json.loads(letters[0].value)["error_type"] == "PermanentError"
    assert indexer.alive
