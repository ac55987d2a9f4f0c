"""The tools for agents at the gateway's `/mcp`, with the official `mcp` SDK as the client over
streamable HTTP, on fakes of the gateway's ports: behind the API keys, for the key's tenant."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from shared.app.api_keys import new_key
from shared.model.events import AnswerVerified, QueryReceived
from shared.model.query import Citation, EvidenceWindow, SentenceCheck
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway, served, verified, with_manual

PAGE = "The relief valve opens at 12 bar. It is tested every year."


def answer(event: QueryReceived) -> AnswerVerified:
    citation = Citation(doc_id="manual", file_name="manual.pdf", node_id="0002", pages=[2])
    check = SentenceCheck(text="The relief valve opens at 12 bar.", citation=citation, signals={}, score=0.9,
                          grounded=True, verdict="supported",
                          window=EvidenceWindow(doc_id="manual", page=2, start=0, end=33, text=PAGE[:33]))
    return verified(event, "The relief valve opens at 12 bar [manual.pdf, p. 2].", [check], [citation], 0.9)


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[FakeGateway, str, str]]:
    """The gateway on fakes, served over real HTTP (the SDK's client speaks it), with keys on."""
    fake = with_manual(FakeGateway(settings=Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/",
                                                     auth_failures_per_s=0, tenant="plant")), answer)
    fake.store.pages["manual"] = ["Contents", PAGE]
    issued = new_key("plant")
    fake.keys.records[issued.record.key_id] = issued.record
    with served(fake.app()) as port:
        yield fake, f"http://127.0.0.1:{port}", issued.key


async def call(url: str, key: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        return await client.call_tool(tool, arguments)


async def test_ask_over_http_gives_the_verified_sentences_with_a_link_to_the_page(
        gateway: tuple[FakeGateway, str, str]) -> None:
    fake, url, key = gateway
    result = await call(url, key, "ask", {"question": "When does the relief valve open?"})
    assert not result.is_error, result.content
    sentence = result.structured_content["sentences"][0]
    assert sentence["verdict"] == "supported" and sentence["page"] == 2 and sentence["evidence_end"] == 33
    assert sentence["page_image"] == "/v1/documents/manual/pages/2/image"
    assert fake.bus.of_type(QueryReceived)[-1].tenant == "plant"


async def test_pages_and_documents_are_the_keys_tenants(gateway: tuple[FakeGateway, str, str]) -> None:
    _, url, key = gateway
    page = await call(url, key, "get_page", {"doc_id": "manual", "page": 2})
    assert page.structured_content["text"] == PAGE
    listed = await call(url, key, "list_documents", {})
    assert [d["doc_id"] for d in listed.structured_content["documents"]] == ["manual"]
    checked = await call(url, key, "verify", {"text": "The relief valve opens at 40 bar.",
                                              "citations": [{"doc_id": "manual", "pages": [2]}]})
    assert checked.structured_content["supported"] == 0


def test_without_a_valid_key_the_endpoint_answers_401(gateway: tuple[FakeGateway, str, str]) -> None:
    _, url, _ = gateway
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer trk_not_a_key"}):
        response = httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=10)
        assert response.status_code == 401 and response.headers["WWW-Authenticate"].startswith("Bearer")
