"""The pipeline page's numbers per stage, read from Prometheus with the dashboards' own queries,
for those who run without Grafana (`TREERAG_PROMETHEUS_URL`; `make up` sets it)."""

from __future__ import annotations

import logging
import math
from typing import Literal, Protocol

import httpx
from fastapi import APIRouter
from pydantic import BaseModel, Field

from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_responses

logger = logging.getLogger(__name__)

# The Grafana panels' expressions (deploy/grafana/dashboards), with fixed windows.
STAGE_QUERIES = {
    "messages_per_s": "sum by (stage) (rate(treerag_messages_consumed_total[1m]))",
    "consumer_lag": "sum by (stage) (treerag_consumer_lag)",
    "failures_15m": "sum by (stage) (increase(treerag_failures_total[15m]))",
    "dead_letters_15m": "sum by (stage) (increase(treerag_dlq_messages_total[15m]))",
    "handler_p95_s": "histogram_quantile(0.95, sum by (stage, le) (rate(treerag_handler_seconds_bucket[5m])))",
    "queue_p95_s": "histogram_quantile(0.95, sum by (stage, le) (rate(treerag_queue_seconds_bucket[5m])))",
}
PROMETHEUS_TIMEOUT_S = 3.0


class MetricsReader(Protocol):
    """Instant queries: (labels, value) of each series."""

    async def query(self, expr: str) -> list[tuple[dict[str, str], float]]: ...


class PrometheusUnavailable(ConnectionError):
    """Prometheus could not answer a query."""


class PrometheusReader:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    async def query(self, expr: str) -> list[tuple[dict[str, str], float]]:
        try:
            async with httpx.AsyncClient(timeout=PROMETHEUS_TIMEOUT_S) as client:
                response = await client.get(f"{self.url}/api/v1/query", params={"query": expr})
                response.raise_for_status()
                body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise PrometheusUnavailable(f"Prometheus at {self.url} did not answer: {exc}") from exc
        if body.get("status") != "success":
            raise PrometheusUnavailable(f"Prometheus at {self.url} refused the query: {body.get('error')}")
        return [(series["metric"], float(series["value"][1])) for series in body["data"]["result"]]


class StageFigures(BaseModel):
    stage: str
    messages_per_s: float | None = Field(default=None, description="Messages consumed per second (last minute).")
    consumer_lag: float | None = Field(default=None, description="Messages waiting in its topics' partitions.")
    failures_15m: float | None = None
    dead_letters_15m: float | None = None
    handler_p95_s: float | None = Field(default=None, description="95th percentile of handling a message (5 min).")
    queue_p95_s: float | None = Field(default=None, description="95th percentile of a message's wait on the bus.")


class PipelineOut(BaseModel):
    source: Literal["prometheus", "unavailable"]
    detail: str = ""
    stages: list[StageFigures] = Field(default_factory=list)


async def pipeline_figures(reader: MetricsReader | None) -> PipelineOut:
    if reader is None:
        return PipelineOut(source="unavailable", detail="no Prometheus is configured (TREERAG_PROMETHEUS_URL)")
    figures: dict[str, dict[str, float]] = {}
    try:
        for name, expr in STAGE_QUERIES.items():
            for labels, value in await reader.query(expr):
                stage = labels.get("stage")
                if stage and math.isfinite(value):
                    figures.setdefault(stage, {})[name] = value
    except PrometheusUnavailable as exc:
        logger.warning("pipeline figures unavailable", extra={"error": str(exc)})
        return PipelineOut(source="unavailable", detail=str(exc))
    return PipelineOut(source="prometheus",
                       stages=[StageFigures(stage=stage, **values) for stage, values in sorted(figures.items())])


def pipeline_router(reader: MetricsReader | None) -> APIRouter:
    """The figures cover every tenant: admin keys only."""
    router = APIRouter(tags=["ops"])

    @router.get("/v1/pipeline", response_model=PipelineOut, summary="Per-stage throughput, lag and failures",
                responses=error_responses(*KEYED, 403))
    async def get_pipeline_figures(who: CallerDep) -> PipelineOut:
        return await pipeline_figures(reader)

    return router
