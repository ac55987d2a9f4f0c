"""Deleting a document over HTTP: from the answer on nothing serves it, and soon after nothing of
it stays in any collection or stage cache; a gateway that stopped midway is finished by the next."""

from __future__ import annotations

import asyncio
from typing import Any

import bson
import httpx
import pytest

from shared.adapters.mongo.document_keys import COLLECTION as DOCUMENT_KEYS
from shared.adapters.mongo.store import MongoRepository
from shared.adapters.sealing import TextErased
from shared.model.events import AnswerVerified, ContextCompressed, NodesSelected, QueryEvent
from tests.support.integration.kafka_tools import opened, read_topic
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until
from tests.support.integration.uploads import upload, upload_ready

pytestmark = pytest.mark.integration


def ask(gateway: Gateway, question: str, **body: Any) -> httpx.Response:
    return gateway.post("/v1/query", json={"question": question, **body}, timeout=120)


def collections_holding(db: Any, needle: str) -> dict[str, int]:
    """Rows of every collection of the database whose stored bytes contain `needle`."""
    found: dict[str, int] = {}
    for name in db.list_collection_names():
        hits = sum(1 for row in db[name].find({}) if needle.encode() in bson.encode(row))
        if hits:
            found[name] = hits
    return found


def forgot(process: ServiceProcess, doc_id: str) -> bool | None:
    return any(r.get("msg") == "deleted document forgotten" and r.get("doc_id") == doc_id
               for r in process.log_records()) or None


def test_deleted_document_leaves_no_text_in_any_collection_or_stage_cache(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess], db: Any
) -> None:
    gone = upload_ready(gateway, manual_pdf(unit=611), "unit-611.pdf")["doc_id"]
    kept = upload_ready(gateway, manual_pdf(unit=612), "unit-612.pdf")["doc_id"]
    question = "At what pressure does the safety valve of unit 611 open?"
    first = ask(gateway, question, doc_ids=[gone])
    assert first.status_code == 200 and "621 bar" in first.json()["answer"], first.text
    # Asked again: answered from the cache (the navigator now keeps it in memory too).
    again = ask(gateway, question, doc_ids=[gone]).json()
    assert [t["stage"] for t in again["timings"]["stages"]] == ["navigator"]
    text = "opens at a pressure of 621 bar"
    assert "query_results" in collections_holding(db, text)
    assert "page_chunks" in collections_holding(db, text)

    deleted = gateway.delete(f"/v1/documents/{gone}", timeout=30)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["doc_id"] == gone and deleted.json()["queries_removed"] == 2
    for path in ("", "/tree", "/pdf", "/pages/1"):
        assert gateway.get(f"/v1/documents/{gone}{path}", timeout=10).status_code == 404

    # The rest goes in the background.
    wait_until(lambda: collections_holding(db, text) == {} or None, 60, "the deleted document's text to go")
    assert collections_holding(db, gone) == {}, "a collection still names the deleted document"
    assert gateway.get(f"/v1/queries/{first.json()['query_id']}", timeout=10).status_code == 404
    assert gateway.delete(f"/v1/documents/{gone}", timeout=10).status_code == 404
    assert gone not in {d["doc_id"] for d in gateway.get("/v1/documents", timeout=10).json()}

    # Every query stage that kept something of it in memory dropped it.
    navigator, _, verifier = query_stages
    for process in (navigator, verifier):
        wait_until(lambda p=process: forgot(p, gone), 60, f"{process.name} to forget the deleted document")

    # Asked over everything, the deleted document is never cited; the other one still answers.
    after = ask(gateway, question)
    assert after.status_code == 200, after.text + stack.logs()
    assert all(c["doc_id"] != gone for c in after.json()["citations"])
    assert "621 bar" not in (after.json()["answer"] or "")
    other = ask(gateway, "At what pressure does the safety valve of unit 612 open?", doc_ids=[kept])
    assert other.status_code == 200 and "622 bar" in other.json()["answer"], other.text


def start_deleting(stack: Stack, doc_id: str) -> None:
    """The record marked `deleting` and nothing removed yet: a gateway that stopped right after
    answering a DELETE."""
    async def mark() -> None:
        repo = MongoRepository.from_url(stack.mongo_url, stack.db_name)
        try:
            assert await repo.begin_deletion(doc_id) is not None
        finally:
            await repo.close()

    asyncio.run(mark())


