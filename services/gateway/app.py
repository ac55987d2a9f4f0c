"""The HTTP gateway: uploads documents (PDF, DOCX, HTML, Markdown, text), publishes queries and
returns their verified answers.

Stateless apart from the requests it is holding: any number of replicas run side by side. The
app is assembled here from its routers and middleware; what it runs on comes from `connect`
(bootstrap.py: MongoDB and Kafka; tests hand in fakes of the same ports).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.auth import install_auth
from services.gateway.authorization import AUTHORIZED, declare_forbidden
from services.gateway.bootstrap import Connector, connected
from services.gateway.errors import install_error_handlers, without_default_422
from services.gateway.limits import install_body_limits
from services.gateway.mcp import install_mcp, serving_mcp
from services.gateway.outages import CLIENT_TIMEOUT, PROBE_TIMEOUT_S, UNAVAILABLE_RESPONSES, install_outage_handling
from services.gateway.ports import live
from services.gateway.routes import chats, completions, documents, health, keys, queries, signin, uploads, verify
from services.gateway.security import install_client_address, install_security
from services.gateway.web import mount_web
from shared.adapters.metrics import HTTP_SECONDS, export_http_series
from shared.settings import Settings, get_settings

ROUTERS = (health.router, uploads.router, documents.router, queries.router, verify.router, chats.router,
           completions.router, signin.router, keys.router)


def create_app(settings: Settings | None = None, connect: Connector = connected) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with connect(settings) as gateway, serving_mcp(app, tools):
            app.state.gateway = gateway
            try:
                yield
            finally:
                app.state.gateway = None

    app = FastAPI(
        title="TreeRAG gateway", version="0.1.0", lifespan=lifespan, responses=UNAVAILABLE_RESPONSES,
        description="Upload PDFs, get page-aware section trees, ask questions and get answers with page citations.",
        # Every route: its client's timeout_s, then 401 without a key but the public ones, then 403
        # below the route's role.
        dependencies=[CLIENT_TIMEOUT, AUTHORIZED],
        docs_url=None, redoc_url=None,  # served offline by the web app, with its assets from this origin
        generate_unique_id_function=operation_id,
    )
    app.state.settings = settings
    install_error_handlers(app)
    install_auth(app, settings, lambda: live(app).keys)
    install_body_limits(app, settings)
    install_outage_handling(app, settings, lambda: backend_probes(app))
    mount_web(app, lambda: live(app).documents, settings.prometheus_url)
    app.add_middleware(Measure)
    install_security(app, settings)  # after `measure`: outermost, so its headers are on every response
    install_client_address(app, settings)  # outside even that: every layer sees the client's address
    for router in ROUTERS:
        app.include_router(router)
    tools = install_mcp(app)
    export_http_series(declared_endpoints(app))
    declare_forbidden(app)
    declare_errors_only(app)
    return app


def operation_id(route: APIRoute) -> str:
    """An operation's id is its route's name (`upload_document`, `get_tree`, `ask`…: the route
    function's, unless the route gives another), which a generated client names its methods after."""
    return route.name


def declare_errors_only(app: FastAPI) -> None:
    """The schema lists the error statuses each route declares, and only those."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = without_default_422(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def backend_probes(app: FastAPI) -> dict[str, Callable[[], Awaitable[Any]]]:
    """A ping per backend, tried when a request runs over its budget (none while starting)."""
    gateway = getattr(app.state, "gateway", None)
    if gateway is None:
        return {}
    return {"Kafka": lambda: gateway.ping_kafka(PROBE_TIMEOUT_S), "MongoDB": gateway.documents.ping}


class Measure:
    """Every request's latency, by method, route template and status, up to the start of its
    response (a plain ASGI middleware: Starlette's `BaseHTTPMiddleware` ran every request through
    an extra task and memory stream)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        observed = False

        def observe(status: int) -> None:
            nonlocal observed
            observed = True
            path = getattr(scope.get("route"), "path", "unmatched")
            HTTP_SECONDS.labels(scope["method"], path, str(status)).observe(time.perf_counter() - started)

        async def send_measured(message: Message) -> None:
            if message["type"] == "http.response.start" and not observed:
                observe(int(message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, send_measured)
        finally:
            if not observed:
                observe(500)


def declared_endpoints(app: FastAPI) -> list[tuple[str, str, int]]:
    """(method, route, status) of every API route: its success status, the statuses it declares,
    and 500 (any route can fail), so the latency and 5xx panels have series before traffic."""
    endpoints = []
    for route in iter_route_contexts(app.routes):  # the included routers' routes too
        path = route.path
        if not isinstance(route.original_route, APIRoute) or path is None:
            continue
        statuses = {int(route.status_code or 200), 500,
                    *(int(code) for code in route.responses if str(code).isdigit())}
        endpoints += [(method, path, status) for method in sorted((route.methods or set()) - {"HEAD"})
                      for status in sorted(statuses)]
    return endpoints
