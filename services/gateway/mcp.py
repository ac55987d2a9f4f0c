"""The tools for agents at `/mcp` (MCP's streamable HTTP), behind the gateway's API keys.

Each tool call is answered for the tenant of the request's key, through the same pipeline and
rules as the HTTP API (shared/app/desk.py). The transport is stateless and answers in JSON: any
replica answers any call, as for every other route.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials
from fastapi.security.utils import get_authorization_scheme_param
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from services.gateway.asking import Question, StagesMissing, ask
from services.gateway.auth import Authenticator, Caller
from services.gateway.errors import error_response
from services.gateway.outages import extend_deadline
from services.gateway.ports import Gateway, live
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.mcp_server import build_server
from shared.adapters.nli import configured_judge
from shared.app.documents import DocumentNotFound, DocumentNotReady, NothingToAsk, query_documents, tenant_document
from shared.app.verification import SourcePage, verify_text
from shared.model.documents import DocumentRecord, DocumentTree
from shared.model.events import QueryOutcome
from shared.model.query import QuerySettings, SentenceCheck
from shared.model.query_records import QueryStatus
from shared.ports.desk import ToolFailure

MCP_PATH = "/mcp"
CALLER_KEY = "treerag_caller"
DOCUMENTS_LISTED = 1000


class GatewayDesk:
    """The documents of one caller, asked over the bus."""

    def __init__(self, gateway: Gateway, caller: Caller) -> None:
        self.gateway = gateway
        self.caller = caller

    async def answer(self, question: str, doc_ids: list[str]) -> QueryOutcome:
        try:
            resolved = await query_documents(self.gateway.documents, doc_ids, self.caller.tenant)
            asked = Question(text=question, doc_ids=resolved, settings=QuerySettings(), tenant=self.caller.tenant,
                             timeout_s=self.gateway.settings.query_timeout_s)
            _, finished = await ask(self.gateway, asked)
        except DocumentNotFound as exc:
            raise ToolFailure(f"{exc}; list_documents gives the doc ids") from exc
        except (DocumentNotReady, NothingToAsk) as exc:
            raise ToolFailure(str(exc)) from exc
        except StagesMissing as exc:
            raise ToolFailure(f"{exc} has no live process: nothing can answer now; try again in a minute") from exc
        if finished is None:
            raise ToolFailure(f"no answer came within {self.gateway.settings.query_timeout_s:g} s; try again")
        if finished.status == QueryStatus.FAILED or finished.outcome is None:
            raise ToolFailure(f"the question could not be answered: {finished.reason or 'the pipeline failed'}")
        return finished.outcome

    async def documents(self) -> list[DocumentRecord]:
        page = await self.gateway.documents.list_page(self.caller.tenant, DOCUMENTS_LISTED)
        return page.records

    async def document(self, doc_id: str) -> DocumentRecord:
        try:
            return await tenant_document(self.gateway.documents, doc_id, self.caller.tenant)
        except DocumentNotFound as exc:
            raise ToolFailure(f"{exc}; list_documents gives the doc ids") from exc

    async def page_texts(self, doc_id: str, pages: list[int]) -> dict[int, str]:
        return await self.gateway.documents.get_page_texts(doc_id, pages)

    async def tree(self, doc_id: str) -> DocumentTree | None:
        return await self.gateway.documents.get_tree(doc_id)

    async def check(self, text: str, sources: list[SourcePage]) -> list[SentenceCheck]:
        settings = self.gateway.settings
        return await asyncio.to_thread(verify_text, text, sources, configured_judge(settings.nli),
                                       word_vectors(settings))

    def page_image(self, doc_id: str, page: int) -> str | None:
        return f"/v1/documents/{doc_id}/pages/{page}/image"


class McpEndpoint:
    """The key check in front of the MCP transport (which is built afresh each time the app
    starts: its session manager runs once)."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.transport: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.transport is None:
            await error_response(503, "the gateway is starting", unavailable="the gateway")(scope, receive, send)
            return
        authenticator: Authenticator = self.app.state.authenticator
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        scheme, token = get_authorization_scheme_param(headers.get("authorization"))
        credentials = HTTPAuthorizationCredentials(scheme=scheme, credentials=token) \
            if scheme.lower() == "bearer" and token else None
        client = scope.get("client")
        try:
            caller = await authenticator.caller(MCP_PATH, credentials, client[0] if client else "unknown")
        except HTTPException as exc:
            await error_response(exc.status_code, exc.detail, exc.headers)(scope, receive, send)
            return
        scope.setdefault("state", {})[CALLER_KEY] = caller
        # A tool call may wait for a whole answer: the query's budget, not a plain request's.
        extend_deadline(live(self.app).settings.query_timeout_s + 5)
        await self.transport(scope, receive, send)


def install_mcp(app: FastAPI) -> McpEndpoint:
    endpoint = McpEndpoint(app)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    return endpoint


@asynccontextmanager
async def serving_mcp(app: FastAPI, endpoint: McpEndpoint) -> AsyncIterator[None]:
    """The MCP transport for as long as the app serves."""

    async def desk_for(ctx: Context[Any, Any]) -> GatewayDesk:
        request = ctx.request_context.request
        caller = getattr(getattr(request, "state", None), CALLER_KEY, None)
        if not isinstance(caller, Caller):
            raise ToolFailure("this call came without an API key; send `Authorization: Bearer <key>`")
        return GatewayDesk(live(app), caller)

    server = build_server(desk_for)
    transport = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
        # The gateway checks the Host header itself (TREERAG_ALLOWED_HOSTS).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    async with server.session_manager.run():
        endpoint.transport = transport.routes[0].endpoint  # type: ignore[attr-defined]
        try:
            yield
        finally:
            endpoint.transport = None
