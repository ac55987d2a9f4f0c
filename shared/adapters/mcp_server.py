"""The Model Context Protocol server: the tools agents call (Claude, Cursor and other MCP
clients), each with its input and output schema, over a `DocumentDesk` (shared/app/desk.py).

`desk_for(context)` gives the desk of the caller of one tool call: the gateway's for the tenant
of the request's API key, or the local store's for `treerag mcp`. A refusal the tools foresee
(an unknown document, a page out of range, no answer in time) is a tool error whose message
says what to do; arguments of the wrong type are refused by the SDK against the input schema.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from shared.app import desk as tools
from shared.model.query import DOC_IDS_MAX, QUESTION_MAX_CHARS, Citation
from shared.model.tools import AskResult, DocumentList, DocumentTreeOut, PageSearch, PageText, TextCheck
from shared.ports.desk import DocumentDesk, ToolFailure

DeskFor = Callable[[Context[Any, Any]], Awaitable[DocumentDesk]]

INSTRUCTIONS = (
    "Answers questions from the indexed documents (PDF, Word, HTML, Markdown) with page citations, each "
    "sentence checked against the page it cites. Call list_documents to see what is indexed, ask for a "
    "verified answer, search_pages for the pages that hold evidence, get_page and get_tree to read, and "
    "verify to check any text against pages it cites."
)
TEXT_MAX_CHARS = 20_000

Question = Annotated[str, Field(min_length=1, max_length=QUESTION_MAX_CHARS, description="The question, in words.")]
DocIds = Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]],
                   Field(max_length=DOC_IDS_MAX, description="Doc ids to ask (list_documents); empty: all.")]
DocId = Annotated[str, Field(min_length=1, max_length=200, description="A doc id from list_documents.")]
Page = Annotated[int, Field(ge=1, le=1_000_000, description="1-based physical page number.")]


def build_server(desk_for: DeskFor) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="treerag", instructions=INSTRUCTIONS)

    async def run(ctx: Context[Any, Any], work: Callable[[DocumentDesk], Awaitable[Any]]) -> Any:
        try:
            return await work(await desk_for(ctx))
        except ToolFailure as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description="A verified answer: each sentence with its verdict, file, page, section, the "
                             "evidence on the page and a link to the page image.")
    async def ask(question: Question, ctx: Context[Any, Any], doc_ids: DocIds | None = None) -> AskResult:
        result: AskResult = await run(ctx, lambda desk: tools.ask(desk, question, doc_ids or []))
        return result

    @server.tool(description="The pages that hold evidence for a question, best first, with snippets.")
    async def search_pages(question: Question, ctx: Context[Any, Any], doc_ids: DocIds | None = None,
                           limit: Annotated[int, Field(ge=1, le=tools.SEARCH_PAGES_MAX)] = 5) -> PageSearch:
        result: PageSearch = await run(ctx, lambda desk: tools.search_pages(desk, question, doc_ids or [], limit))
        return result

    @server.tool(description="Check any text, sentence by sentence, against the pages it cites: supported, "
                             "contradicted (a changed number, name or negation) or unsupported, with the reason.")
    async def verify(text: Annotated[str, Field(min_length=1, max_length=TEXT_MAX_CHARS)],
                     citations: Annotated[list[Citation], Field(min_length=1, max_length=20)],
                     ctx: Context[Any, Any]) -> TextCheck:
        result: TextCheck = await run(ctx, lambda desk: tools.verify(desk, text, citations))
        return result

    @server.tool(description="The text of one page, with its printed page number.")
    async def get_page(doc_id: DocId, page: Page, ctx: Context[Any, Any]) -> PageText:
        result: PageText = await run(ctx, lambda desk: tools.get_page(desk, doc_id, page))
        return result

    @server.tool(description="The document's section tree: titles, levels, page ranges and summaries.")
    async def get_tree(doc_id: DocId, ctx: Context[Any, Any]) -> DocumentTreeOut:
        result: DocumentTreeOut = await run(ctx, lambda desk: tools.get_tree(desk, doc_id))
        return result

    @server.tool(description="The indexed documents, with their cards (title, issuer, type, period, pages).")
    async def list_documents(ctx: Context[Any, Any]) -> DocumentList:
        result: DocumentList = await run(ctx, tools.list_documents)
        return result

    return server
