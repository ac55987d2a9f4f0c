"""`POST /v1/query` (wait for the verified answer, or 202 and poll) and `GET /v1/queries/{id}`."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from services.gateway.asking import Question, StagesMissing, ask, pending_record, publish
from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_responses, shortened
from services.gateway.outages import extend_deadline, unavailable_response
from services.gateway.ports import Gateway, GatewayDep
from services.gateway.schemas import QueryAccepted, QueryRequest, QueryResponse
from services.gateway.streaming import EVENT_STREAM, stream, wants_events
from shared.adapters.logs import correlated, log_fields
from shared.app.documents import query_documents
from shared.model.query_records import QueryRecord, QueryStatus

logger = logging.getLogger(__name__)

router = APIRouter(tags=["queries"], responses=error_responses(*KEYED))

# The refusals of a question over the caller's documents (a query, a chat's turn, a completion).
ASKING_ERRORS = error_responses(404, 409, 413, 422, meanings={
    404: "A document the question names is not found for the caller's tenant.",
    409: "A document it names is not ready (its failure reason, when it failed), or none is ready to ask over.",
})


def answered(pending: QueryRecord, finished: QueryRecord | None, total_ms: float) -> Any:
    """The response to a query waited for: 200 answered, 502 failed, 504 when no answer came."""
    if finished is None:
        logger.warning("query timed out", extra=log_fields(total_ms=total_ms))
        return JSONResponse(QueryResponse.of(pending, total_ms=total_ms).model_dump(mode="json"), status_code=504)
    response = QueryResponse.of(finished, total_ms=total_ms)
    logger.info("query answered", extra=log_fields(status=response.status.value, total_ms=total_ms))
    if finished.status == QueryStatus.FAILED:
        return JSONResponse(response.model_dump(mode="json"), status_code=502)
    return response


def stages_missing(gateway: Gateway, exc: StagesMissing) -> JSONResponse:
    # Refused now, not after the whole timeout. (An async query is still accepted: it waits in
    # Kafka for the stage to come back.)
    settings = gateway.settings
    return unavailable_response(str(exc), f"has no live process (no heartbeat within {settings.heartbeat_ttl_s:g} s)",
                                max(1, round(settings.retry_after_s)), query_id=exc.query_id)


def outcome_of(pending: QueryRecord, finished: QueryRecord | None, total_ms: float) -> tuple[int, dict[str, Any]]:
    status = 504 if finished is None else 502 if finished.status == QueryStatus.FAILED else 200
    return status, QueryResponse.of(finished or pending, total_ms=total_ms).model_dump(mode="json")


@router.post(
    "/v1/query",
    response_model=QueryResponse,
    name="ask",
    responses={200: {"content": {EVENT_STREAM: {}}, "description": "The verified answer; with `Accept: "
                     "text/event-stream`, events: accepted, routed, one sentence per answer sentence as "
                     "soon as it is checked, then answer (or error)."},
               202: {"model": QueryAccepted}, 502: {"model": QueryResponse}, 504: {"model": QueryResponse},
               **ASKING_ERRORS},
)
async def query(req: QueryRequest, request: Request, caller: CallerDep, gateway: GatewayDep) -> Any:
    started = time.perf_counter()
    timeout_s = req.timeout_s or gateway.settings.query_timeout_s
    extend_deadline(timeout_s)  # a 503 or 504 within the client's timeout, never later
    # The request validated the settings within their bounds (422 otherwise): nothing that
    # reaches the bus can fail a stage for its values.
    settings = req.settings.model_copy(update={"mode": req.mode}) if req.mode else req.settings
    doc_ids = await query_documents(gateway.documents, req.doc_ids, caller.tenant)
    question = Question(text=req.question, doc_ids=doc_ids, settings=settings, tenant=caller.tenant,
                        timeout_s=timeout_s, deadline=not req.run_async or req.timeout_s is not None,
                        progress=wants_events(request) and not req.run_async, started=started)
    with correlated(query_id=question.query_id):
        if req.run_async:
            await publish(gateway, question, pending_record(question))
            return JSONResponse(QueryAccepted(query_id=question.query_id, status=QueryStatus.PENDING)
                                .model_dump(mode="json"), status_code=202)
        if wants_events(request):
            async def answer() -> tuple[int, dict[str, Any]]:
                pending, finished = await ask(gateway, question)
                return outcome_of(pending, finished, round((time.perf_counter() - started) * 1000, 3))

            return stream({"query_id": question.query_id, "question": question.text, "doc_ids": doc_ids}, answer,
                          progress=gateway.progress)
        try:
            pending, finished = await ask(gateway, question)
        except StagesMissing as exc:
            return stages_missing(gateway, exc)
        return answered(pending, finished, round((time.perf_counter() - started) * 1000, 3))


@router.get("/v1/queries/{query_id}", response_model=QueryResponse, responses=error_responses(404))
async def get_query(query_id: str, caller: CallerDep, gateway: GatewayDep) -> QueryResponse:
    record = gateway.deleted.withdrawn(await gateway.queries.get(query_id))
    if record is None or record.tenant != caller.tenant:
        raise HTTPException(404, f"no query {shortened(query_id, 64)!r}")
    return QueryResponse.of(record)
