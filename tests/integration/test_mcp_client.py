"""The tools for agents with the official `mcp` SDK as the client, against the stack: the
gateway's `/mcp` over streamable HTTP answers through Kafka and the query stages, with the
citations and verdicts `POST /v1/query` gives."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

QUESTION = "At what pressure does the safety valve of unit 505 open?"


@pytest.fixture(scope="module")
def document(gateway: Gateway, indexer_for_module: ServiceProcess) -> dict[str, Any]:
    return upload_ready(gateway, manual_pdf(unit=505), "unit-505.pdf")


async def call(gateway: Gateway, tool: str, arguments: dict[str, Any]) -> Any:
    async with (httpx2.AsyncClient(headers=gateway.auth, timeout=120) as http,
                Client(streamable_http_client(f"{gateway.url}/mcp", http_client=http)) as client):
        return await client.call_tool(tool, arguments)


async def test_ask_over_the_stack_matches_the_query_api(gateway: Gateway, document: dict[str, Any]) -> None:
    result = await call(gateway, "ask", {"question": QUESTION, "doc_ids": [document["doc_id"]]})
    assert not result.is_error, result.content
    expected = gateway.post("/v1/query", json={"question": QUESTION, "doc_ids": [document["doc_id"]]},
                            timeout=120).json()
    body = result.structured_content
    assert body["answer"] == expected["answer"] and body["citations"] == expected["citations"]
    assert [s["verdict"] for s in body["sentences"]] == [s["verdict"] for s in expected["sentences"]]
    assert body["sentences"][0]["page"] == 2 and body["sentences"][0]["file_name"] == "unit-505.pdf"


async def test_the_reading_tools_over_the_stack(gateway: Gateway, document: dict[str, Any]) -> None:
    page = await call(gateway, "get_page", {"doc_id": document["doc_id"], "page": 2})
    assert "unit 505" in page.structured_content["text"]
    tree = await call(gateway, "get_tree", {"doc_id": document["doc_id"]})
    assert tree.structured_content["nodes"][1]["title"] == "2 Safety valves"
    missing = await call(gateway, "get_page", {"doc_id": "0000000000000000", "page": 1})
    assert missing.is_error and "list_documents" in missing.content[0].text
