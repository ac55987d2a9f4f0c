"""Probes and metrics: `/healthz` (the process answers), `/readyz` (its backends and every
required stage are there) and `/metrics` (admin key)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from services.gateway.auth import CallerDep, require_admin
from services.gateway.outages import BackendUnavailable
from services.gateway.readiness import readiness
from shared.adapters.metrics import render_metrics
from shared.settings import Settings

router = APIRouter(tags=["ops"])

READY_KAFKA_TIMEOUT_S = 3.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "Not ready: `missing` names what is down."}})
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
    return JSONResponse(body, status_code=200 if ready else 503)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
async def metrics(caller: CallerDep) -> Response:
    require_admin(caller)
    body, content_type = render_metrics()
    return Response(body, media_type=content_type)
