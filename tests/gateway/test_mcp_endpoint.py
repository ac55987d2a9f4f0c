"""The tools for agents at the gateway's `/mcp`, with the official `mcp` SDK as the client over
streamable HTTP, on fakes of the gateway's ports: behind the API keys, for the key's tenant."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from shared.app.api_keys import new_key
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import AnswerVerified, QueryOutcome, QueryReceived
from shared.model.query import Citation, EvidenceWindow, SentenceCheck, VerifiedAnswer
from shared.settings import Settings
from tests.gateway.fake_gateway import FakeGateway

PAGE = "The relief valve opens at 12 bar. It is tested every year."


def answer(event: QueryReceived) -> AnswerVerified:
    citation = Citation(doc_id="manual", file_name="manual.pdf", node_id="0002", pages=[2])
    check = SentenceCheck(text="The relief valve opens at 12 bar.", citation=citation, signals={}, score=0.9,
                          grounded=True, verdict="supported",
                          window=EvidenceWindow(doc_id="manual", page=2, start=0, end=33, text=PAGE[:33]))
    verified = VerifiedAnswer(question=event.question, answer="The relief valve opens at 12 bar [manual.pdf, p. 2].",
                              confidence=0.9, citations=[citation], sentences=[check])
    return AnswerVerified(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                          settings=event.settings, tenant=event.tenant,
                          outcome=QueryOutcome(answer=verified, mode="dfs"))


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[FakeGateway, str, str]]:
    """The gateway on fakes, served by uvicorn (the SDK's client speaks real HTTP), with keys on."""
    fake = FakeGateway(settings=Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/",
                                         auth_failures_per_s=0))
    fake.store.documents["manual"] = DocumentRecord(doc_id="manual", file_name="manual.pdf", page_count=2,
                                                    status=DocumentStatus.READY, tenant="plant")
    fake.store.pages["manual"] = ["Contents", PAGE]
    fake.answer_with(answer)
    issued = new_key("plant")
    fake.keys.records[issued.record.key_id] = issued.record
    server = uvicorn.Server(uvicorn.Config(fake.app(), host="127.0.0.1", port=0, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield fake, f"http://127.0.0.1:{port}", issued.key
    server.should_exit = True
    thread.join(10)


async def call(url: str, key: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        return await client.call_tool(tool, arguments)


async def test_ask_over_http_gives_the_verified_sentences_with_a_link_to_the_page(
        served: tuple[FakeGateway, str, str]) -> None:
    fake, url, key = served
    result = await call(url, key, "ask", {"question": "When does the relief valve open?"})
    assert not result.is_error, result.content
    sentence = result.structured_content["sentences"][0]
    assert sentence["verdict"] == "supported" and sentence["page"] == 2 and sentence["evidence_end"] == 33
    assert sentence["page_image"] == "/v1/documents/manual/pages/2/image"
    assert fake.bus.of_type(QueryReceived)[-1].tenant == "plant"


async def test_pages_and_documents_are_the_keys_tenants(served: tuple[FakeGateway, str, str]) -> None:
    _, url, key = served
    page = await call(url, key, "get_page", {"doc_id": "manual", "page": 2})
    assert page.structured_content["text"] == PAGE
    listed = await call(url, key, "list_documents", {})
    assert [d["doc_id"] for d in listed.structured_content["documents"]] == ["manual"]
    checked = await call(url, key, "verify", {"text": "The relief valve opens at 40 bar.",
                                              "citations": [{"doc_id": "manual", "pages": [2]}]})
    assert checked.structured_content["supported"] == 0


def test_without_a_valid_key_the_endpoint_answers_401(served: tuple[FakeGateway, str, str]) -> None:
    _, url, _ = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer trk_not_a_key"}):
        response = httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=10)
        assert response.status_code == 401 and response.headers["WWW-Authenticate"].startswith("Bearer")
