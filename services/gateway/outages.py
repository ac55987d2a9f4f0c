"""Honest failure when Kafka or MongoDB is down: 503 with `Retry-After`, in time.

Every request has a time budget: TREERAG_REQUEST_TIMEOUT_S once its body is read (a slow upload
is not cut while its bytes keep coming), or the query's own `timeout_s` (the handler sets it
with `extend_deadline`). A backend that does not answer within the budget, or whose client
reports it unreachable, gives 503 + `Retry-After` naming what is down, never a bare 500 after
the drivers' own 10-40 s timeouts. A request over its budget while both answer (the work
itself was slow) names the gateway, not them: the budget's 503 pings both first.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from pymongo.errors import ConnectionFailure
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.errors import error_response, error_responses
from services.gateway.schemas import QUERY_TIMEOUT_MAX_S
from shared.settings import Settings
from shared.text.secrets import redact

logger = logging.getLogger(__name__)

T = TypeVar("T")

_budget: contextvars.ContextVar[asyncio.Timeout | None] = contextvars.ContextVar("treerag_request_budget",
                                                                                   default=None)


class BackendUnavailable(Exception):
    """`backend` did not answer (in time): the request can be retried once it is back."""

    def __init__(self, backend: str, why: str) -> None:
        super().__init__(f"{backend} {why}")
        self.backend = backend
        self.why = why


# Declared on every operation (FastAPI(responses=...)): any of them may meet an outage.
UNAVAILABLE_RESPONSES = error_responses(503)


def unavailable_response(backend: str, why: str, retry_after_s: int, query_id: str | None = None) -> JSONResponse:
    return error_response(503, redact(f"{backend} {why}; retry in {retry_after_s} s"),
                          {"Retry-After": str(retry_after_s)}, unavailable=backend, query_id=query_id)


async def bounded(work: Awaitable[T], backend: str, timeout_s: float) -> T:
    """`work` on `backend`, or BackendUnavailable once `timeout_s` has passed."""
    try:
        return await asyncio.wait_for(work, timeout_s)
    except TimeoutError:
        raise BackendUnavailable(backend, f"did not answer within {timeout_s:.1f} s") from None


# How long the budget's 503 waits for each backend's ping before naming it as down (the pings
# start that long before the budget ends), and how often the end is looked at until then.
PROBE_TIMEOUT_S = 1.0
PROBE_POLL_S = 0.25

Probes = dict[str, Callable[[], Awaitable[Any]]]


def _forget(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so a late failure is not reported as never retrieved


async def down_backends(probes: Probes, timeout_s: float = PROBE_TIMEOUT_S) -> list[str]:
    """The names of the probed backends that fail, answer False, or not within `timeout_s`.

    A ping still running at `timeout_s` is cancelled and not waited for: a driver that takes
    seconds to give up on an unreachable server (server selection) must not hold the 503."""
    tasks = {name: asyncio.ensure_future(probe()) for name, probe in probes.items()}
    if not tasks:
        return []
    _, pending = await asyncio.wait(tasks.values(), timeout=timeout_s)
    down = []
    for name, task in tasks.items():
        if task in pending:
            task.add_done_callback(_forget)
            task.cancel()
            down.append(name)
        elif task.exception() is not None or task.result() is False:
            down.append(name)
    return down


def extend_deadline(seconds: float) -> None:
    """This request may take `seconds` from now (a query's `timeout_s`) instead of the default budget."""
    budget = _budget.get()
    if budget is not None:
        budget.reschedule(asyncio.get_running_loop().time() + seconds)


async def follow_client_timeout(request: Request) -> None:
    """The app's first dependency: a JSON request naming its own `timeout_s` (a query) has that
    budget from the start, the API key's lookup in the store included (the route repeats it)."""
    if not request.headers.get("content-type", "").startswith("application/json"):
        return
    body = await request.body()  # read once by FastAPI already: this is its cached copy
    if b'"timeout_s"' not in body:
        return
    try:
        fields = json.loads(body)
    except ValueError:
        return  # the route answers 422
    timeout_s = fields.get("timeout_s") if isinstance(fields, dict) else None
    if isinstance(timeout_s, int | float) and not isinstance(timeout_s, bool) and 0 < timeout_s <= QUERY_TIMEOUT_MAX_S:
        extend_deadline(timeout_s)


CLIENT_TIMEOUT = Depends(follow_client_timeout)


class RequestBudget:
    """ASGI middleware: the request's handler runs within its budget, restarted by each body chunk."""

    def __init__(self, app: ASGIApp, timeout_s: float, retry_after_s: int, probes: Callable[[], Probes]) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self.probes = probes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        started = False

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        probing: asyncio.Task[list[str]] | None = None
        try:
            async with asyncio.timeout_at(loop.time() + self.timeout_s) as budget:
                async def timed_receive() -> Message:
                    message = await receive()
                    budget.reschedule(loop.time() + self.timeout_s)  # a body still coming is not an outage
                    return message

                probing = asyncio.create_task(self._probe_before_end(budget))
                token = _budget.set(budget)
                try:
                    await self.app(scope, timed_receive, tracked_send)
                finally:
                    _budget.reset(token)
        except TimeoutError:
            if started:
                raise
            budget_text = f"the request's budget (a query's timeout_s, else TREERAG_REQUEST_TIMEOUT_S = {self.timeout_s:g} s)"
            down = await probing if probing is not None else []
            logger.warning("request over its time budget",
                           extra={"fields": {"path": scope.get("path"), "down": down}})
            if down:
                response = unavailable_response(" and ".join(down), f"did not answer within {budget_text}",
                                                self.retry_after_s)
            else:
                response = unavailable_response(
                    "the gateway", f"did not finish within {budget_text}, while Kafka and MongoDB answer",
                    self.retry_after_s)
            await response(scope, receive, send)
        finally:
            if probing is not None and not probing.done():
                probing.cancel()

    async def _probe_before_end(self, budget: asyncio.Timeout) -> list[str]:
        """The backends that are down, pinged `PROBE_TIMEOUT_S` before the budget ends (wherever
        it has been moved to meanwhile), so a 503 naming them still comes within the budget."""
        loop = asyncio.get_running_loop()
        while True:
            end = budget.when()
            if end is None:
                return []
            wait = end - PROBE_TIMEOUT_S - loop.time()
            if wait <= 0:
                return await down_backends(self.probes(), PROBE_TIMEOUT_S)
            # In steps: a query's handler moves its budget (`extend_deadline`), sooner or later.
            await asyncio.sleep(min(wait, PROBE_POLL_S))


def install_outage_handling(app: FastAPI, settings: Settings, probes: Callable[[], Probes]) -> None:
    """Added right after the body limits: the budget covers the route and its body parsing.
    `probes()`: a ping per backend by name, tried when a request runs over its budget."""
    retry_after_s = max(1, round(settings.retry_after_s))

    @app.exception_handler(BackendUnavailable)
    async def backend_unavailable(_: Request, exc: BackendUnavailable) -> JSONResponse:
        logger.warning("backend unavailable", extra={"fields": {"backend": exc.backend, "why": exc.why}})
        return unavailable_response(exc.backend, exc.why, retry_after_s)

    @app.exception_handler(ConnectionFailure)
    async def mongo_down(_: Request, exc: ConnectionFailure) -> JSONResponse:
        logger.warning("MongoDB unreachable", extra={"fields": {"error": type(exc).__name__}})
        return unavailable_response("MongoDB", "is unreachable", retry_after_s)

    @app.exception_handler(KafkaConnectionError)
    @app.exception_handler(KafkaTimeoutError)
    async def kafka_down(_: Request, exc: Exception) -> JSONResponse:
        logger.warning("Kafka unreachable", extra={"fields": {"error": type(exc).__name__}})
        return unavailable_response("Kafka", "is unreachable", retry_after_s)

    app.add_middleware(RequestBudget, timeout_s=settings.request_timeout_s, retry_after_s=retry_after_s,
                       probes=probes)
