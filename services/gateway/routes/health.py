"""Probes and metrics: `/healthz` (the process answers), `/readyz` (its backends and every
required stage are there) and `/metrics` (admin key)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_body, error_responses
from services.gateway.outages import BackendUnavailable
from services.gateway.readiness import readiness
from shared.adapters.metrics import render_metrics
from shared.settings import Settings

router = APIRouter(tags=["ops"])

READY_KAFKA_TIMEOUT_S = 3.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", responses=error_responses(503, meanings={503: "Not ready: an `ErrorBody` whose `unavailable` "
                                   "names what is missing, beside the readiness report (`ready`, `checks`, `stages`, "
                                   "`missing`) a 200 gives."}))
async def readyz(request: Request) -> JSONResponse:
    """200 when MongoDB, Kafka and a live process of each required stage are there; 503 naming
    what is missing otherwise."""
    settings: Settings = request.app.state.settings
    gateway = getattr(request.app.state, "gateway", None)

    async def starting() -> bool:
        raise BackendUnavailable("the gateway", "is starting")

    if gateway is None:
        ready, body = await readiness(settings, starting, starting, None)
    else:
        ready, body = await readiness(settings, gateway.documents.ping,
                                      lambda: gateway.ping_kafka(READY_KAFKA_TIMEOUT_S), gateway.heartbeats)
    if ready:
        return JSONResponse(body)
    missing = ", ".join(body["missing"])
    return JSONResponse({**error_body(503, f"not ready: {missing}", "not_ready", unavailable=missing), **body},
                        status_code=503)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
                       **error_responses(*KEYED, 403)})
async def get_metrics(caller: CallerDep) -> Response:
    body, content_type = render_metrics()
    return Response(body, media_type=content_type)
