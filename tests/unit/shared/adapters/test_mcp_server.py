"""The tools for agents with the official `mcp` SDK as the client, over the one-process store:
in process, and over stdio as an MCP client starts `treerag mcp`. Each tool has an input and an
output schema; a refusal is a tool error that says what to do."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from services.indexer.pipeline import index_pdf
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.mcp_server import build_server
from shared.model.query import QuerySettings
from tests.support.integration.pdfs import manual_pdf
from treerag.desk import StoreDesk
from treerag.engine import QueryEngine

QUESTION = "At what pressure does the safety valve of unit 707 open?"
TOOLS = {"ask", "search_pages", "verify", "get_page", "get_tree", "list_documents"}


@pytest.fixture(scope="module")
async def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("mcp-store")
    indexed = index_pdf(manual_pdf(unit=707), "unit-707.pdf")
    await EmbeddedRepository(folder).put_indexed(indexed)
    return folder, indexed.record.doc_id


@asynccontextmanager
async def connected(store: tuple[Path, str]) -> AsyncIterator[Client]:
    """A client of the server in process (entered in the test's own task, as anyio requires)."""
    repository = EmbeddedRepository(store[0])
    desk = StoreDesk(repository, QueryEngine(repository))

    async def desk_for(_: Any) -> StoreDesk:
        return desk

    async with Client(build_server(desk_for)) as client:
        yield client


async def call(store: tuple[Path, str], tool: str, arguments: dict[str, Any]) -> Any:
    async with connected(store) as client:
        return await client.call_tool(tool, arguments)


async def test_every_tool_has_an_input_and_an_output_schema(store: tuple[Path, str]) -> None:
    async with connected(store) as client:
        listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    for tool in listed.tools:
        assert tool.input_schema["type"] == "object" and tool.output_schema, tool.name
        assert tool.description


async def test_ask_gives_the_verified_sentences_of_the_one_process_answer(store: tuple[Path, str]) -> None:
    result = await call(store, "ask", {"question": QUESTION})
    assert not result.is_error, result.content
    body = result.structured_content
    repository = EmbeddedRepository(store[0])
    expected = await QueryEngine(repository).ask(QUESTION, None, QuerySettings())
    assert body["answer"] == expected.answer.answer and "707" in body["answer"]
    cited = body["sentences"][0]
    assert cited["file_name"] == "unit-707.pdf" and cited["page"] == 2 and cited["verdict"] == "supported"
    assert cited["evidence"] and cited["evidence_end"] > cited["evidence_start"]


async def test_search_get_page_tree_and_documents(store: tuple[Path, str]) -> None:
    doc_id = store[1]
    async with connected(store) as client:
        pages = (await client.call_tool("search_pages", {"question": QUESTION, "limit": 3})).structured_content
        page = (await client.call_tool("get_page", {"doc_id": doc_id, "page": 2})).structured_content
        tree = (await client.call_tool("get_tree", {"doc_id": doc_id})).structured_content
        documents = (await client.call_tool("list_documents", {})).structured_content
    assert pages["pages"][0]["page"] == 2 and "bar" in pages["pages"][0]["snippet"]
    assert "opens at a pressure of" in page["text"]
    assert tree["nodes"][1]["title"] == "2 Safety valves"
    assert [d["doc_id"] for d in documents["documents"]] == [doc_id]


async def test_verify_catches_a_changed_number(store: tuple[Path, str]) -> None:
    page = (await call(store, "get_page", {"doc_id": store[1], "page": 2})).structured_content["text"]
    pressure = page.split("opens at a pressure of ")[1].split(" bar")[0]
    citation = [{"doc_id": store[1], "pages": [2]}]
    claim = "Each safety valve of unit 707 opens at a pressure of {} bar."
    right = await call(store, "verify", {"text": claim.format(pressure), "citations": citation})
    wrong = await call(store, "verify", {"text": claim.format(int(pressure) + 40), "citations": citation})
    assert right.structured_content["supported"] == 1
    assert wrong.structured_content["supported"] == 0


@pytest.mark.parametrize(("tool", "arguments", "says"), [
    ("get_page", {"doc_id": "nope", "page": 1}, "list_documents"),
    ("get_page", {"doc_id": "unit-707.pdf", "page": 99}, "pages 1 to"),
    ("get_tree", {"doc_id": "nope"}, "list_documents"),
    ("ask", {"question": QUESTION, "doc_ids": ["nope"]}, "list_documents"),
])
async def test_a_refusal_is_a_tool_error_that_says_what_to_do(store: tuple[Path, str], tool: str,
                                                              arguments: dict[str, Any], says: str) -> None:
    result = await call(store, tool, arguments)
    assert result.is_error and says in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(("tool", "arguments"), [
    ("get_page", {"doc_id": "x", "page": "two"}),
    ("get_page", {"doc_id": "x", "page": 0}),
    ("ask", {"question": 42}),
    ("ask", {"question": ""}),
    ("ask", {}),
    ("verify", {"text": "x", "citations": "page 2"}),
    ("search_pages", {"question": "x", "limit": 1000}),
])
async def test_arguments_of_the_wrong_type_are_refused(store: tuple[Path, str], tool: str,
                                                       arguments: dict[str, Any]) -> None:
    result = await call(store, tool, arguments)
    assert result.is_error


async def test_treerag_mcp_serves_the_tools_over_stdio(store: tuple[Path, str]) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "treerag", "mcp", "--store", str(store[0])])
    async with Client(server) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
        result = await client.call_tool("ask", {"question": QUESTION})
        assert not result.is_error and "707" in result.structured_content["answer"]
