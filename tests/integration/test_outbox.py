"""No upload is lost to a Kafka outage: accepted with 202 at once, indexed once Kafka is back,
with nothing for the client to do."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest

from shared.adapters.mongo.store import MongoRepository
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.ids import content_id
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until
from tests.support.integration.uploads import upload, wait_document

pytestmark = pytest.mark.integration

KAFKA_SCRIPT = "scripts/infra/kafka.sh"


def kafka(infra: Any, action: str) -> None:
    result = subprocess.run([KAFKA_SCRIPT, action], env=infra.env, capture_output=True, text=True, timeout=300,
                            cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert result.returncode == 0, f"kafka.sh {action} failed: {result.stderr[-2000:]}"


def test_upload_during_a_kafka_outage_is_indexed_once_kafka_is_back(
    infra: Any, stack: Stack, gateway: Gateway, indexer: ServiceProcess, db: Any
) -> None:
    data = manual_pdf(unit=711)
    kafka(infra, "stop")
    try:
        started = time.monotonic()
        accepted = upload(gateway, data, "unit-711.pdf")
        took = time.monotonic() - started
        assert accepted.status_code == 202, accepted.text
        assert took < 10, f"the upload waited {took:.1f}s for a dead broker"
        body = accepted.json()
        assert body["status"] == "uploaded" and body["published"] is False
        doc_id = body["doc_id"]
        # Uploaded again while Kafka is still down: accepted at once too, still owed.
        again = upload(gateway, data, "unit-711.pdf")
        assert again.status_code == 202 and again.json()["published"] is False
        assert db["outbox"].count_documents({"key": doc_id}) >= 1
    finally:
        kafka(infra, "start")

    # No client action from here on.
    document = wait_document(gateway, doc_id, timeout_s=240)
    assert document["status"] == "ready", document
    assert db["trees"].count_documents({"doc_id": doc_id}) == 1
    wait_until(lambda: db["outbox"].count_documents({"key": doc_id}) == 0, 60, "the outbox to be emptied")


async def test_reupload_of_a_document_stuck_in_uploaded_publishes_it_again(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    # A record left `uploaded` with its event never published (as before the outbox existed).
    data = manual_pdf(unit=712)
    doc_id = content_id(data)
    repo = MongoRepository.from_url(stack.mongo_url, stack.db_name)
    try:
        await repo.put_pdf(doc_id, data)
        await repo.put_document(DocumentRecord(doc_id=doc_id, file_name="unit-712.pdf",
                                               status=DocumentStatus.UPLOADED))
    finally:
        await repo.close()

    again = upload(gateway, data, "unit-712.pdf")
    assert again.status_code == 202 and again.json()["published"] is True, again.text
    assert wait_document(gateway, doc_id)["status"] == "ready"
