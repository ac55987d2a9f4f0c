"""The pipeline page's per-stage figures: the dashboards' queries, grouped by stage; an absent or
failing Prometheus is said in words, never an error page."""

from __future__ import annotations

import math

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from services.gateway.auth import install_auth
from services.gateway.web.pipeline import STAGE_QUERIES, PrometheusReader, PrometheusUnavailable, pipeline_router
from shared.settings import Settings
from tests.support.fakes import FakeKeyStore


class FakePrometheus:
    def __init__(self, series: dict[str, list[tuple[dict[str, str], float]]], fail: bool = False) -> None:
        self.series = series
        self.fail = fail
        self.asked: list[str] = []

    async def query(self, expr: str) -> list[tuple[dict[str, str], float]]:
        self.asked.append(expr)
        if self.fail:
            raise PrometheusUnavailable("Prometheus at http://127.0.0.1:1 did not answer: refused")
        return self.series.get(expr, [])


def client(reader: FakePrometheus | None) -> TestClient:
    app = FastAPI()
    install_auth(app, Settings(auth="off"), FakeKeyStore)
    app.include_router(pipeline_router(reader))
    return TestClient(app)


def test_each_stage_gets_its_throughput_lag_failures_and_latencies() -> None:
    reader = FakePrometheus({
        STAGE_QUERIES["messages_per_s"]: [({"stage": "indexer"}, 0.5), ({"stage": "navigator"}, 12.0)],
        STAGE_QUERIES["consumer_lag"]: [({"stage": "navigator"}, 40.0)],
        STAGE_QUERIES["failures_15m"]: [({"stage": "indexer"}, 2.0)],
        STAGE_QUERIES["handler_p95_s"]: [({"stage": "navigator"}, 0.02), ({"stage": "indexer"}, math.nan)],
    })
    body = client(reader).get("/v1/pipeline").json()
    assert body["source"] == "prometheus"
    stages = {s["stage"]: s for s in body["stages"]}
    assert stages["navigator"]["messages_per_s"] == 12.0
    assert stages["navigator"]["consumer_lag"] == 40.0
    assert stages["navigator"]["handler_p95_s"] == 0.02
    assert stages["indexer"]["failures_15m"] == 2.0
    assert stages["indexer"]["handler_p95_s"] is None  # no handled message in the window: no number
    assert sorted(reader.asked) == sorted(STAGE_QUERIES.values())


@pytest.mark.parametrize("reader", [None, FakePrometheus({}, fail=True)], ids=["not configured", "unreachable"])
def test_without_prometheus_the_page_is_told_why(reader: FakePrometheus | None) -> None:
    response = client(reader).get("/v1/pipeline")
    assert response.status_code == 200
    body = response.json()
    assert body["source"] == "unavailable" and body["stages"] == []
    assert "TREERAG_PROMETHEUS_URL" in body["detail"] or "did not answer" in body["detail"]


async def test_the_reader_says_which_prometheus_did_not_answer() -> None:
    with pytest.raises(PrometheusUnavailable, match="127.0.0.1:9"):
        await PrometheusReader("http://127.0.0.1:9/").query("up")
