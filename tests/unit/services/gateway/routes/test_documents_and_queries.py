"""What a client of the HTTP API does, end to end through the gateway's routes and application
rules, with the stages and the stores replaced by fakes of the gateway's ports: upload, list,
ask (answered, failed, timed out, refused, asynchronous) and delete."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import (
    AnswerVerified,
    DocumentDeleted,
    DocumentUploaded,
    IndexRequest,
    QueryFailed,
    QueryOutcome,
    QueryReceived,
)
from shared.model.query import Citation, VerifiedAnswer
from shared.model.query_records import QueryRecord, QueryStatus
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway
from tests.support.polling import until

MARKDOWN = b"# Pumps\n\nThe relief valve opens at 12 bar.\n"


def ready(gateway: FakeGateway, doc_id: str, tenant: str = "default", pages: int = 2) -> DocumentRecord:
    record = DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf", status=DocumentStatus.READY, tenant=tenant,
                            page_count=pages)
    gateway.store.documents[doc_id] = record
    gateway.store.pages[doc_id] = [f"page {n} of {doc_id}" for n in range(1, pages + 1)]
    gateway.store.pdfs[doc_id] = b"%PDF-1.7\n"
    return record


def verified(event: QueryReceived) -> AnswerVerified:
    doc_id = event.doc_ids[0] if event.doc_ids else "manual"
    answer = VerifiedAnswer(question=event.question, answer="The relief valve opens at 12 bar.", confidence=0.8,
                            citations=[Citation(doc_id=doc_id, file_name=f"{doc_id}.pdf", pages=[2])])
    return AnswerVerified(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                          settings=event.settings, tenant=event.tenant, outcome=QueryOutcome(answer=answer, mode="dfs"))




@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


def test_an_upload_is_stored_and_its_indexing_requested(client: TestClient, gateway: FakeGateway) -> None:
    response = client.post("/v1/documents", files={"file": ("pumps.md", MARKDOWN, "text/markdown")})
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "uploaded" and body["file_name"] == "pumps.md" and body["published"] is True
    [event] = gateway.bus.of_type(DocumentUploaded)
    assert event.doc_id == body["doc_id"] and event.format == "markdown" and event.pdf_ref == f"memory:{body['doc_id']}"
    assert gateway.store.pdfs[body["doc_id"]] == MARKDOWN
    assert gateway.store.documents[body["doc_id"]].status == DocumentStatus.UPLOADED
    assert client.get(f"/v1/documents/{body['doc_id']}").json()["status"] == "uploaded"


def test_the_builder_asked_for_travels_typed_and_a_bad_one_is_refused_before_anything_is_stored(
        client: TestClient, gateway: FakeGateway) -> None:
    refused = client.post("/v1/documents", files={"file": ("pumps.md", MARKDOWN, "text/markdown")},
                          data={"builder": "outlines"})
    assert refused.status_code == 422 and "builder" in refused.text
    assert gateway.bus.of_type(DocumentUploaded) == [] and not gateway.store.pdfs
    asked = client.post("/v1/documents", files={"file": ("pumps.md", MARKDOWN, "text/markdown")},
                        data={"builder": "layout"})
    assert asked.status_code == 202, asked.text
    [event] = gateway.bus.of_type(DocumentUploaded)
    assert event.index_options == IndexRequest(builder="layout")
    # On the wire the request is a closed model: a field the indexer does not take is refused
    # when the message is read, not passed on to fail later.
    wire = json.loads(event.model_dump_json())
    wire["index_options"]["max_pagez"] = 3
    with pytest.raises(ValidationError, match="max_pagez"):
        DocumentUploaded.model_validate(wire)


def test_the_same_ready_file_again_is_a_duplicate_and_not_indexed_twice(client: TestClient,
                                                                        gateway: FakeGateway) -> None:
    first = client.post("/v1/documents", files={"file": ("pumps.md", MARKDOWN, "text/markdown")}).json()
    gateway.store.documents[first["doc_id"]] = gateway.store.documents[first["doc_id"]].model_copy(
        update={"status": DocumentStatus.READY})
    again = client.post("/v1/documents", files={"file": ("pumps.md", MARKDOWN, "text/markdown")}).json()
    assert again["duplicate"] is True and again["status"] == "ready"
    assert len(gateway.bus.of_type(DocumentUploaded)) == 1


def test_an_upload_kafka_does_not_take_is_owed_and_published_by_the_relay(client: TestClient,
                                                                          gateway: FakeGateway) -> None:
    gateway.bus.fail_next()
    response = client.post("/v1/documents", files={"file": ("pumps.md", MARKDOWN, "text/markdown")})
    assert response.status_code == 202 and response.json()["published"] is False
    assert until(lambda: len(gateway.bus.of_type(DocumentUploaded)) == 1), "the relay never published it"
    assert until(lambda: not gateway.outbox.entries)


def test_several_files_each_get_their_own_result(client: TestClient, gateway: FakeGateway) -> None:
    files = [("files", ("a.md", b"# A\n\ntext a\n", "text/markdown")), ("files", ("empty.md", b"", "text/markdown")),
             ("files", ("b.bin", b"\x00\x01\x02", "application/octet-stream"))]
    body = client.post("/v1/documents", files=files).json()
    assert [f["status_code"] for f in body["files"]] == [202, 400, 415]
    assert body["accepted"] == 1 and body["refused"] == 2
    assert len(gateway.bus.of_type(DocumentUploaded)) == 1


def test_the_listing_pages_newest_first_and_only_the_callers_tenant(client: TestClient, gateway: FakeGateway) -> None:
    for doc_id in ("d1", "d2", "d3"):
        ready(gateway, doc_id)
    ready(gateway, "other", tenant="acme")
    first = client.get("/v1/documents", params={"limit": 2})
    assert [d["doc_id"] for d in first.json()] == ["d3", "d2"]
    second = client.get("/v1/documents", params={"limit": 2, "cursor": first.headers["x-next-cursor"]})
    assert [d["doc_id"] for d in second.json()] == ["d1"] and "x-next-cursor" not in second.headers
    assert client.get("/v1/documents/other").status_code == 404


def test_a_question_is_published_over_the_named_documents_and_its_answer_returned(client: TestClient,
                                                                                  gateway: FakeGateway) -> None:
    ready(gateway, "manual")
    gateway.answer_with(verified)
    response = client.post("/v1/query", json={"question": "When does the relief valve open?", "doc_ids": ["manual"],
                                              "timeout_s": 5})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "answered" and body["answer"] == "The relief valve opens at 12 bar."
    assert body["citations"][0]["pages"] == [2]
    [event] = gateway.bus.of_type(QueryReceived)
    assert event.doc_ids == ["manual"] and event.deadline is not None and event.query_id == body["query_id"]
    assert gateway.queries.pending[body["query_id"]].question == "When does the relief valve open?"


def test_a_failed_query_is_502_with_its_question_and_reason(client: TestClient, gateway: FakeGateway) -> None:
    ready(gateway, "manual")
    gateway.answer_with(lambda event: QueryFailed(query_id=event.query_id, tenant=event.tenant, stage="navigator",
                                                  reason="the tree is unreadable"))
    response = client.post("/v1/query", json={"question": "When does it open?", "timeout_s": 5})
    assert response.status_code == 502
    body = response.json()
    assert body["status"] == "failed" and body["question"] == "When does it open?"
    assert "unreadable" in body["reason"]


def test_a_query_nobody_answers_is_504_within_its_timeout(client: TestClient, gateway: FakeGateway) -> None:
    ready(gateway, "manual")
    started = time.monotonic()
    response = client.post("/v1/query", json={"question": "When does it open?", "timeout_s": 1.0})
    assert response.status_code == 504 and response.json()["status"] == "pending"
    assert time.monotonic() - started < 3


def test_a_query_no_live_stage_would_answer_is_refused_at_once_naming_the_stage(client: TestClient,
                                                                                gateway: FakeGateway) -> None:
    ready(gateway, "manual")
    gateway.heartbeats.alive = ("navigator", "verifier")
    response = client.post("/v1/query", json={"question": "When does it open?"})
    assert response.status_code == 503 and "compressor" in response.json()["detail"]
    assert response.json()["query_id"] and not gateway.bus.of_type(QueryReceived)
    asynchronous = client.post("/v1/query", json={"question": "When does it open?", "async": True})
    assert asynchronous.status_code == 202  # waits in Kafka for the stage to come back


def test_an_async_query_is_accepted_then_read_back_once_answered(client: TestClient, gateway: FakeGateway) -> None:
    ready(gateway, "manual")
    accepted = client.post("/v1/query", json={"question": "When does it open?", "async": True})
    assert accepted.status_code == 202
    query_id = accepted.json()["query_id"]
    [event] = gateway.bus.of_type(QueryReceived)
    assert event.deadline is None  # its client polls: no deadline unless it gave a timeout
    assert client.get(f"/v1/queries/{query_id}").json()["status"] == "pending"
    answer = verified(event)
    stored = QueryRecord(query_id=query_id, question=event.question, tenant=event.tenant,
                         status=QueryStatus.ANSWERED, outcome=answer.outcome)
    gateway.queries.results[query_id] = stored
    read = client.get(f"/v1/queries/{query_id}").json()
    assert read["status"] == "answered" and read["answer"] == "The relief valve opens at 12 bar."


@pytest.mark.parametrize(("state", "doc_ids", "status"), [
    ("none", [], 409), ("indexing", ["manual"], 409), ("other tenant", ["manual"], 404), ("absent", ["nope"], 404),
])
def test_a_query_over_documents_it_cannot_ask_is_refused_before_publishing(
        client: TestClient, gateway: FakeGateway, state: str, doc_ids: list[str], status: int) -> None:
    if state == "indexing":
        ready(gateway, "manual")
        gateway.store.documents["manual"] = gateway.store.documents["manual"].model_copy(
            update={"status": DocumentStatus.INDEXING})
    if state == "other tenant":
        ready(gateway, "manual", tenant="acme")
    response = client.post("/v1/query", json={"question": "When does it open?", "doc_ids": doc_ids})
    assert response.status_code == status, response.text
    assert not gateway.bus.of_type(QueryReceived)


def test_a_query_naming_no_document_reads_the_tenants_listing_not_the_whole_store(
        client: TestClient, gateway: FakeGateway) -> None:
    ready(gateway, "acme-report", tenant="acme")  # another tenant's ready document does not count
    assert client.post("/v1/query", json={"question": "When does it open?"}).status_code == 409
    ready(gateway, "manual")
    for k in range(5):  # newer uploads, still indexing
        ready(gateway, f"upload{k}")
        gateway.store.documents[f"upload{k}"] = gateway.store.documents[f"upload{k}"].model_copy(
            update={"status": DocumentStatus.INDEXING})
    gateway.answer_with(verified)
    response = client.post("/v1/query", json={"question": "When does it open?", "timeout_s": 5})
    assert response.status_code == 200, response.text
    assert gateway.bus.of_type(QueryReceived)[-1].doc_ids == []
    assert gateway.store.reads["list_documents"] == 0


def test_a_deleted_document_stops_being_served_at_once_and_its_data_goes(client: TestClient,
                                                                        gateway: FakeGateway) -> None:
    ready(gateway, "manual")
    gateway.answer_with(verified)
    asked = client.post("/v1/query", json={"question": "When does it open?", "doc_ids": ["manual"], "timeout_s": 5})
    assert asked.status_code == 200
    response = client.delete("/v1/documents/manual")
    assert response.status_code == 200, response.text
    assert response.json() == {"doc_id": "manual", "file_name": "manual.pdf", "queries_removed": 1}
    assert [e.doc_id for e in gateway.bus.of_type(DocumentDeleted)] == ["manual"]
    assert client.get("/v1/documents/manual").status_code == 404
    assert client.get("/v1/documents/manual/pages/1").status_code == 404
    assert client.post("/v1/query", json={"question": "When?", "doc_ids": ["manual"]}).status_code == 404
    assert until(lambda: "manual" not in gateway.store.documents), "the deletion never finished"
    assert "manual" not in gateway.store.pdfs and "manual" not in gateway.store.pages
    assert not gateway.queries.pending
    assert client.delete("/v1/documents/manual").status_code == 404


def test_another_tenants_document_cannot_be_read_or_deleted() -> None:
    gateway = FakeGateway(settings=Settings(auth="off", tenant="team-a", kafka_bootstrap="127.0.0.1:1",
                                            mongo_url="mongodb://127.0.0.1:1/"))
    ready(gateway, "theirs", tenant="team-b")
    with gateway.client() as client:
        for response in (client.get("/v1/documents/theirs"), client.get("/v1/documents/theirs/pdf"),
                         client.delete("/v1/documents/theirs")):
            assert response.status_code == 404
    assert gateway.store.documents["theirs"].status == DocumentStatus.READY