def test_a_document_being_deleted_is_served_by_no_route_and_the_next_gateway_finishes_it(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess], db: Any,
    api_key: str,
) -> None:
    data = manual_pdf(unit=613)
    gone = upload_ready(gateway, data, "unit-613.pdf")["doc_id"]
    question = "At what pressure does the safety valve of unit 613 open?"
    assert "623 bar" in ask(gateway, question, doc_ids=[gone]).json()["answer"]
    start_deleting(stack, gone)

    for path in ("", "/tree", "/pdf", "/pages/1", "/pages/1/image", "/pages/1/text-layer"):
        assert gateway.get(f"/v1/documents/{gone}{path}", timeout=10).status_code == 404, path
    assert gone not in {d["doc_id"] for d in gateway.get("/v1/documents", timeout=10).json()}
    assert gateway.get("/v1/documents", params={"file_name": "unit-613.pdf"}, timeout=10).json() == []
    assert ask(gateway, question, doc_ids=[gone]).status_code == 404  # not the cached answer
    over_all = ask(gateway, question)
    assert all(c["doc_id"] != gone for c in over_all.json().get("citations", [])), over_all.text
    assert "623 bar" not in (over_all.json().get("answer") or "")
    verify = gateway.post("/v1/verify", json={"answer": "It opens at 623 bar.",
                                              "citations": [{"doc_id": gone, "pages": [1]}]}, timeout=30)
    assert verify.status_code == 404, verify.text
    again = upload(gateway, data, "unit-613.pdf")
    assert again.status_code == 409 and "being deleted" in again.text, again.text
    assert gateway.delete(f"/v1/documents/{gone}", timeout=10).status_code == 404
    assert "page_chunks" in collections_holding(db, gone)  # nothing removed: no gateway is finishing it

    fresh = stack.start_gateway(api_key)
    try:
        wait_until(fresh.ready, 240, "a new gateway /readyz", interval_s=0.5)
        wait_until(lambda: collections_holding(db, gone) == {} or None, 60,
                   "the new gateway to finish the interrupted deletion")
    finally:
        stack.stop(fresh.process)
    assert collections_holding(db, "623 bar") == {}


def test_a_deleted_documents_text_is_readable_in_no_retained_kafka_message(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess], db: Any
) -> None:
    doc_id = upload_ready(gateway, manual_pdf(unit=613), "unit-613.pdf")["doc_id"]
    answered = ask(gateway, "At what pressure does the safety valve of unit 613 open?", doc_ids=[doc_id])
    assert answered.status_code == 200 and "623 bar" in answered.json()["answer"], answered.text
    query_id = answered.json()["query_id"]
    kinds: tuple[type[QueryEvent], ...] = (NodesSelected, ContextCompressed, AnswerVerified)

    def retained() -> dict[type[QueryEvent], list[bytes]]:
        return {kind: [r.value for r in asyncio.run(read_topic(stack.kafka_bootstrap, stack.topic(kind.TOPIC)))
                       if r.key == query_id.encode()] for kind in kinds}

    held = retained()
    assert all(held.values()), "each stage's message of the query is retained"
    for kind, values in held.items():
        assert not any(b"623 bar" in value or b"opens at a pressure" in value for value in values), kind.TOPIC
    # The selected pages travel as references: opened, `nodes.selected` holds no page text.
    selected = asyncio.run(opened(db, NodesSelected, held[NodesSelected][0]))
    assert selected.navigation.passages and not any(p.text for p in selected.navigation.passages)
    # While the document exists, its key (in the store) opens the context the compressor read.
    readable = asyncio.run(opened(db, ContextCompressed, held[ContextCompressed][0]))
    assert any("623 bar" in p.text for p in readable.context.passages)

    assert gateway.delete(f"/v1/documents/{doc_id}", timeout=30).status_code == 200
    assert db[DOCUMENT_KEYS].find_one({"_id": doc_id}) is None  # destroyed as the deletion starts
    for kind, values in retained().items():
        assert values, f"Kafka still retains the {kind.TOPIC} message"
        for value in values:
            with pytest.raises(TextErased):
                asyncio.run(opened(db, kind, value))
